import { mkdir, open, stat, unlink } from 'node:fs/promises';
import { DATA_DIR_CREATE_MODE, DATA_FILE_CREATE_MODE } from '../core/file-modes.js';
import { filePosition, lsn, LSN_NONE, type Lsn } from '../core/units.js';
import { logCorrupt } from './errors.js';
import { scanSegment } from './scan.js';
import { fsyncDirectory, listSegmentFiles, Segment, type SegmentFile } from './segment.js';
import { indexMatches, readIndexHeader, SparseIndex, writeIndexFile } from './sparse-index.js';
import type { LogOptions, RecoveryReport } from './types.js';

export interface RecoveredSegments {
  /** In LSN order; the last one is the active segment, with its index in memory. */
  readonly segments: Segment[];
  readonly report: RecoveryReport;
}

/**
 * Brings the directory to a state appends can continue from: checks that segments chain without
 * gap or overlap, CRC-checks every record of the last segment, and cuts a torn tail there. Any
 * other damage is LOG_CORRUPT: accepting it silently would lose or invent acknowledged writes.
 */
export async function recoverSegments(options: LogOptions): Promise<RecoveredSegments> {
  const { dir, indexIntervalBytes } = options;
  await mkdir(dir, { recursive: true, mode: DATA_DIR_CREATE_MODE });
  const { segments: files, orphanIndexes } = await listSegmentFiles(dir);
  await Promise.all(orphanIndexes.map((path) => unlink(path)));
  const lastFile = files.at(-1);
  if (lastFile === undefined) return { segments: [await createFirstSegment(dir, indexIntervalBytes)], report: report(1, LSN_NONE) };

  const segments: Segment[] = [];
  for (const file of files.slice(0, -1)) {
    const segment = await sealedSegment(dir, file, indexIntervalBytes);
    assertChained(segments.at(-1), segment);
    segments.push(segment);
  }
  const scan = await scanSegment(lastFile.path, lastFile.baseLsn, indexIntervalBytes);
  const active = new Segment(dir, lastFile.baseLsn, scan.lastLsn, scan.validSizeBytes);
  active.index = scan.index;
  assertChained(segments.at(-1), active);
  segments.push(active);
  if (scan.damage === null) return { segments, report: report(segments.length, active.lastLsn) };

  const { damage, validFrameAfterDamage } = scan;
  if (damage.reason === 'lsn-mismatch' || validFrameAfterDamage !== null) {
    const after = validFrameAfterDamage === null ? '' : `, and a valid record follows at byte offset ${validFrameAfterDamage}, so this is not a torn tail`;
    throw logCorrupt(lastFile.fileName, damage.positionBytes, `${damage.what}${after}`);
  }
  const bytesTruncated = scan.fileSizeBytes - scan.validSizeBytes;
  await truncateFile(lastFile.path, scan.validSizeBytes);
  options.logger.warn(
    { segment: lastFile.fileName, bytesTruncated, truncatedAtBytes: scan.validSizeBytes, reason: damage.reason },
    'log: cut a torn tail after the last valid record',
  );
  return {
    segments,
    report: {
      ...report(segments.length, active.lastLsn),
      bytesTruncated,
      truncatedSegment: lastFile.fileName,
      truncatedAtBytes: filePosition(scan.validSizeBytes),
    },
  };
}

/** A segment that is not the last: its index header gives its last LSN, or a full scan does. */
async function sealedSegment(dir: string, file: SegmentFile, indexIntervalBytes: number): Promise<Segment> {
  const sizeBytes = (await stat(file.path)).size;
  const probe = new Segment(dir, file.baseLsn, LSN_NONE, sizeBytes);
  const header = await readIndexHeader(probe.indexPath);
  if (indexMatches(header, file.baseLsn, sizeBytes)) return new Segment(dir, file.baseLsn, lsn(header.lastLsn), sizeBytes);
  const scan = await scanSegment(file.path, file.baseLsn, indexIntervalBytes);
  if (scan.damage !== null) {
    throw logCorrupt(file.fileName, scan.damage.positionBytes, `${scan.damage.what} (a later segment exists, so this is not a torn tail)`);
  }
  const segment = new Segment(dir, file.baseLsn, scan.lastLsn, sizeBytes);
  await writeIndexFile(segment.indexPath, scan.index, { baseLsn: segment.baseLsn, lastLsn: segment.lastLsn, segmentSizeBytes: sizeBytes });
  return segment;
}

/** Each segment must start right after the previous one ends. */
export function assertChained(previous: { fileName: string; lastLsn: Lsn } | undefined, segment: { fileName: string; baseLsn: Lsn }): void {
  if (previous === undefined || segment.baseLsn === previous.lastLsn + 1) return;
  const kind = segment.baseLsn > previous.lastLsn + 1 ? 'a gap' : 'an overlap';
  throw logCorrupt(segment.fileName, 0, `it starts at LSN ${segment.baseLsn} but ${previous.fileName} ends at LSN ${previous.lastLsn} (${kind} in the log)`, {
    previousSegment: previous.fileName,
  });
}

async function createFirstSegment(dir: string, indexIntervalBytes: number): Promise<Segment> {
  const segment = new Segment(dir, lsn(1), LSN_NONE, 0);
  await (await open(segment.path, 'wx', DATA_FILE_CREATE_MODE)).close();
  await fsyncDirectory(dir);
  segment.index = new SparseIndex(indexIntervalBytes);
  return segment;
}

/** Cuts a file to sizeBytes and makes the cut durable before anything is appended after it. */
export async function truncateFile(path: string, sizeBytes: number): Promise<void> {
  const fh = await open(path, 'r+');
  try {
    await fh.truncate(sizeBytes);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

function report(segmentCount: number, lastLsn: Lsn): RecoveryReport {
  return { segmentCount, lastLsn, bytesTruncated: 0, truncatedSegment: null, truncatedAtBytes: null };
}
