import type { Logger } from '../core/logger.js';
import { logCorrupt } from './errors.js';
import { LOG_LIMITS } from './limits.js';
import { scanSegment } from './scan.js';
import type { Segment } from './segment.js';
import { loadIndexFile, type SparseIndex, writeIndexFile } from './sparse-index.js';

/**
 * Sparse indexes of sealed segments, loaded on first read and kept for the most recently used
 * few (a big log has too many to hold them all). A missing, stale or damaged index file is
 * rebuilt from its segment, which also CRC-checks that segment.
 */
export class SegmentIndexes {
  /** Sealed segments whose index is in memory, least recently used first. */
  private readonly cached = new Set<Segment>();
  private readonly loading = new Map<Segment, Promise<SparseIndex>>();

  constructor(
    private readonly intervalBytes: number,
    private readonly logger: Logger,
  ) {}

  /** The index of a sealed segment; rebuild: ignore the index file (it pointed at the wrong record). */
  async get(segment: Segment, rebuild = false): Promise<SparseIndex> {
    if (rebuild) this.forget(segment);
    if (segment.index !== null) {
      this.touch(segment);
      return segment.index;
    }
    let loading = this.loading.get(segment);
    if (loading === undefined) {
      loading = this.load(segment, rebuild).finally(() => this.loading.delete(segment));
      this.loading.set(segment, loading);
    }
    return loading;
  }

  /** A segment just sealed by a roll: its in-memory index becomes a cache entry. */
  adopt(segment: Segment): void {
    if (segment.index !== null) this.touch(segment);
  }

  forget(segment: Segment): void {
    this.cached.delete(segment);
    segment.index = null;
  }

  private async load(segment: Segment, rebuild: boolean): Promise<SparseIndex> {
    const fromFile = rebuild ? null : await loadIndexFile(segment.indexPath, segment.baseLsn, segment.sizeBytes, this.intervalBytes);
    const index = fromFile ?? (await this.rebuild(segment));
    segment.index = index;
    this.touch(segment);
    return index;
  }

  private async rebuild(segment: Segment): Promise<SparseIndex> {
    const scan = await scanSegment(segment.path, segment.baseLsn, this.intervalBytes);
    if (scan.damage !== null) {
      throw logCorrupt(segment.fileName, scan.damage.positionBytes, `${scan.damage.what} (found while rebuilding its sparse index)`);
    }
    if (scan.lastLsn !== segment.lastLsn || scan.fileSizeBytes !== segment.sizeBytes) {
      throw logCorrupt(
        segment.fileName,
        scan.validSizeBytes,
        `it now holds LSNs up to ${scan.lastLsn} in ${scan.fileSizeBytes} bytes, where the log knew LSNs up to ${segment.lastLsn} in ${segment.sizeBytes} bytes (changed by something other than svcdb)`,
      );
    }
    try {
      await writeIndexFile(segment.indexPath, scan.index, { baseLsn: segment.baseLsn, lastLsn: segment.lastLsn, segmentSizeBytes: segment.sizeBytes });
    } catch (error) {
      // Only a cache: the read goes on with the index in memory.
      this.logger.warn({ segment: segment.fileName, err: error }, 'log: could not write a rebuilt sparse index');
    }
    this.logger.info({ segment: segment.fileName, entryCount: scan.index.entryCount }, 'log: rebuilt a sparse index');
    return scan.index;
  }

  private touch(segment: Segment): void {
    this.cached.delete(segment);
    this.cached.add(segment);
    for (const oldest of this.cached) {
      if (this.cached.size <= LOG_LIMITS.sparseIndexCacheCountMax) break;
      this.forget(oldest);
    }
  }
}
