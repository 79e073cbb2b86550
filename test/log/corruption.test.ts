import { readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isSvcError } from '../../core/errors.js';
import { openLog, repairLog, type LogOptions, type SegmentInfo } from '../../log/index.js';
import { logOptions, makeTempDir, payloadFor, readAll, removeTempDir } from './helpers.js';

const FRAME_HEADER_BYTES = 20;
const PAYLOAD_BYTES = 100;
const FRAME_BYTES = FRAME_HEADER_BYTES + PAYLOAD_BYTES;

async function flipByte(path: string, at: number): Promise<void> {
  const bytes = await readFile(path);
  bytes[at] = (bytes[at] as number) ^ 0x40;
  await writeFile(path, bytes);
}

async function openError(options: LogOptions): Promise<Error & { code?: string }> {
  const error = await openLog(options).then(
    () => {
      throw new Error('openLog succeeded on a damaged log');
    },
    (e: unknown) => e,
  );
  expect(isSvcError(error)).toBe(true);
  return error as Error & { code: string };
}

describe('corruption that is not a torn tail', () => {
  let dir: string;
  let options: LogOptions;
  beforeEach(async () => {
    dir = await makeTempDir();
    // 5 records of 120 bytes per segment.
    options = logOptions(dir, { segmentSizeBytesMax: 5 * FRAME_BYTES, indexIntervalBytes: 200 });
  });
  afterEach(async () => {
    await removeTempDir(dir);
  });

  async function writeRecords(count: number): Promise<readonly SegmentInfo[]> {
    const log = await openLog(options);
    for (let i = 1; i <= count; i++) await log.append(payloadFor(i, PAYLOAD_BYTES)).durable;
    const segments = log.segments();
    await log.close();
    return segments;
  }

  it('a flipped byte in a middle record of the last segment is LOG_CORRUPT naming file and offset; repair keeps the prefix', async () => {
    const segments = await writeRecords(13);
    const last = segments.at(-1)!;
    expect(last.baseLsn).toBe(11);
    const damagedAt = FRAME_BYTES; // record 12 of 11..13
    await flipByte(last.path, damagedAt + FRAME_HEADER_BYTES + 7);

    const error = await openError(options);
    expect(error.code).toBe('LOG_CORRUPT');
    expect(error.message).toContain(basename(last.path));
    expect(error.message).toContain(`byte offset ${damagedAt}`);
    expect(error.message).toContain('svcdb repair');
    expect(error.message).toContain('not a torn tail');

    const report = await repairLog(options);
    expect(report).toMatchObject({
      segment: basename(last.path),
      truncatedAtBytes: damagedAt,
      bytesTruncated: 2 * FRAME_BYTES,
      segmentsDeleted: 0,
      lastLsn: 11,
    });
    const log = await openLog(options);
    expect(log.headLsn).toBe(11);
    expect((await readAll(log)).map((e) => e.lsn)).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
    expect(log.append(payloadFor(12, 5)).lsn).toBe(12);
    await log.close();
  });

  it('damage in a segment that is not the last is LOG_CORRUPT at open when its index must be rebuilt', async () => {
    const segments = await writeRecords(13);
    const second = segments[1]!;
    await flipByte(second.path, 3 * FRAME_BYTES + 2);
    await rm(second.path.replace(/\.log$/, '.idx'));
    const error = await openError(options);
    expect(error.code).toBe('LOG_CORRUPT');
    expect(error.message).toContain(basename(second.path));
    expect(error.message).toContain(`byte offset ${3 * FRAME_BYTES}`);

    const report = await repairLog(options);
    expect(report.segment).toBe(basename(second.path));
    expect(report.segmentsDeleted).toBe(1);
    expect(report.bytesTruncated).toBe(2 * FRAME_BYTES + segments[2]!.sizeBytes);
    const log = await openLog(options);
    expect(log.headLsn).toBe(8);
    expect(log.segments()).toHaveLength(2);
    expect((await readAll(log)).map((e) => e.lsn)).toEqual(Array.from({ length: 8 }, (_, i) => i + 1));
    await log.close();
  });

  it('damage in a sealed segment with a current index is found by read(), never returned', async () => {
    const segments = await writeRecords(13);
    const first = segments[0]!;
    await flipByte(first.path, 2 * FRAME_BYTES + FRAME_HEADER_BYTES + 50);
    const log = await openLog(options);
    const error = await readAll(log).then(
      () => null,
      (e: unknown) => e as Error & { code: string },
    );
    expect(error?.code).toBe('LOG_CORRUPT');
    expect(error?.message).toContain(basename(first.path));
    expect(error?.message).toContain(`byte offset ${2 * FRAME_BYTES}`);
    // Records after the damage in other segments are still readable.
    expect((await readAll(log, 6)).map((e) => e.lsn)).toEqual([6, 7, 8, 9, 10, 11, 12, 13]);
    await log.close();
  });

  it('a torn end of a sealed segment is LOG_CORRUPT, not a silent cut', async () => {
    const segments = await writeRecords(13);
    const first = segments[0]!;
    await truncate(first.path, first.sizeBytes - 10);
    const error = await openError(options);
    expect(error.code).toBe('LOG_CORRUPT');
    expect(error.message).toContain(basename(first.path));
  });

  it('a missing middle segment (gap in base LSNs) is LOG_CORRUPT; repair drops what follows the gap', async () => {
    const segments = await writeRecords(16);
    expect(segments).toHaveLength(4);
    await rm(segments[1]!.path);
    const error = await openError(options);
    expect(error.code).toBe('LOG_CORRUPT');
    expect(error.message).toContain(basename(segments[2]!.path));
    expect(error.message).toContain('gap');

    const report = await repairLog(options);
    expect(report.segment).toBe(basename(segments[2]!.path));
    expect(report.segmentsDeleted).toBe(2);
    const log = await openLog(options);
    expect(log.headLsn).toBe(5);
    expect(log.append(payloadFor(6, 10)).lsn).toBe(6);
    await log.close();
  });

  it('repairLog on a healthy log changes nothing', async () => {
    await writeRecords(7);
    expect(await repairLog(options)).toMatchObject({ bytesTruncated: 0, segment: null, lastLsn: 7 });
    const log = await openLog(options);
    expect(log.headLsn).toBe(7);
    await log.close();
  });
});
