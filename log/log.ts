import { SvcError, shuttingDown } from '../core/errors.js';
import type { Lsn } from '../core/units.js';
import type { Observable } from 'rxjs';
import { ActiveSegment } from './active-segment.js';
import { DurableHead } from './durable-head.js';
import { GroupCommitWriter } from './group-commit.js';
import { LOG_LIMITS } from './limits.js';
import { readLog, type ReadSource } from './reader.js';
import { recoverSegments } from './recovery.js';
import { SegmentIndexes } from './segment-indexes.js';
import { fsyncDirectory, removeFileIfPresent, type Segment } from './segment.js';
import type { SparseIndex } from './sparse-index.js';
import { TailCache } from './tail-cache.js';
import type { AppendResult, Log, LogEntry, LogOptions, LogStats, ReadOptions, RecoveryReport, SegmentInfo } from './types.js';

/** Opens (creating if needed) the log in options.dir, recovering a torn tail first. */
export async function openLog(options: LogOptions): Promise<Log> {
  validateOptions(options);
  const { segments, report } = await recoverSegments(options);
  const active = await ActiveSegment.open(segments.at(-1) as Segment);
  const log = new FileLog(options, segments, report, active);
  options.logger.info({ segmentCount: segments.length, firstLsn: log.firstLsn, lastLsn: log.headLsn, bytesTruncated: report.bytesTruncated }, 'log: opened');
  return log;
}

/** The Log: wires the segment list, the group-commit writer, the durable head and the readers. */
class FileLog implements Log, ReadSource {
  private readonly segmentList: Segment[];
  private readonly head: DurableHead;
  private readonly writer: GroupCommitWriter;
  private readonly indexes: SegmentIndexes;
  readonly tail = new TailCache(LOG_LIMITS.tailCacheBytesMax);
  readonly readCounts = { memory: 0, files: 0 };
  private isClosed = false;

  constructor(
    private readonly options: LogOptions,
    segments: Segment[],
    readonly recovery: RecoveryReport,
    active: ActiveSegment,
  ) {
    this.segmentList = segments;
    this.head = new DurableHead(active.segment.lastLsn);
    this.indexes = new SegmentIndexes(options.indexIntervalBytes, options.logger);
    this.writer = new GroupCommitWriter(
      active,
      this.head,
      options,
      (sealed, created) => {
        this.segmentList.push(created);
        this.indexes.adopt(sealed);
      },
      this.tail,
    );
  }

  get firstLsn(): Lsn {
    return (this.segmentList[0] as Segment).baseLsn;
  }

  get headLsn(): Lsn {
    return this.writer.headLsn;
  }

  get durableLsn(): Lsn {
    return this.head.value;
  }

  get durableLsn$(): Observable<Lsn> {
    return this.head.changes$;
  }

  get healthy(): boolean {
    return this.writer.healthy;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  append(payload: Uint8Array): AppendResult {
    return this.writer.append(payload);
  }

  whenWritable(signal?: AbortSignal): Promise<void> {
    return this.writer.whenWritable(signal);
  }

  get writable(): boolean {
    return this.writer.writable;
  }

  whenWritten(recordLsn: Lsn): Promise<void> {
    return this.writer.whenWritten(recordLsn);
  }

  read(fromLsn: Lsn, options: ReadOptions = {}): AsyncIterable<LogEntry[]> {
    return readLog(this, fromLsn, {
      batchBytesMax: options.batchBytesMax ?? this.options.readBatchBytesMax,
      toLsn: options.toLsn,
      signal: options.signal,
    });
  }

  waitForDurable(target: Lsn, signal?: AbortSignal): Promise<void> {
    return this.head.wait(target, signal);
  }

  /** Deletes the oldest segments whose every record is below belowLsn; never the active (last) one. */
  async retain(belowLsn: Lsn): Promise<{ segmentsDeleted: number }> {
    if (this.isClosed) throw shuttingDown();
    const doomed: Segment[] = [];
    // Taken out of the list first, so no new reader starts on them; open readers keep their descriptors.
    while (this.segmentList.length > 1 && (this.segmentList[0] as Segment).lastLsn < belowLsn) {
      doomed.push(this.segmentList.shift() as Segment);
    }
    if (doomed.length === 0) return { segmentsDeleted: 0 };
    for (const segment of doomed) {
      this.indexes.forget(segment);
      await removeFileIfPresent(segment.indexPath);
      await removeFileIfPresent(segment.path);
    }
    await fsyncDirectory(this.options.dir);
    this.options.logger.info({ segmentsDeleted: doomed.length, firstLsn: this.firstLsn }, 'log: retention deleted segments');
    return { segmentsDeleted: doomed.length };
  }

  segments(): readonly SegmentInfo[] {
    return this.segmentList.map((segment) => segment.info());
  }

  sync(): Promise<void> {
    return this.writer.sync();
  }

  stats(): LogStats {
    const reads = { recordsReadFromMemory: this.readCounts.memory, recordsReadFromFiles: this.readCounts.files };
    const tail = this.tail;
    const tailCache = {
      tailCacheRecords: tail.first === null ? 0 : tail.last! - tail.first + 1,
      tailCacheFirstLsn: tail.first ?? 0,
      tailCacheBytes: tail.bytesHeld,
    };
    return { ...this.writer.stats(), segmentCount: this.segmentList.length, ...reads, ...tailCache };
  }

  async close(): Promise<void> {
    try {
      await this.writer.close();
    } finally {
      this.isClosed = true;
    }
  }

  segmentFor(recordLsn: Lsn): Segment | undefined {
    const list = this.segmentList;
    let lo = 0;
    let hi = list.length - 1;
    let found: Segment | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const segment = list[mid] as Segment;
      if (segment.baseLsn <= recordLsn) {
        found = segment;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  indexFor(segment: Segment, rebuild: boolean): Promise<SparseIndex> {
    // The active segment's index lives in memory and is extended by each flush.
    if (segment === this.segmentList.at(-1) && segment.index !== null) return Promise.resolve(segment.index);
    return this.indexes.get(segment, rebuild);
  }
}

function validateOptions(options: LogOptions): void {
  const positive = ['segmentSizeBytesMax', 'fsyncIntervalMs', 'readBatchBytesMax', 'indexIntervalBytes'] as const;
  for (const key of positive) {
    const value = options[key];
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new SvcError('CONFIG_INVALID', `log option ${key} must be a positive integer, got ${String(value)}`, { option: key });
    }
  }
  if (options.durability !== 'commit' && options.durability !== 'interval') {
    throw new SvcError('CONFIG_INVALID', `log option durability must be commit or interval, got ${String(options.durability)}`, { option: 'durability' });
  }
  if (typeof options.dir !== 'string' || options.dir === '') {
    throw new SvcError('CONFIG_INVALID', 'log option dir must be a directory path', { option: 'dir' });
  }
}
