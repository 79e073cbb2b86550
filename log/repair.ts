import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { SvcError } from '../core/errors.js';
import { filePosition, lsn, LSN_NONE } from '../core/units.js';
import { truncateFile } from './recovery.js';
import { scanSegment } from './scan.js';
import { fsyncDirectory, indexFileName, listSegmentFiles, removeFileIfPresent } from './segment.js';
import type { LogOptions, RepairReport } from './types.js';

/**
 * `svcdb repair`: verifies every record of every segment and truncates the log at the first
 * damage (a bad record, or a gap/overlap between segments), deleting every later segment. The
 * records after the damage are lost; everything before it opens cleanly afterwards.
 * Only for a log no process has open.
 */
export async function repairLog(options: Pick<LogOptions, 'dir' | 'logger' | 'indexIntervalBytes'>): Promise<RepairReport> {
  const { dir, logger } = options;
  const { segments: files } = await listSegmentFiles(dir).catch((cause: NodeJS.ErrnoException) => {
    if (cause.code !== 'ENOENT') throw cause;
    throw new SvcError('DATA_DIR_INVALID', `log directory ${dir} does not exist; nothing to repair`, { dir }, cause);
  });
  let expected = files[0]?.baseLsn ?? lsn(1);
  let cutIndex = -1;
  let cutAtBytes = 0;
  let cutWhole = false;
  for (const [i, file] of files.entries()) {
    // A segment that does not chain on is removed whole: nothing in it can be placed.
    if (file.baseLsn !== expected) {
      cutIndex = i;
      cutWhole = true;
      break;
    }
    const scan = await scanSegment(file.path, file.baseLsn, options.indexIntervalBytes);
    expected = lsn(scan.lastLsn + 1);
    if (scan.damage !== null) {
      cutIndex = i;
      cutAtBytes = scan.validSizeBytes;
      break;
    }
  }
  const lastLsn = lsn(expected - 1);
  const cutFile = files[cutIndex];
  if (cutFile === undefined) {
    return { bytesTruncated: 0, segment: null, truncatedAtBytes: null, segmentsDeleted: 0, lastLsn: files.length === 0 ? LSN_NONE : lastLsn };
  }
  let bytesTruncated = 0;
  let segmentsDeleted = 0;
  for (const [i, file] of files.entries()) {
    if (i < cutIndex) continue;
    const sizeBytes = (await stat(file.path)).size;
    await removeFileIfPresent(join(dir, indexFileName(file.baseLsn)));
    if (i === cutIndex && !cutWhole) {
      await truncateFile(file.path, cutAtBytes);
      bytesTruncated += sizeBytes - cutAtBytes;
    } else {
      await removeFileIfPresent(file.path);
      bytesTruncated += sizeBytes;
      segmentsDeleted++;
    }
  }
  await fsyncDirectory(dir);
  logger.warn(
    { segment: cutFile.fileName, truncatedAtBytes: cutAtBytes, bytesTruncated, segmentsDeleted, lastLsn },
    'log: repaired by cutting at the first damage',
  );
  return { bytesTruncated, segment: cutFile.fileName, truncatedAtBytes: filePosition(cutAtBytes), segmentsDeleted, lastLsn };
}
