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

describe('TailCache counts what it keeps alive', () => {
  it('a small payload in a large buffer counts the whole buffer, released with its last record', () => {
    const chunkBytes = 1000;
    const cache = new TailCache(2 * chunkBytes);
    const chunks = [1, 2, 3].map((fill) => Buffer.alloc(chunkBytes, fill));
    // Ten 10-byte payloads per chunk: 300 payload bytes in all, but three 1,000-byte chunks held.
    let next = 1;
    for (const chunk of chunks) {
      cache.add(
        lsn(next),
        Array.from({ length: 10 }, (_, i) => chunk.subarray(i * 10, i * 10 + 10)),
      );
      next += 10;
    }
    expect(cache.bytesHeld).toBe(2 * chunkBytes);
    expect([cache.first, cache.last]).toEqual([11, 30]); // the first chunk's records went with it
    expect(cache.get(10)).toBeUndefined();
    expect([...cache.get(11)!]).toEqual(Array.from({ length: 10 }, () => 2));
    expect([...cache.get(30)!]).toEqual(Array.from({ length: 10 }, () => 3));
    // Records of one chunk straddling two adds still count it once.
    cache.add(lsn(31), [chunks[2]!.subarray(100, 110)]);
    expect(cache.bytesHeld).toBe(2 * chunkBytes);
    expect(cache.last).toBe(31);
  });

  it('the log keeps its newest records within the bound counted as its write chunks', async () => {
    const dir = await makeTempDir();
    const log = await openLog(logOptions(dir, { segmentSizeBytesMax: 256 * 1024 * 1024 }));
    try {
      // 100-byte records: ~120 bytes of chunk each, so the bound is reached after ~210,000 of them.
      const payload = Buffer.alloc(100, 7);
      const records = Math.ceil((LOG_LIMITS.tailCacheBytesMax / 120) * 1.3);
      for (let n = 1; n <= records; n++) {
        const { durable } = log.append(payload);
        if (n % 20_000 === 0 || n === records) await durable;
      }
      const stats = log.stats();
      expect(stats.tailCacheBytes).toBeLessThanOrEqual(LOG_LIMITS.tailCacheBytesMax);
      expect(stats.tailCacheBytes).toBeGreaterThan(LOG_LIMITS.tailCacheBytesMax - 2 * LOG_LIMITS.writeChunkBytes);
      expect(stats.tailCacheFirstLsn).toBeGreaterThan(1);
      expect(stats.tailCacheFirstLsn + stats.tailCacheRecords - 1).toBe(records);
      const held = stats.tailCacheRecords;
      // The payloads held are well under the bound: the chunks' frame headers and the rest count too.
      expect(held * payload.length).toBeLessThan(LOG_LIMITS.tailCacheBytesMax);
      const newest = await readAll(log, records, records);
      expect(newest.map((e) => e.lsn)).toEqual([records]);
      expect(Buffer.from(newest[0]!.payload).equals(payload)).toBe(true);
      expect(log.stats().recordsReadFromFiles).toBe(0);
    } finally {
      await log.close();
      await removeTempDir(dir);
    }
  }, 60_000);
});
