import { SvcError, assert, shuttingDown } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { lsn, type Lsn } from '../core/units.js';
import { ActiveSegment } from './active-segment.js';
import type { DurableHead } from './durable-head.js';
import { frameSizeBytes } from './frame.js';
import { LOG_LIMITS } from './limits.js';
import { fsyncDirectory, type Segment } from './segment.js';
import type { TailCache } from './tail-cache.js';
import type { AppendResult, LogOptions, LogStats } from './types.js';
import { WriteQueue, type WriteBatch } from './write-queue.js';

type WriterState = 'open' | 'closing' | 'failed' | 'closed';

interface Settle {
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** A written batch whose fdatasync runs; settled resolves when it ended (a failure fails the writer). */
interface SyncEntry {
  readonly batch: WriteBatch;
  synced: boolean;
  settled: Promise<void>;
}

export type WriterOptions = Pick<LogOptions, 'dir' | 'durability' | 'fsyncIntervalMs' | 'segmentSizeBytesMax' | 'indexIntervalBytes' | 'logger'>;

/**
 * Group commit (leader/follower batching). append() only queues; one flush loop writes a batch
 * with one writev and makes it durable with one fdatasync. Appends made while a flush is in
 * flight form the next batch, so under load each fsync covers every writer that arrived during
 * the previous one. After any write failure the writer refuses appends: what reached the disk is
 * unknown until recovery re-reads it on the next open.
 */
export class GroupCommitWriter {
  private state: WriterState = 'open';
  private failure: SvcError | null = null;
  private head: Lsn;
  private readonly queue: WriteQueue;
  private running = false;
  private scheduled = false;
  private inFlight: WriteBatch | null = null;
  /**
   * Written batches whose fdatasync is in flight, oldest first (commit durability). A batch is
   * acknowledged only once its own fdatasync and those of every batch before it succeeded.
   */
  private syncing: SyncEntry[] = [];
  private syncRequested = false;
  private readonly syncWaiters: Settle[] = [];
  private writableWaiters: Settle[] = [];
  /** The last LSN written to its segment (its fdatasync started), and who waits for a later one (whenWritten). */
  private writtenLsn: Lsn;
  private writtenWaiters: { readonly lsn: Lsn; readonly resolve: () => void }[] = [];
  private idleWaiters: (() => void)[] = [];
  private pendingBytes = 0;
  private closing: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout | null = null;
  private readonly logger: Logger;
  private readonly counters = { appendCount: 0, flushCount: 0, fsyncCount: 0, rollCount: 0, bytesWritten: 0 };

  constructor(
    private active: ActiveSegment,
    private readonly durableHead: DurableHead,
    private readonly options: WriterOptions,
    /** Called once a new segment exists and the old one is sealed. */
    private readonly onRoll: (sealed: Segment, created: Segment) => void,
    /** Gets each batch's payloads once written (and synced, with commit durability), before the head moves. */
    private readonly tail: TailCache | null = null,
  ) {
    const { segment } = active;
    this.head = segment.lastLsn;
    this.writtenLsn = segment.lastLsn;
    this.logger = options.logger;
    const lastIndexed = segment.index?.positions.at(-1);
    this.queue = new WriteQueue({
      segmentSizeBytesMax: options.segmentSizeBytesMax,
      indexIntervalBytes: options.indexIntervalBytes,
      activeSizeBytes: segment.sizeBytes,
      activeLastIndexedBytes: lastIndexed ?? Number.NEGATIVE_INFINITY,
    });
    if (options.durability === 'interval') {
      this.timer = setInterval(() => this.requestIntervalSync(), options.fsyncIntervalMs);
      this.timer.unref();
    }
  }

  get headLsn(): Lsn {
    return this.head;
  }

  get healthy(): boolean {
    return this.state === 'open';
  }

  stats(): Omit<LogStats, 'segmentCount' | 'recordsReadFromMemory' | 'recordsReadFromFiles' | 'tailCacheRecords' | 'tailCacheFirstLsn' | 'tailCacheBytes'> {
    return { ...this.counters, pendingBytes: this.pendingBytes };
  }

  append(payload: Uint8Array): AppendResult {
    assert(payload instanceof Uint8Array, 'a log payload is a Uint8Array');
    if (this.state !== 'open') throw this.failure ?? shuttingDown();
    if (payload.length > LOG_LIMITS.recordPayloadBytesMax) {
      throw new SvcError('PAYLOAD_TOO_LARGE', `a log record holds at most ${LOG_LIMITS.recordPayloadBytesMax} bytes, got ${payload.length}`, {
        sizeBytes: payload.length,
        sizeBytesMax: LOG_LIMITS.recordPayloadBytesMax,
      });
    }
    const frameBytes = frameSizeBytes(payload.length);
    if (this.pendingBytes > 0 && this.pendingBytes + frameBytes > LOG_LIMITS.appendQueueBytesHardMax) {
      throw new SvcError('LIMIT_EXCEEDED', `the log append queue holds ${this.pendingBytes} unwritten bytes; await whenWritable() before appending`, {
        pendingBytes: this.pendingBytes,
        pendingBytesMax: LOG_LIMITS.appendQueueBytesHardMax,
      });
    }
    const recordLsn = lsn(this.head + 1);
    this.head = recordLsn;
    const durable = this.queue.push(recordLsn, payload);
    this.pendingBytes += frameBytes;
    this.counters.appendCount++;
    this.schedule();
    return { lsn: recordLsn, durable };
  }

  /** whenWritable() would resolve at once. */
  get writable(): boolean {
    return this.state === 'open' && this.pendingBytes < LOG_LIMITS.appendQueueBytesMax;
  }

  /** Resolves when fewer than appendQueueBytesMax bytes wait to be written (backpressure). */
  whenWritable(signal?: AbortSignal): Promise<void> {
    if (this.state !== 'open') return Promise.reject(this.failure ?? shuttingDown());
    if (this.pendingBytes < LOG_LIMITS.appendQueueBytesMax) return Promise.resolve();
    signal?.throwIfAborted();
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.writableWaiters = this.writableWaiters.filter((w) => w !== waiter);
        reject(signal?.reason);
      };
      const waiter: Settle = {
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reject,
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.writableWaiters.push(waiter);
    });
  }

  /** Resolves once `recordLsn` is written and its fdatasync started; at once when the log failed or is closing. */
  whenWritten(recordLsn: Lsn): Promise<void> {
    if (recordLsn <= this.writtenLsn || this.state !== 'open') return Promise.resolve();
    return new Promise((resolve) => this.writtenWaiters.push({ lsn: recordLsn, resolve }));
  }

  /** Tells whenWritten's waiters up to `lastLsn` (all of them with null: the log failed or closed). */
  private wroteThrough(lastLsn: Lsn | null): void {
    if (lastLsn !== null) this.writtenLsn = lastLsn;
    if (this.writtenWaiters.length === 0) return;
    const done = lastLsn === null ? this.writtenWaiters : this.writtenWaiters.filter((w) => w.lsn <= lastLsn);
    if (done.length === 0) return;
    this.writtenWaiters = lastLsn === null ? [] : this.writtenWaiters.filter((w) => w.lsn > lastLsn);
    for (const waiter of done) waiter.resolve();
  }

  /** Everything appended so far is durable (in interval mode: fdatasynced) when this resolves. */
  async sync(): Promise<void> {
    if (this.failure !== null) throw this.failure;
    await this.durableHead.wait(this.head);
    if (this.options.durability === 'commit') return;
    // Closing seals the segment with an fdatasync of its own; a second one could race its close.
    if (this.closing !== null) return this.closing;
    await new Promise<void>((resolve, reject) => {
      this.syncWaiters.push({ resolve, reject });
      this.syncRequested = true;
      this.schedule();
    });
  }

  /** Refuses new appends, lets queued ones finish, syncs and seals the active segment. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  private async closeOnce(): Promise<void> {
    const failedBefore = this.state === 'failed';
    if (this.state === 'open') this.state = 'closing';
    if (this.timer !== null) clearInterval(this.timer);
    await this.idle();
    if (this.state === 'closing') {
      try {
        if (await this.active.seal(this.logger)) this.counters.fsyncCount++;
      } catch (cause) {
        this.fail(cause);
      }
    }
    if (this.state === 'failed') await this.active.closeAfterFailure();
    const failure = this.failure;
    this.state = 'closed';
    this.wroteThrough(null);
    this.durableHead.end(shuttingDown(), true);
    // An earlier failure was already reported to the appends it hit; report only what close hit.
    if (failure !== null && !failedBefore) throw failure;
  }

  private schedule(): void {
    if (this.running || this.scheduled) return;
    this.scheduled = true;
    // setImmediate, not a microtask: every append made by the I/O callbacks of this loop turn
    // joins the batch before the flush starts.
    setImmediate(() => void this.run());
  }

  private idle(): Promise<void> {
    if (!this.running && !this.scheduled && this.syncing.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private notifyIdle(): void {
    if (this.running || this.scheduled || this.syncing.length > 0) return;
    const idle = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of idle) resolve();
  }

  private async run(): Promise<void> {
    this.scheduled = false;
    this.running = true;
    try {
      while (this.state === 'open' || this.state === 'closing') {
        if (this.syncRequested) {
          await this.drainSyncs();
          await this.syncNow();
          continue;
        }
        if (this.options.durability === 'commit' && this.syncing.length >= LOG_LIMITS.syncsInFlightMax) {
          await this.awaitSyncSlot();
          continue;
        }
        const batch = this.queue.take();
        if (batch === null) break;
        this.inFlight = batch;
        await this.flush(batch);
        this.inFlight = null;
      }
    } catch (cause) {
      this.fail(cause);
    } finally {
      this.running = false;
      this.notifyIdle();
    }
  }

  /**
   * Waits, before taking the next batch, until an fdatasync slot is free. A batch taken first and
   * then held while the oldest fdatasync ran was closed too early: every append made during that
   * wait formed the batch after it, and waited for one more fdatasync (the queue's records cost
   * nothing more to write and sync in the same batch). Not one more event-loop turn after the
   * slot frees (as schedule() waits): measured, it gathered no more records per fdatasync.
   */
  private async awaitSyncSlot(): Promise<void> {
    await this.syncing[0]!.settled;
    this.throwIfFailed();
  }

  /**
   * Writes a batch (writes stay one at a time, in LSN order) and starts its fdatasync without
   * waiting for it: the next batch is written while it runs, and up to syncsInFlightMax
   * fdatasyncs overlap, so a disk that serves concurrent flushes acknowledges sooner.
   */
  private async flush(batch: WriteBatch): Promise<void> {
    if (batch.startsSegment) {
      // Sealing closes the segment's descriptor: no fdatasync may still run on it.
      await this.drainSyncs();
      await this.roll(batch.firstLsn);
    }
    while (this.syncing.length >= LOG_LIMITS.syncsInFlightMax) await this.syncing[0]!.settled;
    if (this.failure !== null) throw this.failure;
    await this.active.write(batch.buffers, batch.sizeBytes);
    // An earlier batch's fdatasync may have failed during the write: this one is not durable either.
    this.throwIfFailed();
    const { segment } = this.active;
    segment.lastLsn = batch.lastLsn;
    const entries = batch.indexEntries;
    for (let i = 0; i < entries.length; i += 2) segment.index?.add(entries[i] as number, entries[i + 1] as number);
    this.counters.flushCount++;
    this.counters.bytesWritten += batch.sizeBytes;
    this.release(batch.sizeBytes);
    if (this.options.durability !== 'commit') {
      this.wroteThrough(batch.lastLsn);
      return this.acknowledge(batch);
    }
    const entry: SyncEntry = { batch, synced: false, settled: Promise.resolve() };
    this.syncing.push(entry);
    // After the write: this fdatasync covers the batch and every batch written before it.
    entry.settled = this.active.datasync().then(
      (synced) => {
        if (synced) this.counters.fsyncCount++;
        // The log failed meanwhile (an earlier batch's fdatasync): nothing after it is acknowledged.
        if (this.failure !== null) return;
        entry.synced = true;
        this.acknowledgeSynced();
      },
      (cause: unknown) => this.fail(cause),
    );
    // The fdatasync runs in the thread pool now: whoever waits for it may work meanwhile.
    this.wroteThrough(batch.lastLsn);
  }

  /** Throws the log's failure, if it failed (a check after an await, where the compiler still assumes the one before it). */
  private throwIfFailed(): void {
    if (this.failure !== null) throw this.failure;
  }

  /** Acknowledges, in LSN order, the batches whose fdatasync and every earlier one succeeded. */
  private acknowledgeSynced(): void {
    while (this.syncing.length > 0 && this.syncing[0]!.synced) this.acknowledge(this.syncing.shift()!.batch);
    this.notifyIdle();
  }

  private acknowledge(batch: WriteBatch): void {
    this.tail?.add(batch.firstLsn, batch.payloads);
    this.durableHead.advance(batch.lastLsn);
    batch.resolve();
  }

  /** Waits until no fdatasync of a written batch is in flight (before a roll, a forced sync or close). */
  private async drainSyncs(): Promise<void> {
    // The oldest: once it settles, every later one already synced is acknowledged with it.
    while (this.syncing.length > 0) await this.syncing[0]!.settled;
    if (this.failure !== null) throw this.failure;
  }

  /** Seal the full segment (fsync, index), create the next, fsync the directory so its name is durable. */
  private async roll(baseLsn: Lsn): Promise<void> {
    const sealed = this.active;
    if (await sealed.seal(this.logger)) this.counters.fsyncCount++;
    this.active = await ActiveSegment.create(this.options.dir, baseLsn, this.options.indexIntervalBytes);
    await fsyncDirectory(this.options.dir);
    this.counters.rollCount++;
    this.onRoll(sealed.segment, this.active.segment);
    this.logger.debug({ sealed: sealed.segment.fileName, created: this.active.segment.fileName }, 'log: rolled segment');
  }

  private async syncNow(): Promise<void> {
    this.syncRequested = false;
    const count = this.syncWaiters.length;
    if (await this.active.datasync()) this.counters.fsyncCount++;
    for (const waiter of this.syncWaiters.splice(0, count)) waiter.resolve();
  }

  private requestIntervalSync(): void {
    if (this.state !== 'open' && this.state !== 'closing') return;
    if (!this.active.hasUnsyncedBytes) return;
    this.syncRequested = true;
    this.schedule();
  }

  private release(sizeBytes: number): void {
    this.pendingBytes -= sizeBytes;
    if (this.pendingBytes >= LOG_LIMITS.appendQueueBytesMax || this.writableWaiters.length === 0) return;
    const waiters = this.writableWaiters;
    this.writableWaiters = [];
    for (const waiter of waiters) waiter.resolve();
  }

  private fail(cause: unknown): void {
    if (this.state === 'failed') return;
    const segment = this.active.segment.fileName;
    const reason = cause instanceof Error ? cause.message : String(cause);
    const error = new SvcError(
      'STORAGE_UNAVAILABLE',
      `writing the log failed in segment ${segment} (${reason}); what reached the disk is unknown, ` +
        'so the log refuses appends until it is reopened (recovery then re-checks the tail)',
      { segment },
      cause,
    );
    this.failure = error;
    this.state = 'failed';
    this.logger.error({ segment, err: cause }, 'log: write failed; appends refused until the log is reopened');
    this.inFlight?.reject(error);
    this.inFlight = null;
    for (const entry of this.syncing.splice(0)) entry.batch.reject(error);
    for (let batch = this.queue.take(); batch !== null; batch = this.queue.take()) batch.reject(error);
    for (const waiter of this.syncWaiters.splice(0)) waiter.reject(error);
    for (const waiter of this.writableWaiters.splice(0)) waiter.reject(error);
    this.wroteThrough(null);
    this.durableHead.end(error, false);
    this.notifyIdle();
  }
}
