import type { IndexId, TableId } from '../core/catalog.js';
import { shuttingDown } from '../core/errors.js';
import { encodeLogRecordForAppend, sequenceSpan, type TxnOp, type TxnRecord } from '../core/log-records.js';
import type { Lsn } from '../core/units.js';
import type { Log } from '../log/index.js';
import type { AppliedTracker } from './applied-tracker.js';
import type { CatalogState, TableEntry } from './catalog-state.js';
import { ID_PREFIX_BYTES, idRange, indexPrefix, KeySpace, pkOfRowKey, rowKey, rowKeys } from './keys.js';
import { PROJECTION_LIMITS } from './limits.js';
import { mergedRange, type KeyRange } from './merged-range.js';
import { DeferredRecord } from './deferred-record.js';
import { rowRecordOps, rowRecordShape, type RowRecordEffects, type RowRecordShape } from './row-ops.js';
import { RowKeyBounds } from './row-key-bounds.js';
import type { RecordHandoff } from './record-handoff.js';
import type { ReadBarrier } from './read-barrier.js';
import type { StateStore } from './state-store.js';
import { prefixUpperBound } from '../core/key-encoding.js';
import { WriteBacklog } from './write-backlog.js';

/**
 * What a writer validates against: the applied state plus every change appended but not yet
 * applied. Only valid while the builder runs (the sequencer holds the write lock).
 */
export interface WriteView {
  readonly catalog: CatalogState;
  /** The current row image of a primary key, or undefined. */
  getRow(tableId: TableId, pk: Uint8Array): Promise<Uint8Array | undefined>;
  /** getRow for many keys in one LevelDB round trip (bulk INSERT checks every key). */
  getRows(tableId: TableId, pks: readonly Uint8Array[]): Promise<(Uint8Array | undefined)[]>;
  /** Rows of a table in key order: [pk, image] batches. Bounds are encoded primary keys. */
  rows(tableId: TableId, bounds?: { gte?: Uint8Array; lt?: Uint8Array; reverse?: boolean }): AsyncIterable<[Uint8Array, Uint8Array][]>;
  /**
   * Index entries starting with `indexKeyPrefix`: for each, the bytes after the prefix (the rest of
   * the index key, then the encoded primary key). With a complete index key that is the primary key.
   */
  indexEntries(indexId: IndexId, indexKeyPrefix?: Uint8Array): AsyncIterable<Uint8Array[]>;
  /**
   * Index entries in a byte range of what follows the index id (index key, then primary key), in
   * key order or reversed; yields those bytes, as indexEntries() does without a prefix.
   */
  indexRange(indexId: IndexId, bounds?: { gte?: Uint8Array; lt?: Uint8Array; reverse?: boolean }): AsyncIterable<Uint8Array[]>;
  /** Last value of a sequence including pending records. */
  sequence(name: string): bigint | undefined;
  /**
   * A primary key no row of the table (stored or pending) sorts after, null when it has none: the
   * last key or above it. Absent from a transaction's view (its own changes are not in it).
   */
  rowKeyBound?(tableId: TableId): Promise<Uint8Array | null>;
  /**
   * rowKeyBound when it is known without a read, undefined when it is not (then rowKeyBound reads
   * it): a single-row insert of a new highest key checks it without a promise. Absent where
   * rowKeyBound is.
   */
  knownRowKeyBound?(tableId: TableId): Uint8Array | null | undefined;
}

/**
 * Told of every record as it is appended (inside the write lock, in LSN order): `keys()` gives the
 * keys its row changes touch (rows and index entries), or null for a record that changes the
 * catalog. Optimistic transactions (query/txn) check their reads against these. The keys are
 * listed only when an observer asks (a bulk insert's 10,000 keys are needed only while a
 * transaction is open); valid to call during the notification only.
 */
export type AppendObserver = (lsn: Lsn, keys: () => readonly Uint8Array[] | null) => void;

/**
 * What a writer appends (null: nothing), built against the writer's view. A builder whose outcome is
 * there at once returns it as it is, not in a promise: submit() goes on to the append in the same
 * turn (an await of a settled promise is still a turn of the microtask queue per write).
 */
export type TxnBuilder<T> = (view: WriteView) => Promise<{ record: TxnRecord; result: T } | null> | { record: TxnRecord; result: T } | null;

export interface SequencerDeps {
  readonly log: Log;
  readonly store: StateStore;
  readonly catalog: CatalogState;
  readonly applied: AppliedTracker;
  readonly handoff: RecordHandoff;
  /** Told of a row record's LSN once it is durable, before its writer is answered (reads wait there). */
  readonly readBarrier: ReadBarrier;
  /** The change-event sequence the next record starts at (nextSequenceAfter the log's last record). */
  readonly nextSequence: bigint;
}

/**
 * The one writer. Builders run one at a time (validation needs a stable view); the append's fsync
 * is awaited outside the lock, so concurrent writers share a group commit. A record of row changes
 * resolves once durable: the projections apply it after the answer, and read-your-writes is the
 * read barrier's (read-barrier.ts: every read waits until what was answered is applied; writers
 * validate against the store plus the pending overlay, which keeps a record until it is applied).
 * A record that changes the catalog resolves only once applied: later writers validate by it.
 */
export class Sequencer {
  /** What is appended and not yet applied (the pending overlay, sequences in flight), and the bound that admits writers (write-backlog.ts). */
  private readonly backlog: WriteBacklog;
  private readonly observers = new Set<AppendObserver>();
  private readonly rowKeyBounds = new RowKeyBounds();
  /** A builder runs (the write lock is held); the next ones wait in `lockWaiters`, first come first served. */
  private locked = false;
  private readonly lockWaiters: (() => void)[] = [];
  private closed = false;
  private nextSequence: bigint;
  /** What builders validate against: one object for every submit (it holds no state of its own). */
  private readonly writeView: WriteView;

  constructor(private readonly deps: SequencerDeps) {
    this.nextSequence = deps.nextSequence;
    this.backlog = new WriteBacklog(deps);
    this.writeView = this.view();
  }

  /** Number of row/index keys appended but not yet applied (for tests and metrics). */
  get pendingKeys(): number {
    return this.backlog.size;
  }

  async submit<T>(build: TxnBuilder<T>): Promise<{ lsn: Lsn | null; result: T | null }> {
    // The lock taken without a promise when free (most submits under load find it so).
    if (this.locked) await new Promise<void>((resolve) => this.lockWaiters.push(resolve));
    else this.locked = true;
    let appended: { lsn: Lsn; durable: Promise<void> } | null = null;
    let ops: readonly TxnOp[] = [];
    let result: T | null = null;
    let drain = false;
    try {
      this.assertWritable();
      // Backpressure: while the log has too much unwritten or the apply is far behind, writers queue here (WriteBacklog.untilAdmitted).
      if (!this.backlog.admits()) await this.backlog.untilAdmitted();
      // A sync builder's throw is still this submit's rejection (inside the try of an async function).
      const building = build(this.writeView);
      const built = building instanceof Promise ? await building : building;
      if (!built) return { lsn: null, result: null };
      result = built.result;
      // Stamped here, in append order: change-event sequences follow commit order.
      const record = stamped(built.record, this.nextSequence);
      ops = record.ops;
      const shape = rowRecordShape(record.ops, this.tableOf);
      drain = shape === null;
      const append = this.deps.log.append(encodeLogRecordForAppend(record));
      // A row-only record's ops take one sequence each (RowRecordEffects.sequences).
      this.nextSequence += shape ? BigInt(record.ops.length) : sequenceSpan(record);
      appended = append;
      this.backlog.sequencesTaken(shape ? shape.sequences : record.ops, append.lsn);
      if (shape) {
        // A small record's effects are in place already (no promise, no turn): only a deferred one is awaited.
        const deferred = this.appendedRows(append.lsn, record, shape);
        if (deferred) await deferred;
      } else {
        this.rowKeyBounds.forget();
        if (this.observers.size > 0) this.notify(append.lsn, null);
        // A catalog change alters how later records are validated: hold the lock until it is applied.
        await this.settle(append);
      }
    } finally {
      this.release();
    }
    const done = appended as { lsn: Lsn; durable: Promise<void> };
    if (drain) return { lsn: done.lsn, result };
    // Answered once durable, not once applied (the apply's LevelDB write was 20-45% of the slowest 1%
    // of single-row inserts at 50 connections): reads that begin from now on wait for its apply
    // (read-barrier.ts), and the overlay keeps its effects for writers until then (released()).
    try {
      await done.durable;
    } catch (error) {
      this.discard(done.lsn);
      throw error;
    }
    // Per table: a read of another table does not wait for this record's apply.
    this.deps.readBarrier.acknowledgeRows(done.lsn, ops);
    return { lsn: done.lsn, result };
  }

  close(): void {
    this.closed = true;
  }

  private readonly tableOf = (id: number): TableEntry | undefined => this.deps.catalog.table(id);

  /**
   * What a row-only record's append leaves for the next builder (pending overlay, row-key bounds,
   * observers) and for the projection (its effects, through the handoff). A large record's effects
   * and store batch are built once the log has written it and started its fdatasync: they take a
   * 10,000-row bulk insert ~10 ms of CPU, which then runs beside the fdatasync instead of after it
   * (the answer waits for both). The write lock is held until they are in the overlay.
   */
  private appendedRows(lsn: Lsn, record: TxnRecord, shape: RowRecordShape): Promise<void> | undefined {
    // With writers waiting, the lock goes on at once (as for a small record): holding it until the log's
    // write would keep them out of this group commit, one writev and fdatasync each (found by review).
    if (record.ops.length < PROJECTION_LIMITS.deferredEffectsOpsMin || this.lockWaiters.length > 0) {
      const effects = rowRecordOps(record.ops, this.tableOf, shape);
      // The projection applies these very effects instead of decoding and recomputing them.
      this.deps.handoff.put(lsn, { record, effects });
      this.rowsAppended(lsn, record, effects);
      return undefined;
    }
    return this.deferredRows(lsn, record, shape);
  }

  /** appendedRows for a large record: its effects and store batch built while the log fdatasyncs it. */
  private async deferredRows(lsn: Lsn, record: TxnRecord, shape: RowRecordShape): Promise<void> {
    const deferred = new DeferredRecord(record, () => rowRecordOps(record.ops, this.tableOf, shape));
    this.deps.handoff.put(lsn, deferred);
    // After the log's write (the flush starts a turn later): the fdatasync runs meanwhile.
    await (this.deps.log.whenWritten?.(lsn) ?? new Promise<void>((resolve) => setImmediate(resolve)));
    this.rowsAppended(lsn, record, deferred.effects);
    deferred.prepare(this.deps.store);
  }

  private rowsAppended(lsn: Lsn, record: TxnRecord, effects: RowRecordEffects): void {
    this.backlog.overlay.add(lsn, effects.ops);
    this.rowKeyBounds.appended(record.ops);
    if (this.observers.size > 0) this.notify(lsn, effects);
  }

  /** Tells the append observers of a record; its keys are listed once, for the first observer that asks. */
  private notify(lsn: Lsn, effects: RowRecordEffects | null): void {
    let listed: readonly Uint8Array[] | null | undefined;
    const keys = (): readonly Uint8Array[] | null => {
      if (listed === undefined) listed = effects ? effects.ops.map((op) => op.key) : null;
      return listed;
    };
    for (const observer of this.observers) observer(lsn, keys);
  }

  /** The LSN of the last record appended (durable or not). */
  get headLsn(): Lsn {
    return this.deps.log.headLsn;
  }

  /** Calls `observer` for every record appended from now on; returns the unsubscribe. */
  observeAppends(observer: AppendObserver): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  /**
   * Marks sequence values as taken without a log record (an open transaction used them): later
   * writers continue above them. Forgotten at restart, when no transaction is open any more.
   */
  reserveSequence(name: string, value: bigint): void {
    this.backlog.reserveSequence(name, value);
  }

  /** Waits until an appended record is durable and applied (submit does the same inline for row records). */
  private async settle(appended: { lsn: Lsn; durable: Promise<void> }): Promise<void> {
    try {
      await appended.durable;
      await this.deps.applied.waitFor(appended.lsn);
    } catch (error) {
      this.discard(appended.lsn);
      throw error;
    } finally {
      this.backlog.settled();
    }
  }

  /** A record that will never be applied (the log refuses writes now): its prepared store write is dropped. */
  private discard(lsn: Lsn): void {
    this.deps.handoff.take(lsn)?.takeWrite?.()?.discard();
  }

  /**
   * The projections applied everything up to `applied` (Projections calls this on every advance,
   * before waiters wake): it leaves the overlay and the pending sequences, as the store has it now.
   */
  released(applied: Lsn): void {
    this.backlog.released(applied);
  }

  private assertWritable(): void {
    if (this.closed) throw shuttingDown();
    if (this.deps.applied.failed) throw this.deps.applied.failed;
  }

  private view(): WriteView {
    const { store, catalog } = this.deps;
    const backlog = this.backlog;
    const overlay = backlog.overlay;
    const view: WriteView = {
      catalog,
      async getRow(tableId, pk) {
        const key = rowKey(tableId, pk);
        const pending = overlay.get(key);
        if (pending) return pending.value ?? undefined;
        return store.get(key);
      },
      async getRows(tableId, pks) {
        const keys = rowKeys(tableId, pks);
        const out: (Uint8Array | undefined)[] = new Array(keys.length);
        const missing: number[] = [];
        keys.forEach((key, i) => {
          const pending = overlay.get(key);
          if (pending) out[i] = pending.value ?? undefined;
          else missing.push(i);
        });
        if (missing.length > 0) {
          const found = await store.getMany(missing.map((i) => keys[i]!));
          missing.forEach((i, j) => (out[i] = found[j]));
        }
        return out;
      },
      async *rows(tableId, bounds = {}) {
        const range = subRange(KeySpace.Row, tableId, bounds, rowKey);
        for await (const batch of mergedRange(store, overlay, range, PROJECTION_LIMITS.writerScanBatchRows)) {
          yield batch.map(([key, value]) => [pkOfRowKey(key), value] as [Uint8Array, Uint8Array]);
        }
      },
      async *indexEntries(indexId, indexKeyPrefix) {
        const gte = indexPrefix(indexId, indexKeyPrefix);
        const lt = prefixUpperBound(gte) ?? idRange(KeySpace.IndexEntry, indexId).lt;
        const prefixLength = gte.length;
        for await (const batch of mergedRange(store, overlay, { gte, lt }, PROJECTION_LIMITS.writerScanBatchRows)) {
          yield batch.map(([key]) => key.subarray(prefixLength));
        }
      },
      async *indexRange(indexId, bounds = {}) {
        const range = subRange(KeySpace.IndexEntry, indexId, bounds, indexPrefix);
        for await (const batch of mergedRange(store, overlay, range, PROJECTION_LIMITS.writerScanBatchRows)) {
          yield batch.map(([key]) => key.subarray(ID_PREFIX_BYTES));
        }
      },
      knownRowKeyBound: (tableId) => this.rowKeyBounds.get(tableId),
      rowKeyBound: async (tableId) => {
        const known = this.rowKeyBounds.get(tableId);
        if (known !== undefined) return known;
        let last: Uint8Array | null = null;
        for await (const batch of view.rows(tableId, { reverse: true })) {
          last = batch[0]?.[0] ?? null;
          break;
        }
        // A copy: the key may be a view of a pending record's buffer of all its row keys.
        if (last !== null) last = new Uint8Array(last);
        this.rowKeyBounds.learn(tableId, last);
        return last;
      },
      sequence: (name) => backlog.sequence(name),
    };
    return view;
  }

  /** Hands the write lock to the next waiting builder (it stays held), or frees it. */
  private release(): void {
    const next = this.lockWaiters.shift();
    if (next) next();
    else this.locked = false;
  }
}

/** The key range of one table's rows or one index's entries, from bounds on what follows the id (ID_PREFIX_BYTES). */
function subRange(
  space: KeySpace,
  id: number,
  bounds: { gte?: Uint8Array; lt?: Uint8Array; reverse?: boolean },
  withPrefix: (id: number, rest: Uint8Array) => Uint8Array,
): KeyRange {
  const whole = idRange(space, id);
  return {
    gte: bounds.gte ? withPrefix(id, bounds.gte) : whole.gte,
    lt: bounds.lt ? withPrefix(id, bounds.lt) : whole.lt,
    reverse: bounds.reverse ?? false,
  };
}

/** The fields stamped() copies: a field added to TxnRecord fails to compile here until stamped() copies it too. */
const _STAMPED_FIELDS = { type: true, txnId: true, tenant: true, timestampMicros: true, ops: true, firstSequence: true } satisfies Record<
  keyof TxnRecord,
  true
>;

/**
 * The record with its first change-event sequence, its fields named one by one: a spread of the
 * builder's record and then a new property took V8's slow define path on every submit (~2% of
 * the main thread's samples of a single-row insert, perf).
 */
function stamped(built: TxnRecord, firstSequence: bigint): TxnRecord {
  return { type: built.type, txnId: built.txnId, tenant: built.tenant, timestampMicros: built.timestampMicros, ops: built.ops, firstSequence };
}
