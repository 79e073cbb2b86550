import { describe, expect, it } from 'vitest';
import { lsn } from '../../core/units.js';
import { AppliedTracker } from '../../projections/applied-tracker.js';

// Every durable write waits on the applied LSN (read-your-writes): each waiter must wake exactly
// when its LSN is applied, whatever the order it asked in, and a failed projection must reject them.
describe('AppliedTracker.waitFor', () => {
  it('wakes each waiter once its LSN is applied, in any order of asking, and never before', async () => {
    const tracker = new AppliedTracker(lsn(3));
    const woken: number[] = [];
    const wait = (n: number) => tracker.waitFor(lsn(n)).then(() => woken.push(n));
    const all = [wait(7), wait(5), wait(9), wait(5), wait(2), wait(6)];
    await Promise.resolve();
    await Promise.resolve();
    expect(woken).toEqual([2]);
    tracker.advance(lsn(5));
    await new Promise((resolve) => setImmediate(resolve));
    expect(woken.sort()).toEqual([2, 5, 5]);
    tracker.advance(lsn(4)); // never backwards
    expect(tracker.lsn).toBe(5);
    tracker.advance(lsn(8));
    await new Promise((resolve) => setImmediate(resolve));
    expect(woken.sort()).toEqual([2, 5, 5, 6, 7]);
    tracker.advance(lsn(9));
    await Promise.all(all);
    expect(woken.sort()).toEqual([2, 5, 5, 6, 7, 9]);
  });

  it('rejects waiters still pending when the projection fails, and later ones at once', async () => {
    const tracker = new AppliedTracker(lsn(1));
    const codeOf = (p: Promise<void>) =>
      p.then(
        () => 'resolved',
        (error: { code: string }) => error.code,
      );
    const pending = codeOf(tracker.waitFor(lsn(4)));
    const done = tracker.waitFor(lsn(1));
    tracker.fail(new Error('disk gone'));
    await expect(done).resolves.toBeUndefined();
    expect(await pending).toBe('STORAGE_UNAVAILABLE');
    expect(await codeOf(tracker.waitFor(lsn(5)))).toBe('STORAGE_UNAVAILABLE');
  });
});

// Reads behind the read barrier wait here within their statement's deadline and cancel signal
// (projections/read-barrier.ts): a wait that gives up must say so and leave no waiter behind.
describe('AppliedTracker.waitWithin', () => {
  const farMs = () => Date.now() + 60_000;

  it('resolves true once the LSN is applied, at once when it is', async () => {
    const tracker = new AppliedTracker(lsn(3));
    expect(await tracker.waitWithin(lsn(3), farMs(), undefined)).toBe(true);
    const pending = tracker.waitWithin(lsn(5), farMs(), new AbortController().signal);
    expect(tracker.waiting).toBe(1);
    tracker.advance(lsn(5));
    expect(await pending).toBe(true);
    expect(tracker.waiting).toBe(0);
  });

  it('resolves false once the deadline passed, and drops its waiter (others stay and wake)', async () => {
    const tracker = new AppliedTracker(lsn(1));
    const other = tracker.waitFor(lsn(4));
    const started = Date.now();
    const gaveUp = tracker.waitWithin(lsn(4), Date.now() + 30, undefined);
    expect(tracker.waiting).toBe(2);
    expect(await gaveUp).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(29);
    expect(tracker.waiting).toBe(1);
    tracker.advance(lsn(4));
    await expect(other).resolves.toBeUndefined();
    expect(tracker.waiting).toBe(0);
  });

  it('resolves false once the signal aborts, and drops its waiter; a signal aborted or a deadline passed before: false at once, no waiter', async () => {
    const tracker = new AppliedTracker(lsn(1));
    const cancel = new AbortController();
    const gaveUp = tracker.waitWithin(lsn(9), farMs(), cancel.signal);
    expect(tracker.waiting).toBe(1);
    cancel.abort();
    expect(await gaveUp).toBe(false);
    expect(tracker.waiting).toBe(0);
    expect(await tracker.waitWithin(lsn(9), farMs(), cancel.signal)).toBe(false);
    expect(await tracker.waitWithin(lsn(9), Date.now() - 1, undefined)).toBe(false);
    expect(tracker.waiting).toBe(0);
  });

  it('a thousand waits given up leave nothing behind; an advance after them wakes only the rest', async () => {
    const tracker = new AppliedTracker(lsn(1));
    const cancels = Array.from({ length: 1000 }, () => new AbortController());
    const waits = cancels.map((cancel, i) => tracker.waitWithin(lsn(2 + (i % 7)), farMs(), cancel.signal));
    const kept = tracker.waitWithin(lsn(5), farMs(), undefined);
    expect(tracker.waiting).toBe(1001);
    for (const cancel of cancels) cancel.abort();
    expect(new Set(await Promise.all(waits))).toEqual(new Set([false]));
    expect(tracker.waiting).toBe(1);
    tracker.advance(lsn(10));
    expect(await kept).toBe(true);
    expect(tracker.waiting).toBe(0);
  });

  it('rejects when the projection fails while it waits', async () => {
    const tracker = new AppliedTracker(lsn(1));
    const pending = tracker.waitWithin(lsn(4), farMs(), new AbortController().signal);
    tracker.fail(new Error('disk gone'));
    await expect(pending).rejects.toMatchObject({ code: 'STORAGE_UNAVAILABLE' });
    expect(tracker.waiting).toBe(0);
    await expect(tracker.waitWithin(lsn(4), farMs(), undefined)).rejects.toMatchObject({ code: 'STORAGE_UNAVAILABLE' });
  });
});
