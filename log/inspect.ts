import { stat } from 'node:fs/promises';
import { lsn, LSN_NONE } from '../core/units.js';
import { scanSegment } from './scan.js';
import { listSegmentFiles, Segment } from './segment.js';
import { indexMatches, readIndexHeader } from './sparse-index.js';
import type { LogDirSummary, SegmentInfo } from './types.js';

/**
 * The segments of a log directory, read-only (for `svcdb inspect`, also while a server has the log
 * open): each one's LSN range from its index header when that is current, else from a scan of its
 * valid prefix. Damage is not reported here; opening the log or `svcdb repair` deals with it.
 */
export async function listSegments(dir: string): Promise<SegmentInfo[]> {
  const { segments: files } = await listSegmentFiles(dir);
  const infos: SegmentInfo[] = [];
  for (const file of files) {
    let sizeBytes: number;
    try {
      sizeBytes = (await stat(file.path)).size;
    } catch (error) {
      // Deleted by retention between the listing and now.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    const segment = new Segment(dir, file.baseLsn, LSN_NONE, sizeBytes);
    const header = await readIndexHeader(segment.indexPath);
    segment.lastLsn = indexMatches(header, file.baseLsn, sizeBytes)
      ? lsn(header.lastLsn)
      : (await scanSegment(file.path, file.baseLsn, Number.POSITIVE_INFINITY)).lastLsn;
    infos.push(segment.info());
  }
  return infos;
}

/** listSegments plus the LSN range of the whole log. */
export async function inspectLogDir(dir: string): Promise<LogDirSummary> {
  const segments = await listSegments(dir);
  return {
    segments,
    firstLsn: segments[0]?.baseLsn ?? lsn(1),
    lastLsn: segments.at(-1)?.lastLsn ?? LSN_NONE,
  };
}
