import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openLog, type Log } from '../../log/index.js';
import { logOptions, makeTempDir, payloadFor, readAll, removeTempDir } from './helpers.js';

const payloadSize = fc.oneof(
  { weight: 1, arbitrary: fc.constant(0) },
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 300 }) },
  // Bigger than most read batches and most segments: a batch and a segment still hold one.
  { weight: 1, arbitrary: fc.integer({ min: 3000, max: 9000 }) },
);

const scenario = fc.record({
  sizes: fc.array(payloadSize, { minLength: 1, maxLength: 120 }),
  /** How many appends are issued before awaiting them (1 = strictly sequential). */
  concurrency: fc.integer({ min: 1, max: 24 }),
  segmentSizeBytesMax: fc.integer({ min: 40, max: 6000 }),
  indexIntervalBytes: fc.integer({ min: 1, max: 3000 }),
  batchBytesMax: fc.integer({ min: 1, max: 5000 }),
  fromFraction: fc.double({ min: 0, max: 1, noNaN: true }),
});

async function appendAll(log: Log, sizes: number[], firstLsn: number, concurrency: number): Promise<void> {
  for (let i = 0; i < sizes.length; i += concurrency) {
    const group = sizes.slice(i, i + concurrency).map((size, j) => {
      const result = log.append(payloadFor(firstLsn + i + j, size));
      expect(result.lsn).toBe(firstLsn + i + j);
      return result.durable;
    });
    await Promise.all(group);
  }
}

/** The roll rule: a record that would take a non-empty segment past the max starts a new one. */
function expectedSegmentCount(sizes: number[], segmentSizeBytesMax: number): number {
  let count = 1;
  let segmentBytes = 0;
  for (const size of sizes) {
    if (segmentBytes > 0 && segmentBytes + 20 + size > segmentSizeBytesMax) {
      count++;
      segmentBytes = 0;
    }
    segmentBytes += 20 + size;
  }
  return count;
}

function expectRecords(entries: { lsn: number; payload: Uint8Array }[], sizes: number[], fromLsn: number): void {
  expect(entries.map((e) => e.lsn)).toEqual(sizes.slice(fromLsn - 1).map((_, i) => fromLsn + i));
  for (const entry of entries) {
    expect(Buffer.from(entry.payload).equals(payloadFor(entry.lsn, sizes[entry.lsn - 1] as number))).toBe(true);
  }
}

describe('append/read round trip (property)', () => {
  it('reads back exactly what was appended, from any LSN, across rolls and a reopen', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const dir = await makeTempDir();
        try {
          const options = logOptions(dir, { segmentSizeBytesMax: s.segmentSizeBytesMax, indexIntervalBytes: s.indexIntervalBytes });
          const half = Math.ceil(s.sizes.length / 2);
          const log = await openLog(options);
          await appendAll(log, s.sizes.slice(0, half), 1, s.concurrency);
          const fromLsn = 1 + Math.floor(s.fromFraction * s.sizes.length * 0.999);
          expectRecords(await readAll(log, 1, s.batchBytesMax), s.sizes.slice(0, half), 1);
          await log.close();

          const reopened = await openLog(options);
          expect(reopened.headLsn).toBe(half);
          expect(reopened.recovery.bytesTruncated).toBe(0);
          await appendAll(reopened, s.sizes.slice(half), half + 1, s.concurrency);
          expectRecords(await readAll(reopened, 1, s.batchBytesMax), s.sizes, 1);
          expectRecords(await readAll(reopened, fromLsn, s.batchBytesMax), s.sizes, fromLsn);

          // Segments chain, and only a single-record segment may exceed the max.
          const segments = reopened.segments();
          segments.forEach((segment, i) => {
            if (i > 0) expect(segment.baseLsn).toBe((segments[i - 1]?.lastLsn ?? 0) + 1);
            if (segment.lastLsn > segment.baseLsn) expect(segment.sizeBytes).toBeLessThanOrEqual(s.segmentSizeBytesMax);
          });
          expect(segments.at(-1)?.lastLsn).toBe(s.sizes.length);
          expect(segments).toHaveLength(expectedSegmentCount(s.sizes, s.segmentSizeBytesMax));
          await reopened.close();

          const again = await openLog(options);
          expectRecords(await readAll(again, fromLsn, s.batchBytesMax), s.sizes, fromLsn);
          await again.close();
        } finally {
          await removeTempDir(dir);
        }
      }),
      { numRuns: 40 },
    );
  });

  it('read() with toLsn stops there, and an empty log reads nothing', async () => {
    const dir = await makeTempDir();
    try {
      const log = await openLog(logOptions(dir));
      expect(await readAll(log)).toEqual([]);
      expect(log.firstLsn).toBe(1);
      expect(log.durableLsn).toBe(0);
      const results = Array.from({ length: 30 }, (_, i) => log.append(payloadFor(i + 1, 50)));
      await Promise.all(results.map((r) => r.durable));
      const entries = [];
      for await (const batch of log.read(log.firstLsn, { toLsn: results[9]!.lsn })) entries.push(...batch);
      expect(entries.map((e) => e.lsn)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
      expect(await readAll(log, 31)).toEqual([]);
      await log.close();
    } finally {
      await removeTempDir(dir);
    }
  });
});
