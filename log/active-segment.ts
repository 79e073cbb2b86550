import { writevSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { DATA_FILE_CREATE_MODE } from '../core/file-modes.js';
import type { Logger } from '../core/logger.js';
import { lsn, type Lsn } from '../core/units.js';
import { LOG_LIMITS } from './limits.js';
import { Segment } from './segment.js';
import { SparseIndex, writeIndexFile } from './sparse-index.js';

/** The one segment being appended to: its file handle and how much of it is known durable. */
export class ActiveSegment {
  private syncedSizeBytes: number;
  /**
   * A second descriptor of the file, for the fdatasync that overlaps another (group commit keeps
   * up to two in flight, alternating). Linux reports a writeback error once per open file
   * description: with one descriptor, the later of two overlapping syncs could take the error that
   * belongs to the earlier one's data, and the earlier one would return success. Opened with the
   * first: a descriptor opened after a writeback error may never be told of it.
   */
  private syncCount = 0;

  private constructor(
    readonly segment: Segment,
    private readonly fh: FileHandle,
    private readonly overlapFh: FileHandle,
  ) {
    this.syncedSizeBytes = segment.sizeBytes;
  }

  /** Reopens the recovered last segment (whose size recovery has verified and made durable). */
  static async open(segment: Segment): Promise<ActiveSegment> {
    return ActiveSegment.withOverlap(segment, await open(segment.path, 'r+'));
  }

  /** Creates the next segment; 'wx' because a file of that name must not already exist. */
  static async create(dir: string, baseLsn: Lsn, indexIntervalBytes: number): Promise<ActiveSegment> {
    const segment = new Segment(dir, baseLsn, lsn(baseLsn - 1), 0);
    segment.index = new SparseIndex(indexIntervalBytes);
    return ActiveSegment.withOverlap(segment, await open(segment.path, 'wx+', DATA_FILE_CREATE_MODE));
  }

  private static async withOverlap(segment: Segment, fh: FileHandle): Promise<ActiveSegment> {
    try {
      return new ActiveSegment(segment, fh, await open(segment.path, 'r'));
    } catch (error) {
      await fh.close().catch(() => undefined);
      throw error;
    }
  }

  get hasUnsyncedBytes(): boolean {
    return this.syncedSizeBytes < this.segment.sizeBytes;
  }

  /**
   * One writev at the end of the segment; a short write is a failure (we cannot know what landed).
   * A small batch (single-row inserts) is written on the calling thread: copying a few KiB into the
   * page cache costs less than handing it to the thread pool and back (two context switches and a
   * wake-up each way), and its fdatasync starts sooner; a big one goes to the thread pool.
   */
  async write(buffers: Buffer[], sizeBytes: number): Promise<void> {
    const at = this.segment.sizeBytes;
    const bytesWritten = sizeBytes <= LOG_LIMITS.inlineWriteBytesMax ? writevSync(this.fh.fd, buffers, at) : (await this.fh.writev(buffers, at)).bytesWritten;
    if (bytesWritten !== sizeBytes) {
      throw new Error(`short write: ${bytesWritten} of ${sizeBytes} bytes at offset ${at}`);
    }
    this.segment.sizeBytes += sizeBytes;
  }

  /**
   * fdatasync when something is not yet durable; returns whether it synced. At most two may run at
   * once (LOG_LIMITS.syncsInFlightMax): consecutive calls use the two descriptors in turn.
   */
  async datasync(): Promise<boolean> {
    if (!this.hasUnsyncedBytes) return false;
    const target = this.segment.sizeBytes;
    const fh = this.syncCount++ % 2 === 0 ? this.fh : this.overlapFh;
    await fh.datasync();
    if (target > this.syncedSizeBytes) this.syncedSizeBytes = target;
    return true;
  }

  /** Makes the segment durable, writes its sparse index and closes it (at roll and close); returns whether it synced. */
  async seal(logger: Logger): Promise<boolean> {
    const synced = await this.datasync();
    const { segment } = this;
    if (segment.index !== null) {
      try {
        await writeIndexFile(segment.indexPath, segment.index, {
          baseLsn: segment.baseLsn,
          lastLsn: segment.lastLsn,
          segmentSizeBytes: segment.sizeBytes,
        });
      } catch (error) {
        // The index is a cache of the segment: without it the segment is scanned and it is rebuilt.
        logger.warn({ segment: segment.fileName, err: error }, 'log: could not write a sparse index; it will be rebuilt');
      }
    }
    await this.overlapFh.close();
    await this.fh.close();
    return synced;
  }

  /** After a failure: release the descriptors, and ignore what closing says (it already failed). */
  async closeAfterFailure(): Promise<void> {
    await this.overlapFh.close().catch(() => undefined);
    await this.fh.close().catch(() => undefined);
  }
}
