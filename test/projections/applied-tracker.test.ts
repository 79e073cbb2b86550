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
