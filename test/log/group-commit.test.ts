import { open } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openLog } from '../../log/index.js';
import { LOG_LIMITS } from '../../log/limits.js';
import { logOptions, makeTempDir, payloadFor, readAll, removeTempDir } from './helpers.js';

describe('group commit', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeTempDir();
  });
  afterEach(async () => {
    await removeTempDir(dir);
  });

  it('200 concurrent appends share few fdatasyncs, get LSNs in call order and all become durable', async () => {
    const log = await openLog(logOptions(dir));
    const results = Array.from({ length: 200 }, (_, i) => log.append(payloadFor(i + 1, 100)));
    expect(results.map((r) => r.lsn)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(log.headLsn).toBe(200);
    await Promise.all(results.map((r) => r.durable));
    expect(log.durableLsn).toBe(200);
    const stats = log.stats();
    expect(stats.appendCount).toBe(200);
    expect(stats.fsyncCount).toBeGreaterThan(0);
    expect(stats.fsyncCount).toBeLessThanOrEqual(5);
    expect(stats.flushCount).toBeLessThanOrEqual(5);
    const entries = await readAll(log);
    expect(entries.map((e) => e.lsn)).toEqual(results.map((r) => r.lsn));
    entries.forEach((e) => expect(Buffer.from(e.payload).equals(payloadFor(e.lsn, 100))).toBe(true));
    await log.close();
  });

  it('appends made while a flush is in flight form the next batch (leader/follower)', async () => {
    const log = await openLog(logOptions(dir));
    // 64 writers that each append, await durability, and append again.
    const writers = Array.from({ length: 64 }, async () => {
      for (let i = 0; i < 10; i++) await log.append(payloadFor(i, 256)).durable;
    });
    await Promise.all(writers);
    const stats = log.stats();
    expect(stats.appendCount).toBe(640);
    // Each writer waits for its own fsync, so there are at least 10 rounds; far fewer than 640.
    expect(stats.fsyncCount).toBeGreaterThanOrEqual(10);
    expect(stats.fsyncCount).toBeLessThan(100);
    await log.close();
  });

  it('with a batch written while the previous one syncs, acknowledges in LSN order and only what is durable', async () => {
    const log = await openLog(logOptions(dir));
    const acknowledged: number[] = [];
    const early: string[] = [];
    // 40 writers whose next appends are spread over event-loop turns: batches form while another one syncs.
    const writers = Array.from({ length: 40 }, async (_, w) => {
      for (let i = 0; i < 8; i++) {
        const { lsn, durable } = log.append(payloadFor(w * 100 + i, 128));
        await durable;
        if (log.durableLsn < lsn) early.push(`lsn ${lsn} acknowledged at durable ${log.durableLsn}`);
        acknowledged.push(lsn);
        for (let turn = (w * 7 + i * 3) % 4; turn > 0; turn--) await new Promise((resolve) => setImmediate(resolve));
      }
    });
    await Promise.all(writers);
    expect(early).toEqual([]);
    // Batches are acknowledged oldest first (in a batch, writers resume in append order): LSN order.
    expect(acknowledged).toEqual(Array.from({ length: 320 }, (_, i) => i + 1));
    await log.close();
    const reopened = await openLog(logOptions(dir));
    expect(reopened.headLsn).toBe(320);
    expect((await readAll(reopened)).length).toBe(320);
    await reopened.close();
  });

  it('an fdatasync that fails while the next batch is written fails that batch too: nothing after it is durable', async () => {
    // The disk's answers are injected at node:fs's FileHandle (the OS boundary), not in the log's own code.
    const probe = await open(path.join(dir, 'probe'), 'w');
    const handle = Object.getPrototypeOf(probe) as { writev: (...a: unknown[]) => Promise<unknown>; datasync: () => Promise<void> };
    await probe.close();
    const { writev, datasync } = handle;
    let writes = 0;
    let syncs = 0;
    const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
    const log = await openLog(logOptions(dir));
    const seen: number[] = [];
    log.durableLsn$.subscribe((lsn) => seen.push(lsn));
    try {
      handle.writev = async function (this: unknown, ...args: unknown[]) {
        // The second batch's write is slow: the first batch's fdatasync fails meanwhile.
        if (++writes === 2) await sleep(100);
        return writev.apply(this, args);
      };
      handle.datasync = async function (this: unknown) {
        if (++syncs === 1) {
          await sleep(30);
          throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
        }
        // A later fdatasync succeeds, as one on another descriptor may after the error was reported once.
        return datasync.apply(this);
      };
      const a = log.append(payloadFor(1, 64));
      await sleep(5);
      const b = log.append(payloadFor(2, 64));
      const outcomes = await Promise.all(
        [a.durable, b.durable].map((d) =>
          d.then(
            () => 'durable',
            () => 'failed',
          ),
        ),
      );
      await sleep(150);
      expect(outcomes).toEqual(['failed', 'failed']);
      expect(log.durableLsn).toBe(0);
      expect(seen.every((lsn) => lsn === 0)).toBe(true);
    } finally {
      handle.writev = writev;
      handle.datasync = datasync;
      await log.close().catch(() => undefined);
    }
  });

  it('a batch above inlineWriteBytesMax is written in the thread pool (small ones inline); a failed fdatasync meanwhile fails it too', async () => {
    const probe = await open(path.join(dir, 'probe'), 'w');
    const handle = Object.getPrototypeOf(probe) as { writev: (...a: unknown[]) => Promise<unknown>; datasync: () => Promise<void> };
    await probe.close();
    const { writev, datasync } = handle;
    let threadPoolWrites = 0;
    let syncs = 0;
    const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
    // Segments big enough for both batches: no roll between them (a roll waits for the earlier fdatasync).
    const big = { segmentSizeBytesMax: 4 * LOG_LIMITS.inlineWriteBytesMax };
    const log = await openLog(logOptions(dir, big));
    try {
      handle.writev = async function (this: unknown, ...args: unknown[]) {
        // Only the big batch comes here: slow, while the first batch's fdatasync fails.
        threadPoolWrites += 1;
        await sleep(100);
        return writev.apply(this, args);
      };
      handle.datasync = async function (this: unknown) {
        if (++syncs === 1) {
          await sleep(30);
          throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
        }
        return datasync.apply(this);
      };
      const a = log.append(payloadFor(1, 64));
      await sleep(5);
      const b = log.append(payloadFor(2, LOG_LIMITS.inlineWriteBytesMax + 1024));
      const outcomes = await Promise.all(
        [a.durable, b.durable].map((d) =>
          d.then(
            () => 'durable',
            () => 'failed',
          ),
        ),
      );
      expect(outcomes).toEqual(['failed', 'failed']);
      expect(threadPoolWrites).toBe(1);
      expect(log.durableLsn).toBe(0);
    } finally {
      handle.writev = writev;
      handle.datasync = datasync;
      await log.close().catch(() => undefined);
    }
    // Small and big batches alike land whole: reopened, the log reads back what was appended.
    const reopened = await openLog(logOptions(dir, big));
    const payloads = [payloadFor(3, 64), payloadFor(4, LOG_LIMITS.inlineWriteBytesMax + 1), payloadFor(5, 200)];
    const appended = payloads.map((payload) => reopened.append(payload));
    await Promise.all(appended.map((x) => x.durable));
    const read = await readAll(reopened, appended[0]!.lsn);
    expect(read.map((entry) => Buffer.from(entry.payload))).toEqual(payloads);
    await reopened.close();
  });

  it('appends made while every fdatasync slot is busy join the batch written when one frees (not the batch after it)', async () => {
    // The disk's answers are held at node:fs's FileHandle (the OS boundary), not in the log's own code.
    const probe = await open(path.join(dir, 'probe'), 'w');
    const handle = Object.getPrototypeOf(probe) as { datasync: () => Promise<void> };
    await probe.close();
    const { datasync } = handle;
    const releases: (() => void)[] = [];
    let holding = true;
    const turns = async (count: number): Promise<void> => {
      for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
    };
    // Segments big enough for every record: no roll (a roll waits for the held fdatasyncs).
    const log = await openLog(logOptions(dir, { segmentSizeBytesMax: 4 * LOG_LIMITS.inlineWriteBytesMax }));
    try {
      handle.datasync = async function (this: unknown) {
        if (holding) await new Promise<void>((resolve) => releases.push(resolve));
        return datasync.apply(this);
      };
      const first = log.append(payloadFor(1, 64));
      await turns(3);
      const second = log.append(payloadFor(2, 64));
      await turns(3);
      expect(releases.length).toBe(LOG_LIMITS.syncsInFlightMax);
      // Every slot busy: these two wait, in different turns of the event loop.
      const third = log.append(payloadFor(3, 64));
      await turns(3);
      const fourth = log.append(payloadFor(4, 64));
      await turns(3);
      const { flushCount, bytesWritten } = log.stats();
      expect(flushCount).toBe(2);
      releases.shift()!();
      await first.durable;
      await turns(3);
      // One batch holds both: one write, one more fdatasync (before: the third alone, the fourth waiting for the next slot).
      expect(log.stats().flushCount).toBe(3);
      expect(log.stats().bytesWritten).toBe(2 * bytesWritten);
      expect(releases.length).toBe(2);
      holding = false;
      while (releases.length > 0) releases.shift()!();
      await Promise.all([second.durable, third.durable, fourth.durable]);
      expect(log.durableLsn).toBe(4);
      expect(log.stats().flushCount).toBe(3);
    } finally {
      holding = false;
      handle.datasync = datasync;
      for (const release of releases) release();
      await log.close();
    }
    const reopened = await openLog(logOptions(dir, { segmentSizeBytesMax: 4 * LOG_LIMITS.inlineWriteBytesMax }));
    const read = await readAll(reopened);
    expect(read.map((entry) => Buffer.from(entry.payload))).toEqual([1, 2, 3, 4].map((i) => payloadFor(i, 64)));
    await reopened.close();
  });

  it('whenWritten resolves once the record is written and its fdatasync started, before it is durable; at once after a failure or close', async () => {
    const probe = await open(path.join(dir, 'probe'), 'w');
    const handle = Object.getPrototypeOf(probe) as { datasync: () => Promise<void> };
    await probe.close();
    const { datasync } = handle;
    const events: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // Segments big enough for every record: no roll (a roll waits for the held fdatasync).
    const log = await openLog(logOptions(dir, { segmentSizeBytesMax: 4 * LOG_LIMITS.inlineWriteBytesMax }));
    try {
      handle.datasync = async function (this: unknown) {
        events.push('fdatasync started');
        await held;
        return datasync.apply(this);
      };
      const first = log.append(payloadFor(1, 64));
      const big = log.append(payloadFor(2, LOG_LIMITS.inlineWriteBytesMax + 1024));
      void first.durable.then(() => events.push('durable'));
      await log.whenWritten!(big.lsn);
      events.push('written');
      expect(log.durableLsn).toBe(0);
      release();
      await big.durable;
      expect(events).toEqual(['fdatasync started', 'written', 'durable']);
      // Written already: at once.
      await log.whenWritten!(first.lsn);
    } finally {
      handle.datasync = datasync;
    }
    handle.datasync = async function () {
      throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
    };
    try {
      const failing = log.append(payloadFor(3, 64));
      const next = log.append(payloadFor(4, 64));
      await expect(failing.durable).rejects.toMatchObject({ code: 'STORAGE_UNAVAILABLE' });
      // The log failed: a waiter for a record it will never write is not left hanging.
      await log.whenWritten!(next.lsn);
      await log.whenWritten!((next.lsn + 10) as typeof next.lsn);
    } finally {
      handle.datasync = datasync;
      await log.close().catch(() => undefined);
    }
  });

  it('interval durability resolves after the write and fdatasyncs on the timer; sync() forces it', async () => {
    const log = await openLog(logOptions(dir, { durability: 'interval', fsyncIntervalMs: 20 }));
    const results = Array.from({ length: 50 }, (_, i) => log.append(payloadFor(i + 1, 64)));
    await Promise.all(results.map((r) => r.durable));
    expect(log.durableLsn).toBe(50);
    const before = log.stats().fsyncCount;
    // The timer's fdatasync itself, however late a loaded machine runs the timer.
    await vi.waitFor(() => expect(log.stats().fsyncCount).toBeGreaterThan(before), { timeout: 30_000, interval: 10 });
    log.append(payloadFor(51, 64));
    await log.sync();
    expect(log.durableLsn).toBe(51);
    await log.close();
    const reopened = await openLog(logOptions(dir, { durability: 'interval' }));
    expect(reopened.headLsn).toBe(51);
    await reopened.close();
  });

  it('sync() in commit mode waits for everything appended so far', async () => {
    const log = await openLog(logOptions(dir));
    for (let i = 1; i <= 20; i++) log.append(payloadFor(i, 10));
    await log.sync();
    expect(log.durableLsn).toBe(20);
    await log.close();
  });
});
