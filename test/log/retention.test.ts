import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLog, type Log, type LogOptions } from '../../log/index.js';
import { asLsn, logOptions, makeTempDir, payloadFor, readAll, removeTempDir, segmentFiles } from './helpers.js';

const FRAME_BYTES = 20 + 100;

describe('retention', () => {
  let dir: string;
  let options: LogOptions;
  let log: Log;
  beforeEach(async () => {
    dir = await makeTempDir();
    options = logOptions(dir, { segmentSizeBytesMax: 5 * FRAME_BYTES });
    log = await openLog(options);
    for (let n = 1; n <= 28; n++) await log.append(payloadFor(n, 100)).durable;
    expect(log.segments().map((s) => s.baseLsn)).toEqual([1, 6, 11, 16, 21, 26]);
  });
  afterEach(async () => {
    await log.close();
    await removeTempDir(dir);
  });

  it('deletes only whole segments below the LSN, and reads below firstLsn fail clearly', async () => {
    expect(await log.retain(asLsn(1))).toEqual({ segmentsDeleted: 0 });
    // Segment 11..15 still holds LSN 12 and 13, so it stays.
    expect(await log.retain(asLsn(13))).toEqual({ segmentsDeleted: 2 });
    expect(log.firstLsn).toBe(11);
    expect(await segmentFiles(dir, 'log')).toHaveLength(4);
    expect(await segmentFiles(dir, 'idx')).toHaveLength(3);
    expect((await readAll(log, 11)).map((e) => e.lsn)).toEqual(Array.from({ length: 18 }, (_, i) => i + 11));
    const error = await readAll(log, 7).then(
      () => null,
      (e: unknown) => e as Error & { code: string },
    );
    expect(error?.code).toBe('NOT_FOUND');
    expect(error?.message).toContain('LSN 11');
  });

  it('never deletes the active segment, and firstLsn survives a reopen', async () => {
    expect(await log.retain(asLsn(10_000))).toEqual({ segmentsDeleted: 5 });
    expect(log.segments()).toHaveLength(1);
    expect(log.firstLsn).toBe(26);
    expect((await readAll(log, 26)).map((e) => e.lsn)).toEqual([26, 27, 28]);
    expect(log.append(payloadFor(29, 100)).lsn).toBe(29);
    await log.close();
    log = await openLog(options);
    expect(log.firstLsn).toBe(26);
    expect(log.headLsn).toBe(29);
  });

  it('a reader inside a deleted segment finishes it, then gets NOT_FOUND', async () => {
    const iterator = log.read(asLsn(1), { batchBytesMax: 1 })[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toHaveLength(1);
    await log.retain(asLsn(16));
    const seen: number[] = [];
    const error = await (async () => {
      for (;;) {
        const step = await iterator.next();
        if (step.done) return null;
        seen.push(...step.value.map((e) => e.lsn));
      }
    })().catch((e: unknown) => e as Error & { code: string });
    expect(seen).toEqual([2, 3, 4, 5]);
    expect(error?.code).toBe('NOT_FOUND');
  });
});
