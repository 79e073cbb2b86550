import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lsn } from '../../core/units.js';
import { openLog, type Log, type LogEntry, type LogOptions } from '../../log/index.js';
import { LOG_LIMITS } from '../../log/limits.js';
import { TailCache } from '../../log/tail-cache.js';
import { logOptions, makeTempDir, payloadFor, readAll, removeTempDir } from './helpers.js';

const bytes = (entries: readonly LogEntry[]): string[] => entries.map((e) => Buffer.from(e.payload).toString('hex'));

describe('TailCache', () => {
  it('keeps the newest records within its byte bound, in LSN order', () => {
    const cache = new TailCache(10);
    cache.add(lsn(1), [Buffer.alloc(4, 1), Buffer.alloc(4, 2)]);
    cache.add(lsn(3), [Buffer.alloc(4, 3)]);
    expect([cache.first, cache.last]).toEqual([2, 3]);
    expect(cache.get(1)).toBeUndefined();
    expect(cache.get(2)?.[0]).toBe(2);
    expect(cache.get(3)?.[0]).toBe(3);
    expect(cache.get(4)).toBeUndefined();
  });

  it('starts over after a gap, and keeps no record bigger than its bound', () => {
    const cache = new TailCache(10);
    cache.add(lsn(1), [Buffer.alloc(4)]);
    cache.add(lsn(5), [Buffer.alloc(4, 5)]);
    expect([cache.first, cache.last]).toEqual([5, 5]);
    cache.add(lsn(6), [Buffer.alloc(11)]);
    expect([cache.first, cache.last]).toEqual([null, null]);
    expect(cache.get(5)).toBeUndefined();
    cache.add(lsn(7), [Buffer.alloc(2, 7)]);
    expect(cache.get(7)?.[0]).toBe(7);
  });
});

describe('log reads from the tail cache', () => {
  let dir: string;
  let options: LogOptions;
  let log: Log;
  beforeEach(async () => {
    dir = await makeTempDir();
    options = logOptions(dir, { segmentSizeBytesMax: 64 * 1024 * 1024 });
    log = await openLog(options);
  });
  afterEach(async () => {
    await log.close();
    await removeTempDir(dir);
  });

  it('serves records following the head from memory, byte for byte what the files hold', async () => {
    const written: Buffer[] = [];
    for (let n = 1; n <= 50; n++) {
      const payload = payloadFor(n, 200);
      written.push(Buffer.from(payload));
      const { durable } = log.append(payload);
      payload.fill(0); // the caller may reuse its buffer once append returned
      if (n % 10 === 0) await durable;
    }
    const fromMemory = await readAll(log, 1, 1000);
    expect(log.stats().recordsReadFromMemory).toBe(50);
    expect(log.stats().recordsReadFromFiles).toBe(0);
    expect(fromMemory.map((e) => e.lsn)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(bytes(fromMemory)).toEqual(written.map((b) => b.toString('hex')));
    await log.close();
    log = await openLog(options);
    const fromFiles = await readAll(log, 1, 1000);
    expect(log.stats().recordsReadFromFiles).toBe(50);
    expect(bytes(fromFiles)).toEqual(bytes(fromMemory));
  });

  it('a reader behind the cache reads the files, then continues from memory, and back, without gap or repeat', async () => {
    const big = 1024 * 1024;
    const count = Math.ceil(LOG_LIMITS.tailCacheBytesMax / big) + 4;
    for (let n = 1; n <= 3; n++) await log.append(payloadFor(n, 100)).durable;
    // A reader in small batches, started while everything is in memory.
    const reader = log.read(lsn(1), { batchBytesMax: 1 })[Symbol.asyncIterator]();
    const seen: LogEntry[] = [...((await reader.next()).value as LogEntry[])];
    // Enough bytes to push LSNs 2 and 3 out of the cache.
    for (let n = 4; n < 4 + count; n++) await log.append(payloadFor(n, big)).durable;
    for (let step = await reader.next(); !step.done; step = await reader.next()) seen.push(...step.value);
    const last = 3 + count;
    expect(seen.map((e) => e.lsn)).toEqual(Array.from({ length: last }, (_, i) => i + 1));
    seen.forEach((e) => expect(Buffer.from(e.payload).equals(payloadFor(e.lsn, e.lsn <= 3 ? 100 : big))).toBe(true));
    const stats = log.stats();
    expect(stats.recordsReadFromFiles).toBeGreaterThan(0);
    expect(stats.recordsReadFromMemory).toBeGreaterThan(0);
    // From the first LSN again: the oldest from the files, the newest from memory.
    const again = await readAll(log, 1);
    expect(bytes(again)).toEqual(bytes(seen));
  });
});
