import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLog, type Log, type LogOptions } from '../../log/index.js';
import { LOG_LIMITS } from '../../log/limits.js';
import { logOptions, makeTempDir, payloadFor, readAll, removeTempDir } from './helpers.js';

/**
 * Records bigger than a read chunk, one after another: the cursor reads a chunk, finds only the
 * header of the next record, and must read the rest instead of calling it a torn record (a log of
 * several 2 MiB bulk inserts once failed to reopen with LOG_CORRUPT).
 */
describe('records bigger than a read chunk', () => {
  let dir: string;
  let options: LogOptions;
  let log: Log;
  const big = 2 * LOG_LIMITS.readChunkBytes + 123;
  beforeEach(async () => {
    dir = await makeTempDir();
    options = logOptions(dir, { segmentSizeBytesMax: 64 * 1024 * 1024, readBatchBytesMax: 4 * 1024 * 1024 });
    log = await openLog(options);
  });
  afterEach(async () => {
    await log.close();
    await removeTempDir(dir);
  });

  it('reopen (recovery) and read them back from the files, small records between them too', async () => {
    const sizes = [big, big, 100, big, big, 7, big];
    for (const [i, size] of sizes.entries()) await log.append(payloadFor(i + 1, size)).durable;
    await log.close();
    log = await openLog(options);
    expect(log.headLsn).toBe(sizes.length);
    for (const batchBytesMax of [1, 64 * 1024, 4 * 1024 * 1024]) {
      const entries = await readAll(log, 1, batchBytesMax);
      expect(entries.map((e) => e.payload.length)).toEqual(sizes);
      entries.forEach((e, i) => expect(Buffer.from(e.payload).equals(payloadFor(i + 1, sizes[i]!))).toBe(true));
    }
    expect(log.stats().recordsReadFromMemory).toBe(0);
  });
});
