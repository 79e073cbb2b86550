import { lsn, type Lsn } from '../core/units.js';
import { encodeFrame, FRAME_HEADER_BYTES, frameSizeBytes } from './frame.js';
import { LOG_LIMITS } from './limits.js';

/** Records appended between two flushes: written by one writev and made durable by one fdatasync. */
export interface WriteBatch {
  /** Encoded frames, in LSN order (slices of shared chunks, or a buffer of its own for a big frame). */
  readonly buffers: Buffer[];
  sizeBytes: number;
  readonly firstLsn: Lsn;
  lastLsn: Lsn;
  /** The batch opens a new segment based at firstLsn (the previous one would grow past its max). */
  readonly startsSegment: boolean;
  /** Sparse-index entries of its records, as flat (lsn, position in segment) pairs. */
  readonly indexEntries: number[];
  /** The payload of each record, firstLsn first: views into the encoded frames (for the tail cache). */
  readonly payloads: Uint8Array[];
  /** Shared by every record of the batch: one promise per flush, not per record. */
  readonly durable: Promise<void>;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

export interface WriteQueueOptions {
  readonly segmentSizeBytesMax: number;
  readonly indexIntervalBytes: number;
  /** Where the active segment stands when the queue starts (after recovery). */
  readonly activeSizeBytes: number;
  readonly activeLastIndexedBytes: number;
}

/**
 * The append side of group commit. Encodes each frame at append time (so the caller may reuse its
 * buffer, and CRC work is spread over appends instead of stalling the flush) into 1 MiB chunks,
 * cuts batches at write-size and segment boundaries, and computes each record's file position and
 * index entry from the projected segment size: the flusher then needs no per-record work.
 */
export class WriteQueue {
  private open: WriteBatch | null = null;
  private readonly sealed: WriteBatch[] = [];
  private chunk = Buffer.allocUnsafe(0);
  private chunkUsedBytes = 0;
  /** Start of the chunk region that belongs to the open batch. */
  private regionStartBytes = 0;
  /** Size the segment being filled will have once every queued frame is written. */
  private segmentSizeBytes: number;
  private lastIndexedBytes: number;
  private startNewSegment = false;

  constructor(private readonly options: WriteQueueOptions) {
    this.segmentSizeBytes = options.activeSizeBytes;
    this.lastIndexedBytes = options.activeLastIndexedBytes;
  }

  get isEmpty(): boolean {
    return this.open === null && this.sealed.length === 0;
  }

  /** Queues a record; returns the durable promise of the batch it joined. */
  push(recordLsn: Lsn, payload: Uint8Array): Promise<void> {
    const frameBytes = frameSizeBytes(payload.length);
    // Roll before a record that would take a non-empty segment past its max: a segment holds
    // at least one record, however big.
    if (this.segmentSizeBytes > 0 && this.segmentSizeBytes + frameBytes > this.options.segmentSizeBytesMax) {
      this.sealOpen();
      this.segmentSizeBytes = 0;
      this.lastIndexedBytes = Number.NEGATIVE_INFINITY;
      this.startNewSegment = true;
    }
    if (this.open !== null && this.open.sizeBytes + frameBytes > LOG_LIMITS.writeBatchBytesMax) this.sealOpen();
    const batch = this.open ?? this.openBatch(recordLsn);
    const positionBytes = this.segmentSizeBytes;
    if (positionBytes - this.lastIndexedBytes >= this.options.indexIntervalBytes) {
      batch.indexEntries.push(recordLsn, positionBytes);
      this.lastIndexedBytes = positionBytes;
    }
    this.encode(batch, recordLsn, payload, frameBytes);
    this.segmentSizeBytes += frameBytes;
    batch.sizeBytes += frameBytes;
    batch.lastLsn = recordLsn;
    return batch.durable;
  }

  /** The next batch to write (oldest first), or null when nothing waits. */
  take(): WriteBatch | null {
    const next = this.sealed.shift();
    if (next !== undefined) return next;
    const open = this.open;
    if (open === null) return null;
    this.closeRegion(open);
    this.open = null;
    return open;
  }

  private openBatch(firstLsn: Lsn): WriteBatch {
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    const durable = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // Shared by many callers, some of whom may not await it: a failure must not become an
    // unhandled rejection that kills the process. Callers that await still see it.
    durable.catch(() => undefined);
    const batch: WriteBatch = {
      buffers: [],
      sizeBytes: 0,
      firstLsn,
      lastLsn: lsn(firstLsn - 1),
      startsSegment: this.startNewSegment,
      indexEntries: [],
      payloads: [],
      durable,
      resolve,
      reject,
    };
    this.startNewSegment = false;
    this.open = batch;
    return batch;
  }

  private sealOpen(): void {
    if (this.open === null) return;
    this.closeRegion(this.open);
    this.sealed.push(this.open);
    this.open = null;
  }

  private encode(batch: WriteBatch, recordLsn: Lsn, payload: Uint8Array, frameBytes: number): void {
    if (frameBytes > LOG_LIMITS.writeChunkFrameBytesMax) {
      this.closeRegion(batch);
      const own = Buffer.allocUnsafe(frameBytes);
      encodeFrame(own, 0, recordLsn, payload);
      batch.buffers.push(own);
      batch.payloads.push(own.subarray(FRAME_HEADER_BYTES));
      return;
    }
    if (this.chunk.length - this.chunkUsedBytes < frameBytes) {
      this.closeRegion(batch);
      // A fresh chunk rather than reuse: slices of the old one may still be in a writev.
      this.chunk = Buffer.allocUnsafe(LOG_LIMITS.writeChunkBytes);
      this.chunkUsedBytes = 0;
      this.regionStartBytes = 0;
    }
    const at = this.chunkUsedBytes;
    this.chunkUsedBytes = encodeFrame(this.chunk, at, recordLsn, payload);
    batch.payloads.push(this.chunk.subarray(at + FRAME_HEADER_BYTES, this.chunkUsedBytes));
  }

  /** Hands the chunk bytes encoded so far for this batch over to it. */
  private closeRegion(batch: WriteBatch): void {
    if (this.chunkUsedBytes > this.regionStartBytes) {
      batch.buffers.push(this.chunk.subarray(this.regionStartBytes, this.chunkUsedBytes));
      this.regionStartBytes = this.chunkUsedBytes;
    }
  }
}
