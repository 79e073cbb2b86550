import { open, readFile, truncate, writeFile } from 'node:fs/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openLog } from '../../log/index.js';
import { logOptions, makeTempDir, payloadFor, readAll, recordingLogger, removeTempDir } from './helpers.js';

const FRAME_HEADER_BYTES = 20;

const damage = fc.oneof(
  fc.record({ kind: fc.constant('truncate' as const), fraction: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ kind: fc.constant('flip' as const), fraction: fc.double({ min: 0, max: 0.9999, noNaN: true }), bit: fc.integer({ min: 0, max: 7 }) }),
);

const scenario = fc.record({
  sizes: fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 1, maxLength: 40 }),
  segmentSizeBytesMax: fc.integer({ min: 100, max: 3000 }),
  damage,
});

describe('recovery of a damaged tail (property)', () => {
  it('a truncation anywhere in the last segment, or a bit flip in the last record, yields the longest valid prefix', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const dir = await makeTempDir();
        try {
          const options = logOptions(dir, { segmentSizeBytesMax: s.segmentSizeBytesMax, indexIntervalBytes: 64 });
          const log = await openLog(options);
          await Promise.all(s.sizes.map((size, i) => log.append(payloadFor(i + 1, size)).durable));
          const last = log.segments().at(-1)!;
          await log.close();

          // File positions of the frames of the last segment.
          const ends: number[] = [];
          let position = 0;
          for (let recordLsn = last.baseLsn; recordLsn <= last.lastLsn; recordLsn++) {
            position += FRAME_HEADER_BYTES + (s.sizes[recordLsn - 1] as number);
            ends.push(position);
          }
          expect(position).toBe(last.sizeBytes);

          let survivors: number;
          let bytesTruncated: number;
          if (s.damage.kind === 'truncate') {
            const cut = Math.min(last.sizeBytes, Math.floor(s.damage.fraction * (last.sizeBytes + 1)));
            await truncate(last.path, cut);
            survivors = ends.filter((end) => end <= cut).length;
            bytesTruncated = cut - (survivors === 0 ? 0 : (ends[survivors - 1] as number));
          } else {
            const start = ends.length > 1 ? (ends.at(-2) as number) : 0;
            const at = start + Math.floor(s.damage.fraction * (last.sizeBytes - start));
            const bytes = await readFile(last.path);
            bytes[at] = (bytes[at] as number) ^ (1 << s.damage.bit);
            await writeFile(last.path, bytes);
            survivors = ends.length - 1;
            bytesTruncated = last.sizeBytes - start;
          }
          const expectedLast = last.baseLsn - 1 + survivors;

          const logger = recordingLogger();
          const reopened = await openLog({ ...options, logger });
          expect(reopened.recovery.bytesTruncated).toBe(bytesTruncated);
          expect(reopened.recovery.lastLsn).toBe(expectedLast);
          expect(reopened.headLsn).toBe(expectedLast);
          if (bytesTruncated > 0) {
            expect(reopened.recovery.truncatedSegment).toBe(last.path.split('/').at(-1));
            expect(logger.warnings).toContainEqual(
              expect.objectContaining({
                obj: expect.objectContaining({ segment: reopened.recovery.truncatedSegment, bytesTruncated }),
              }),
            );
          }
          const entries = await readAll(reopened);
          expect(entries.map((e) => e.lsn)).toEqual(Array.from({ length: expectedLast }, (_, i) => i + 1));
          entries.forEach((e) => expect(Buffer.from(e.payload).equals(payloadFor(e.lsn, s.sizes[e.lsn - 1] as number))).toBe(true));

          const next = reopened.append(payloadFor(expectedLast + 1, 33));
          expect(next.lsn).toBe(expectedLast + 1);
          await next.durable;
          await reopened.close();

          const again = await openLog(options);
          expect(again.recovery.bytesTruncated).toBe(0);
          expect((await readAll(again)).map((e) => e.lsn)).toEqual(Array.from({ length: expectedLast + 1 }, (_, i) => i + 1));
          await again.close();
        } finally {
          await removeTempDir(dir);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('a tail of zeros (file extended but never written) is cut', async () => {
    const dir = await makeTempDir();
    try {
      const log = await openLog(logOptions(dir));
      await Promise.all([1, 2, 3].map((n) => log.append(payloadFor(n, 100)).durable));
      const last = log.segments().at(-1)!;
      await log.close();
      const fh = await open(last.path, 'r+');
      await fh.truncate(last.sizeBytes + 4096);
      await fh.close();
      const reopened = await openLog(logOptions(dir));
      expect(reopened.recovery.bytesTruncated).toBe(4096);
      expect(reopened.headLsn).toBe(3);
      await reopened.close();
    } finally {
      await removeTempDir(dir);
    }
  });
});
