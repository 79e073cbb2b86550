import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLog, type LogOptions, type SegmentInfo } from '../../log/index.js';
import { encodeIndexFile, readIndexHeader, SparseIndex } from '../../log/sparse-index.js';
import { asLsn, logOptions, makeTempDir, payloadFor, removeTempDir, segmentFiles } from './helpers.js';

const RECORDS = 20_000;
const FRAME_HEADER_BYTES = 20;
/** Deterministic sizes from 0 to 299 bytes. */
const sizeOf = (recordLsn: number): number => (recordLsn * 7919) % 300;

describe('sparse index', () => {
  let dir: string;
  let options: LogOptions;
  let segments: SegmentInfo[];

  beforeAll(async () => {
    dir = await makeTempDir();
    options = logOptions(dir, { segmentSizeBytesMax: 256 * 1024, indexIntervalBytes: 2048 });
    const log = await openLog(options);
    for (let first = 1; first <= RECORDS; first += 500) {
      const group = [];
      for (let n = first; n < first + 500; n++) group.push(log.append(payloadFor(n, sizeOf(n))).durable);
      await Promise.all(group);
    }
    segments = [...log.segments()];
    await log.close();
  });
  afterAll(async () => {
    await removeTempDir(dir);
  });

  /** Reads one record at each of many LSNs (each read seeks afresh) and checks it. */
  async function checkRandomReads(count: number): Promise<void> {
    const log = await openLog(options);
    try {
      expect(log.headLsn).toBe(RECORDS);
      const targets = [1, RECORDS, ...segments.map((s) => s.baseLsn), ...segments.map((s) => s.lastLsn)];
      for (let i = 0; i < count; i++) targets.push(1 + ((i * 104_729) % RECORDS));
      for (const target of targets) {
        const iterator = log.read(asLsn(target), { batchBytesMax: 1 })[Symbol.asyncIterator]();
        const first = await iterator.next();
        await iterator.return?.();
        expect(first.done).toBe(false);
        const [entry] = first.value as { lsn: number; payload: Uint8Array }[];
        expect(entry?.lsn).toBe(target);
        expect(Buffer.from(entry!.payload).equals(payloadFor(target, sizeOf(target)))).toBe(true);
      }
    } finally {
      await log.close();
    }
  }

  it('is written for every segment, and reads from arbitrary LSNs in a big log are correct', async () => {
    expect(segments.length).toBeGreaterThan(10);
    expect(await segmentFiles(dir, 'idx')).toHaveLength(segments.length);
    for (const segment of segments) {
      const header = await readIndexHeader(segment.path.replace(/\.log$/, '.idx'));
      expect(header).toMatchObject({ baseLsn: segment.baseLsn, lastLsn: segment.lastLsn, segmentSizeBytes: segment.sizeBytes });
      // About one entry per 2 KiB of segment.
      expect(header!.entryCount).toBeGreaterThanOrEqual(Math.floor(segment.sizeBytes / (2048 + 320)));
    }
    await checkRandomReads(200);
  });

  it('is rebuilt when deleted', async () => {
    for (const name of await segmentFiles(dir, 'idx')) await rm(join(dir, name));
    await checkRandomReads(100);
    expect(await segmentFiles(dir, 'idx')).toHaveLength(segments.length);
  });

  it('is rebuilt when its entries or its header are damaged', async () => {
    const [first, second] = segments;
    const entriesDamaged = first!.path.replace(/\.log$/, '.idx');
    const bytes = await readFile(entriesDamaged);
    bytes[bytes.length - 3] = (bytes[bytes.length - 3] as number) ^ 0xff;
    await writeFile(entriesDamaged, bytes);
    const headerDamaged = second!.path.replace(/\.log$/, '.idx');
    const header = await readFile(headerDamaged);
    header[20] = (header[20] as number) ^ 0x01;
    await writeFile(headerDamaged, header);
    await checkRandomReads(100);
    expect(await readIndexHeader(headerDamaged)).toMatchObject({ baseLsn: second!.baseLsn, lastLsn: second!.lastLsn });
  });

  it('a stale index with a valid CRC that points at the wrong records never causes a wrong read', async () => {
    const segment = segments[2]!;
    // Entries that claim each LSN sits where the next record really is.
    const wrong = new SparseIndex(2048);
    let position = 0;
    for (let n = segment.baseLsn; n <= segment.lastLsn; n++) {
      if (n % 20 === 0) wrong.add(n - 1, position);
      position += FRAME_HEADER_BYTES + sizeOf(n);
    }
    await writeFile(
      segment.path.replace(/\.log$/, '.idx'),
      encodeIndexFile(wrong, { baseLsn: segment.baseLsn, lastLsn: segment.lastLsn, segmentSizeBytes: segment.sizeBytes }),
    );
    await checkRandomReads(300);
  });
});
