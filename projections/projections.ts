import { decodeLogRecord, nextSequenceAfter } from '../core/log-records.js';
import type { Logger } from '../core/logger.js';
import type { Lsn } from '../core/units.js';
import type { Log } from '../log/index.js';
import { AppliedTracker } from './applied-tracker.js';
import type { CatalogState } from './catalog-state.js';
import { runConsumer } from './consumer.js';
import { ReadBarrier } from './read-barrier.js';
import { RecordHandoff } from './record-handoff.js';
import { RowVersionedStore } from './row-versions.js';
import { Sequencer } from './sequencer.js';
import type { StateStore } from './state-store.js';
import { TablesProjection } from './tables-projection.js';
import { VectorProjection } from './vector-projection.js';

export interface ProjectionOptions {
  readonly readBatchBytesMax: number;
  /** Delete log segments every consumer has applied (off by default: the log is the database). */
  readonly retentionEnabled: boolean;
  readonly logger: Logger;
  /** Where the vector projection keeps its checkpoints (DataDirLayout.vectorDir). */
  readonly vectorDir: string;
  /** A vector checkpoint after this many records or this many ms, whichever first (defaults: 10000, 60000). */
  readonly vectorCheckpointRecordsMax?: number;
  readonly vectorCheckpointIntervalMs?: number;
  /** How long stop() lets the projections apply what was answered before it (default STOP_DRAIN_MS_DEFAULT). */
  readonly stopDrainMsMax?: number;
}

export const VECTOR_CHECKPOINT_DEFAULTS = { recordsMax: 10_000, intervalMs: 60_000 };

/**
 * stop() waits at most this long for the projections to apply every acknowledged write. The
 * tables keep up within milliseconds; the vector graphs can be seconds or minutes behind after a
 * bulk upsert (200,000 vectors took ~14 s to stop), and the process gives up on a shutdown after
 * SVC_SHUTDOWN_TIMEOUT_MS + 5 s (docker stop sends SIGKILL after 10). Past it the projections stop
 * at a record boundary (the vector apply waits for the hnsw worker every vectorSyncRowsMax inserts,
 * so that is at most about that much more work, then the checkpoint), the vector checkpoint holds
 * what was applied, and the next start applies the rest from the log before it is ready, as after
 * a crash: nothing acknowledged is lost.
 */
export const STOP_DRAIN_MS_DEFAULT = 5_000;

export interface ConsumerOffset {
  readonly name: string;
  readonly offset: Lsn;
}

/**
 * The running projections over one log and one store, and the sequencer that writes through them.
 * The composition root builds the log and the store and hands them in.
 */
export class Projections {
  /** Applied by every projection a read uses (the lower of tables and vectors): read-your-writes. */
  readonly applied: AppliedTracker;
  /** Applied by the tables projection alone. */
  readonly tablesApplied: AppliedTracker;
  /**
   * Where every read of the projections begins (read-barrier.ts): a row write is answered once
   * durable, and a read waits here until every write answered before it is applied by the
   * projections it reads (the tables alone, or the tables and the vector graphs for a vector search).
   */
  readonly readBarrier: ReadBarrier;
  readonly sequencer: Sequencer;
  private readonly abort: AbortController;
  private loops: Promise<void>[] = [];
  private vectorsAppliedLsn: Lsn;

  private constructor(
    readonly log: Log,
    /** The store, counting writes to each table's rows (row-versions.ts) for the query layer. */
    readonly store: RowVersionedStore,
    readonly tables: TablesProjection,
    readonly vectors: VectorProjection,
    handoff: RecordHandoff,
    private readonly options: ProjectionOptions,
    tablesApplied: AppliedTracker,
    abort: AbortController,
    nextSequence: bigint,
  ) {
    this.abort = abort;
    this.tablesApplied = tablesApplied;
    this.vectorsAppliedLsn = vectors.offset;
    this.applied = new AppliedTracker(Math.min(tables.offset, vectors.offset) as Lsn);
    this.readBarrier = new ReadBarrier(tablesApplied, this.applied);
    // Every record durable in the log may have been answered before a crash, applied or not: a
    // read after a restart waits until the catch-up applied them all (found by review: the server
    // listens before it catches up, and a first read missed acknowledged rows).
    this.readBarrier.acknowledge(log.durableLsn);
    this.sequencer = new Sequencer({ log, store, catalog: tables.catalog, applied: this.applied, handoff, readBarrier: this.readBarrier, nextSequence });
  }

  static async open(log: Log, rawStore: StateStore, options: ProjectionOptions): Promise<Projections> {
    const store = new RowVersionedStore(rawStore);
    const handoff = new RecordHandoff();
    const tables = await TablesProjection.load(store, options.logger.child({ component: 'tables-projection' }), handoff);
    const tablesApplied = new AppliedTracker(tables.offset);
    const abort = new AbortController();
    const vectors = await VectorProjection.load({
      dir: options.vectorDir,
      store: rawStore,
      // A stop while a backfill waits for the tables: the batch fails and is not checkpointed.
      tablesApplied: (lsn) => waitOrAbort(tablesApplied.waitFor(lsn), abort.signal),
      checkpointRecordsMax: options.vectorCheckpointRecordsMax ?? VECTOR_CHECKPOINT_DEFAULTS.recordsMax,
      checkpointIntervalMs: options.vectorCheckpointIntervalMs ?? VECTOR_CHECKPOINT_DEFAULTS.intervalMs,
      logger: options.logger.child({ component: 'vector-projection' }),
      handoff,
      stopping: abort.signal,
    });
    // The log's last record says where sequences continue; the projection's copy covers a log whose
    // records are gone (an empty active segment after retention).
    const next = await nextEventSequence(log);
    return new Projections(log, store, tables, vectors, handoff, options, tablesApplied, abort, next > tables.nextSequence ? next : tables.nextSequence);
  }

  get catalog(): CatalogState {
    return this.tables.catalog;
  }

  /** True once every consumer has applied everything durable at the time of asking. */
  get caughtUp(): boolean {
    return this.applied.failed === null && this.applied.lsn >= this.log.durableLsn;
  }

  get healthy(): boolean {
    return this.applied.failed === null;
  }

  consumers(): ConsumerOffset[] {
    // The vector projection's durable offset is its last checkpoint: retention keeps the log above it.
    const own = [
      { name: this.tables.name, offset: this.tables.offset },
      { name: this.vectors.name, offset: this.vectors.durableOffset },
    ];
    return [...own, ...[...this.retentionHolds].map(([name, offset]) => ({ name, offset: offset() }))];
  }

  private readonly retentionHolds = new Map<string, () => Lsn>();

  /**
   * Keeps the log from `offset()` + 1 on for a consumer outside the projections (CDC streams): retention
   * deletes no segment it still needs.
   */
  holdRetention(name: string, offset: () => Lsn): void {
    this.retentionHolds.set(name, offset);
  }

  /** Starts following the log; resolves once caught up with the durable head as of now. */
  async start(onProgress?: (appliedLsn: Lsn, targetLsn: Lsn) => void): Promise<void> {
    const target = this.log.durableLsn;
    this.loops = [
      this.follow(
        this.tables,
        (offset) => {
          this.tablesApplied.advance(offset);
          this.advanceApplied(target, onProgress);
          // Retention runs beside the apply loop; a failure is logged and the next batch retries it.
          if (this.options.retentionEnabled)
            void this.retain(offset).catch((error: unknown) => this.options.logger.error({ err: error }, 'log retention failed'));
        },
        this.tablesApplied,
      ),
      this.follow(
        this.vectors,
        (offset) => {
          this.vectorsAppliedLsn = offset;
          this.advanceApplied(target, onProgress);
        },
        null,
      ),
    ];
    await this.applied.waitFor(target);
  }

  private follow(consumer: TablesProjection | VectorProjection, onApplied: (offset: Lsn) => void, tracker: AppliedTracker | null): Promise<void> {
    const { logger } = this.options;
    return runConsumer(this.log, consumer, {
      batchBytesMax: this.options.readBatchBytesMax,
      signal: this.abort.signal,
      logger,
      onApplied,
    }).catch((error: unknown) => {
      logger.error({ err: error, consumer: consumer.name }, 'projection stopped');
      tracker?.fail(error);
      this.applied.fail(error);
    });
  }

  /** From the consumers' onApplied only: an offset read mid-batch may cover writes not yet stored. */
  private advanceApplied(target: Lsn, onProgress?: (appliedLsn: Lsn, targetLsn: Lsn) => void): void {
    const offset = Math.min(this.tablesApplied.lsn, this.vectorsAppliedLsn) as Lsn;
    // The overlay lets go of what the store has now, and reads stop waiting, before the tracker's
    // waiters (catalog writers, transactions opening a snapshot) wake.
    this.sequencer.released(offset);
    this.readBarrier.advanced(this.tablesApplied.lsn, offset);
    this.applied.advance(offset);
    onProgress?.(offset, target);
  }

  /** Stops the apply loops (after the batches in progress), checkpoints the vectors, refuses new writes. */
  async stop(): Promise<void> {
    this.sequencer.close();
    // Writes are answered before they are applied: the apply loops finish what was answered before
    // they stop, so the stored state (and its offsets) covers every acknowledged write — for up to
    // STOP_DRAIN_MS_DEFAULT; past it the next start applies the rest from the log (as after a crash).
    if (this.loops.length > 0 && this.applied.failed === null) await this.drain(this.options.stopDrainMsMax ?? STOP_DRAIN_MS_DEFAULT);
    this.abort.abort();
    await Promise.all(this.loops);
    try {
      if (this.applied.failed === null) await this.vectors.checkpoint();
    } finally {
      await this.vectors.close();
    }
  }

  /** Waits up to `msMax` for every acknowledged write to be applied (no waiter left behind); says so when it stops short. */
  private async drain(msMax: number): Promise<void> {
    // A failed projection ends the wait too (it applies nothing more): stop() then skips the checkpoint.
    const drained = await this.readBarrier.waitAll({ deadlineMs: Date.now() + msMax, signal: undefined }).catch(() => true);
    if (!drained) {
      this.options.logger.info(
        { tablesAppliedLsn: this.tablesApplied.lsn, vectorsAppliedLsn: this.vectorsAppliedLsn, durableLsn: this.log.durableLsn, drainMsMax: msMax },
        'stopping before the projections applied every acknowledged write; the next start applies the rest from the log',
      );
    }
  }

  private retaining = false;

  /** The lowest offset of every consumer but the vector projection. */
  private minOffsetBesideVectors(): number {
    return Math.min(...this.consumers().flatMap((c) => (c.name === this.vectors.name ? [] : [c.offset])));
  }

  private async retain(belowOrAt: Lsn): Promise<void> {
    if (this.retaining) return;
    this.retaining = true;
    try {
      const oldest = this.log.segments();
      if (oldest.length < 2) return;
      let min = Math.min(...this.consumers().map((c) => c.offset));
      // An index-free vector checkpoint is only written when it holds back a segment the others no longer need.
      if (oldest[0]!.lastLsn >= min + 1 && this.vectors.durableOffset === min && oldest[0]!.lastLsn < this.minOffsetBesideVectors() + 1) {
        await this.vectors.checkpointIfIndexFree();
        min = Math.min(...this.consumers().map((c) => c.offset));
      }
      if (oldest[0]!.lastLsn >= min + 1) return; // nothing to delete yet
      // The stored offsets are what a restart resumes from: durable (power loss, not just a
      // crash) before the segments they cover are deleted. Vector checkpoints are fsynced already.
      await this.store.sync();
      const { segmentsDeleted } = await this.log.retain((min + 1) as Lsn);
      if (segmentsDeleted > 0) this.options.logger.info({ segmentsDeleted, belowLsn: min + 1, appliedLsn: belowOrAt }, 'log segments retained');
    } finally {
      this.retaining = false;
    }
  }
}

/** Where the sequencer's event sequences continue: after the log's last record. */
async function nextEventSequence(log: Log): Promise<bigint> {
  const head = log.headLsn;
  if (head < log.firstLsn || head === 0) return nextSequenceAfter(null, 0);
  for await (const batch of log.read(head)) {
    const last = batch[batch.length - 1];
    if (last) return nextSequenceAfter(decodeLogRecord(last.payload), last.lsn);
  }
  return nextSequenceAfter(null, 0);
}

function waitOrAbort(wait: Promise<void>, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(new Error('projections stopped while a vector index backfill waited for the tables'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    wait.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
