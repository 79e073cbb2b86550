import { setImmediate as nextTurn } from 'node:timers/promises';
import type { TableDef } from '../core/catalog.js';
import { decodeLogRecord, type RowChange, type TxnOp } from '../core/log-records.js';
import type { Logger } from '../core/logger.js';
import { decodeRowInto } from '../core/row-codec.js';
import type { Lsn } from '../core/units.js';
import type { LogEntry } from '../log/index.js';
import type { Consumer } from './consumer.js';
import type { RecordHandoff } from './record-handoff.js';
import { idRange, KeySpace, pkOfRowKey } from './keys.js';
import type { StateStore } from './state-store.js';
import { loadCheckpoint, writeCheckpoint } from './vector-checkpoint.js';
import { HnswWorker } from './hnsw-worker-client.js';
import { hnswSpecs, VectorIndex, type VectorHit, type VectorIndexSpec } from './vector-index.js';
import { PROJECTION_LIMITS } from './limits.js';

export const VECTORS_CONSUMER = 'vectors';

export interface VectorProjectionOptions {
  /** Directory of the checkpoint files. */
  readonly dir: string;
  /** Rows of the tables projection, read when an index is created on a table that has rows. */
  readonly store: StateStore;
  /** Resolves once the tables projection has applied `lsn` (the rows a backfill reads). */
  readonly tablesApplied: (lsn: Lsn) => Promise<void>;
  /** A checkpoint after this many applied records... */
  readonly checkpointRecordsMax: number;
  /** ...or this long after the last one, whichever comes first. */
  readonly checkpointIntervalMs: number;
  readonly logger: Logger;
  /** Says which records change only rows (null: decode every record, as a replay does). */
  readonly handoff?: RecordHandoff | null;
  /** Aborted when the projections stop: a batch being applied ends at the next record boundary. */
  readonly stopping?: AbortSignal;
}

const { vectorBackfillBatchRows, vectorApplyRowsPerTurn, vectorSyncRowsMax } = PROJECTION_LIMITS;

/**
 * The vector projection: one hnsw index per hnsw IndexDef, fed by the log. The graphs live in a
 * worker thread (hnsw-worker.ts): inserts and searches run beside the event loop; a batch counts
 * as applied once the worker has it, so a search after a write's acknowledgement sees the write.
 * Its durable offset is the LSN of its last checkpoint (graph + label map files); at start it loads that checkpoint and
 * catches up from the log. It follows the catalog from the log itself, so it needs no other
 * projection's state, except the rows it backfills when an index is created on a filled table.
 */
export class VectorProjection implements Consumer {
  readonly name = VECTORS_CONSUMER;
  private readonly indexes = new Map<number, VectorIndex>();
  private appliedOffset: Lsn;
  private checkpointLsn: Lsn;
  private recordsSinceCheckpoint = 0;
  private lastCheckpointMs = Date.now();
  private rowsThisTurn = 0;
  /** Graph changes posted to the worker since the apply last waited for it. */
  private rowsSinceSync = 0;
  /** The checkpoint being written (or the last one): checkpoints run one at a time, in order. */
  private checkpointing: Promise<void> = Promise.resolve();
  private besidePending = false;
  /** True while applyBatch is inside a record: the indexes may then be ahead of appliedOffset. */
  private applying = false;

  private constructor(
    private readonly options: VectorProjectionOptions,
    private readonly worker: HnswWorker,
    lsn: Lsn,
    indexes: readonly VectorIndex[],
  ) {
    this.appliedOffset = lsn;
    this.checkpointLsn = lsn;
    for (const index of indexes) this.indexes.set(index.spec.indexId, index);
  }

  static async load(options: VectorProjectionOptions): Promise<VectorProjection> {
    const worker = HnswWorker.start();
    try {
      const { lsn, indexes } = await loadCheckpoint(options.dir, worker);
      if (indexes.length > 0) options.logger.info({ lsn, indexes: indexes.length }, 'vector indexes loaded');
      return new VectorProjection(options, worker, lsn, indexes);
    } catch (error) {
      await worker.close();
      throw error;
    }
  }

  get offset(): Lsn {
    return this.appliedOffset;
  }

  /** The LSN the files on disk cover (the log must be kept from the next one). */
  get durableOffset(): Lsn {
    return this.checkpointLsn;
  }

  /** The index with this id, or undefined (not an hnsw index, or not applied yet). */
  index(indexId: number): VectorIndex | undefined {
    return this.indexes.get(indexId);
  }

  indexSize(indexId: number): number | undefined {
    return this.indexes.get(indexId)?.size;
  }

  /** The nearest rows by an index, searched in the worker thread; null: no such index (scan exactly). */
  search(indexId: number, vector: Float32Array, k: number, ef: number): Promise<VectorHit[]> | null {
    const index = this.indexes.get(indexId);
    return index ? index.search(vector, k, ef) : null;
  }

  async applyBatch(entries: readonly LogEntry[]): Promise<void> {
    let applied = 0;
    // Without an index before, during or after the batch nothing was posted to the worker.
    let posted = this.indexes.size > 0;
    this.applying = true;
    try {
      for (const entry of entries) {
        if (entry.lsn <= this.appliedOffset) continue;
        // A stop: what is applied so far is this batch's (the next start applies the rest from the log).
        if (this.options.stopping?.aborted === true) break;
        const rowsOnly = this.options.handoff?.takeRowsOnly(entry.lsn) ?? false;
        // Row changes without any vector index change nothing here: no need to decode them.
        if (!rowsOnly || this.indexes.size > 0) for (const op of decodeLogRecord(entry.payload).ops) await this.applyOp(op, entry.lsn);
        this.appliedOffset = entry.lsn;
        applied += 1;
        posted ||= this.indexes.size > 0;
        // The worker kept at most about vectorSyncRowsMax inserts behind: a stop waits for those only.
        if (this.rowsSinceSync >= vectorSyncRowsMax) await this.synced();
      }
    } finally {
      this.applying = false;
    }
    // Applied means in the graphs: wait for the worker (this also bounds what is queued for it).
    // With no index there is nothing to wait for: a write then skips a round trip to the thread.
    if (posted) await this.synced();
    this.recordsSinceCheckpoint += applied;
    // Without indexes a checkpoint is a manifest alone. It is not written on a short timer (its two
    // fsyncs would compete with the log's own under a write load): retention asks for one when the
    // manifest is what holds a segment back (checkpointIfIndexFree); else the usual limits apply.
    const empty = this.indexes.size === 0;
    const due =
      this.recordsSinceCheckpoint >= this.options.checkpointRecordsMax ||
      (this.recordsSinceCheckpoint > 0 && Date.now() - this.lastCheckpointMs >= this.options.checkpointIntervalMs);
    if (!due) return;
    // A manifest alone holds nothing a read waits for: written beside the apply loop, its two
    // fsyncs do not hold back every write's acknowledgement. With indexes, awaited as before.
    if (empty) this.checkpointBeside();
    else await this.checkpoint();
  }

  /**
   * Replay: the records up to `lsn` that were not applied change no vector index (no catalog
   * change, no row of a table with an hnsw index), so the projection stands at `lsn`.
   */
  skipTo(lsn: Lsn): void {
    if (lsn > this.appliedOffset) this.appliedOffset = lsn;
  }

  /** Writes a checkpoint of everything applied (no-op when nothing changed since the last); one at a time. */
  checkpoint(): Promise<void> {
    const run = this.checkpointing.then(() => this.writeCheckpointNow(false));
    this.checkpointing = run.catch(() => undefined);
    return run;
  }

  /**
   * On demand (log retention): while no index exists, writes the manifest of everything applied and
   * resolves once it is durable; with indexes, or mid-record, writes nothing (the usual checkpoints
   * cover those). Resolves to the durable offset either way.
   */
  async checkpointIfIndexFree(): Promise<Lsn> {
    if (this.indexes.size === 0 && this.appliedOffset > this.checkpointLsn) {
      const run = this.checkpointing.then(() => this.writeCheckpointNow(true));
      this.checkpointing = run.catch(() => undefined);
      await run;
    }
    return this.checkpointLsn;
  }

  /** Starts an index-free checkpoint without waiting for it (at most one waits to start). */
  private checkpointBeside(): void {
    if (this.besidePending) return;
    this.besidePending = true;
    this.lastCheckpointMs = Date.now();
    const run = this.checkpointing.then(() => {
      this.besidePending = false;
      return this.writeCheckpointNow(true);
    });
    this.checkpointing = run.catch((error: unknown) => this.options.logger.error({ err: error }, 'vector checkpoint failed; the next one retries'));
  }

  /**
   * The checkpoint of the state of this moment: the applied offset and the indexes, taken together
   * synchronously. indexFree: only when there is no index (else the apply loop writes it, awaited).
   */
  private async writeCheckpointNow(indexFree: boolean): Promise<void> {
    // Mid-record the indexes may hold more than appliedOffset says: the next one due writes it.
    if (indexFree && (this.indexes.size > 0 || this.applying)) return;
    this.lastCheckpointMs = Date.now();
    if (this.appliedOffset === this.checkpointLsn) return;
    const lsn = this.appliedOffset;
    const covered = this.recordsSinceCheckpoint;
    await writeCheckpoint(this.options.dir, lsn, [...this.indexes.values()]);
    this.checkpointLsn = lsn;
    this.recordsSinceCheckpoint = Math.max(0, this.recordsSinceCheckpoint - covered);
    this.options.logger.debug({ lsn, indexes: this.indexes.size }, 'vector checkpoint written');
  }

  /** Ends the worker thread (after a checkpoint, when the projection stops). */
  async close(): Promise<void> {
    await this.checkpointing;
    await this.worker.close();
  }

  private async applyOp(op: TxnOp, lsn: Lsn): Promise<void> {
    switch (op.kind) {
      case 'row':
        return this.applyRow(op);
      case 'put_table':
        return this.putTable(op.table, lsn);
      case 'drop_table':
        return this.dropTable(op.tableId);
      case 'truncate':
        for (const index of this.indexes.values()) if (op.tableIds.includes(index.spec.tableId)) index.clear();
        return;
      default:
        return;
    }
  }

  /** Posts every index's buffered changes and waits until the worker has applied them. */
  private async synced(): Promise<void> {
    for (const index of this.indexes.values()) index.flush();
    this.rowsSinceSync = 0;
    await this.worker.call({ kind: 'sync' });
  }

  private async applyRow(change: RowChange): Promise<void> {
    for (const index of this.indexes.values()) {
      if (index.spec.tableId !== change.tableId) continue;
      index.upsert(change.key, change.after ? vectorOf(index.spec, change.after) : null);
      this.rowsSinceSync += 1;
      if (++this.rowsThisTurn >= vectorApplyRowsPerTurn) {
        this.rowsThisTurn = 0;
        await nextTurn();
      }
    }
  }

  private async putTable(def: TableDef, lsn: Lsn): Promise<void> {
    const specs = hnswSpecs(def);
    const ids = new Set(specs.map((s) => s.indexId));
    for (const index of [...this.indexes.values()]) {
      if (index.spec.tableId === def.id && !ids.has(index.spec.indexId)) this.dropIndex(index);
    }
    for (const spec of specs) {
      const existing = this.indexes.get(spec.indexId);
      if (existing && sameShape(existing.spec, spec)) continue;
      if (existing) this.dropIndex(existing);
      const index = VectorIndex.empty(spec, this.worker);
      this.indexes.set(spec.indexId, index);
      await this.backfill(index, lsn);
    }
  }

  private dropTable(tableId: number): void {
    for (const index of [...this.indexes.values()]) if (index.spec.tableId === tableId) this.dropIndex(index);
  }

  private dropIndex(index: VectorIndex): void {
    index.clear();
    this.indexes.delete(index.spec.indexId);
  }

  /**
   * Fills a new index from the table's rows as the tables projection holds them (at or after
   * `lsn`). Later records re-apply on top: upserts and deletes by key converge to the same state.
   */
  private async backfill(index: VectorIndex, lsn: Lsn): Promise<void> {
    await this.options.tablesApplied(lsn);
    let rows = 0;
    for await (const batch of this.options.store.entries({ ...idRange(KeySpace.Row, index.spec.tableId), batchSize: vectorBackfillBatchRows })) {
      for (const [key, image] of batch) index.upsert(new Uint8Array(pkOfRowKey(key)), vectorOf(index.spec, image));
      rows += batch.length;
      // Bounds what waits for the worker, and lets other requests run between batches.
      index.flush();
      await this.worker.call({ kind: 'sync' });
    }
    if (rows > 0) this.options.logger.info({ index: index.spec.name, rows }, 'vector index backfilled');
  }
}

function sameShape(a: VectorIndexSpec, b: VectorIndexSpec): boolean {
  return a.columnId === b.columnId && a.dimensions === b.dimensions && a.metric === b.metric && a.m === b.m && a.efConstruction === b.efConstruction;
}

/** The indexed column of a row image (NULL when absent). */
function vectorOf(spec: VectorIndexSpec, image: Uint8Array): Float32Array | null {
  const [value] = decodeRowInto(image, [spec.columnId], [null]);
  return value instanceof Float32Array ? value : null;
}
