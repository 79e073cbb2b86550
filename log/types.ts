import type { Observable } from 'rxjs';
import type { Logger } from '../core/logger.js';
import type { FilePositionBytes, Lsn } from '../core/units.js';

/** How a log is opened. Every option is passed explicitly (no hidden defaults below config). */
export interface LogOptions {
  /** Directory of the segment files (created if missing). */
  readonly dir: string;
  /** A segment is rolled when appending the next write batch would take it past this size. */
  readonly segmentSizeBytesMax: number;
  /** commit: append resolves after the shared fdatasync; interval: after write(), fsync on a timer. */
  readonly durability: 'commit' | 'interval';
  readonly fsyncIntervalMs: number;
  /** Default bound of one batch yielded by read(). */
  readonly readBatchBytesMax: number;
  /** One sparse-index entry per this many bytes of segment. */
  readonly indexIntervalBytes: number;
  readonly logger: Logger;
}

export interface LogEntry {
  readonly lsn: Lsn;
  /** Opaque to the log: the encoded record (see core/log-records). */
  readonly payload: Uint8Array;
}

export interface AppendResult {
  /** Assigned synchronously, in call order. */
  readonly lsn: Lsn;
  /** Resolves when the record is durable under the configured policy; rejects if the write failed. */
  readonly durable: Promise<void>;
}

export interface SegmentInfo {
  readonly baseLsn: Lsn;
  /** LSN of the last record in it; baseLsn - 1 when empty. */
  readonly lastLsn: Lsn;
  readonly sizeBytes: number;
  readonly path: string;
}

export interface RecoveryReport {
  readonly segmentCount: number;
  readonly lastLsn: Lsn;
  /** Bytes cut from the tail because they did not form a complete, CRC-valid record. */
  readonly bytesTruncated: number;
  /** Where the cut happened, when it did. */
  readonly truncatedSegment: string | null;
  readonly truncatedAtBytes: FilePositionBytes | null;
}

export interface ReadOptions {
  /** Bound of one yielded batch (at least one record is always yielded). */
  readonly batchBytesMax?: number;
  /** Stop after this LSN (inclusive). Default: the durable head when each batch is read. */
  readonly toLsn?: Lsn;
  readonly signal?: AbortSignal;
}

/** The segmented, CRC'd, group-committed write-ahead log: svcdb's one source of truth. */
export interface Log {
  readonly recovery: RecoveryReport;
  /** LSN of the oldest record still held (retention may have removed older ones); 1 when empty. */
  readonly firstLsn: Lsn;
  /** LSN of the last appended record (maybe not yet durable). */
  readonly headLsn: Lsn;
  /** LSN of the last durable record. */
  readonly durableLsn: Lsn;
  /** Emits the durable head each time it advances (a signal: consumers then pull with read()). */
  readonly durableLsn$: Observable<Lsn>;
  /**
   * Appends a record; its payload is copied before append returns (the caller may reuse the buffer:
   * the sequencer passes a view of its encoder's scratch buffer, encodeLogRecordForAppend).
   */
  append(payload: Uint8Array): AppendResult;
  /**
   * Resolves once the record at `recordLsn` is written to its segment and its fdatasync has started
   * (at once when the log failed or closed: `durable` then says so). A caller that waits for the
   * fdatasync anyway can do its own work meanwhile (the sequencer builds a bulk record's effects).
   */
  whenWritten?(recordLsn: Lsn): Promise<void>;
  /** Records with lsn >= fromLsn, in batches bounded by bytes, up to the durable head; then ends. */
  read(fromLsn: Lsn, options?: ReadOptions): AsyncIterable<LogEntry[]>;
  /** Resolves once durableLsn >= lsn. */
  waitForDurable(lsn: Lsn, signal?: AbortSignal): Promise<void>;
  /** Deletes whole segments whose every record is below belowLsn; never the active segment. */
  retain(belowLsn: Lsn): Promise<{ segmentsDeleted: number }>;
  segments(): readonly SegmentInfo[];
  /** Makes everything appended so far durable (used by shutdown and the interval policy). */
  sync(): Promise<void>;
  /** Stops accepting appends, waits for pending ones, fsyncs, writes the sparse index, closes. */
  close(): Promise<void>;
  /** False once a write failed (appends are then refused until the log is reopened) or after close. */
  readonly healthy: boolean;
  /**
   * Backpressure for append(): resolves when fewer than LOG_LIMITS.appendQueueBytesMax bytes wait
   * to be written. append() itself never waits (its LSN is assigned synchronously); past
   * LOG_LIMITS.appendQueueBytesHardMax it refuses with LIMIT_EXCEEDED.
   */
  whenWritable(signal?: AbortSignal): Promise<void>;
  /**
   * True when whenWritable() would resolve at once (open, fewer than appendQueueBytesMax bytes
   * waiting): a writer checks this first and awaits nothing then (one promise and turn fewer per
   * single-row insert).
   */
  readonly writable: boolean;
  /** Counters for tests, metrics and benchmarks. */
  stats(): LogStats;
}

export interface LogStats {
  readonly appendCount: number;
  /** Write batches written (one writev each). */
  readonly flushCount: number;
  /** fdatasyncs of segment files (group commit makes this far smaller than appendCount). */
  readonly fsyncCount: number;
  readonly rollCount: number;
  readonly bytesWritten: number;
  /** Appended bytes (frames) not yet written. */
  readonly pendingBytes: number;
  readonly segmentCount: number;
  /** Records read() served from the tail cache (memory) and from the segment files. */
  readonly recordsReadFromMemory: number;
  readonly recordsReadFromFiles: number;
  /** The tail cache: records held, their first LSN (0: none) and the bytes of the write chunks they keep alive. */
  readonly tailCacheRecords: number;
  readonly tailCacheFirstLsn: number;
  readonly tailCacheBytes: number;
}

/** What `svcdb repair` did (repairLog). */
export interface RepairReport {
  /** Bytes cut, counting whole segments deleted after the damage. */
  readonly bytesTruncated: number;
  /** File name of the segment cut at the damage, or null when nothing was damaged. */
  readonly segment: string | null;
  readonly truncatedAtBytes: FilePositionBytes | null;
  readonly segmentsDeleted: number;
  /** Last LSN the log holds after the repair. */
  readonly lastLsn: Lsn;
}

/** A read-only look at a log directory (inspectLogDir), safe while a server has the log open. */
export interface LogDirSummary {
  readonly segments: readonly SegmentInfo[];
  /** baseLsn of the first segment; 1 when there is none. */
  readonly firstLsn: Lsn;
  /** Last LSN of the valid prefix of the last segment; 0 when empty. */
  readonly lastLsn: Lsn;
}
