import { SvcError } from '../../core/errors.js';
import type { RowChange, SequenceUpdate, TxnOp } from '../../core/log-records.js';
import { lsn as asLsn, type Lsn } from '../../core/units.js';
import {
  keys,
  PendingOverlay,
  rowRecordEffects,
  type CatalogState,
  type RowVersionedStore,
  type Sequencer,
  type StoreSnapshot,
  type WriteView,
} from '../../projections/index.js';
import { SnapshotSource, type VectorSearcher } from '../exec/source.js';
import type { ReadScope } from '../run-query.js';
import type { TxnContext } from './context.js';
import type { TxnFailure } from './info.js';
import { LayeredSource, layeredWriteView } from './layered.js';
import { ReadSet } from './read-set.js';
import type { RecentWrites } from './recent-writes.js';
import { isFinal, nextTxnStatus, type IsolationLevel, type TxnEvent, type TxnStatus } from './txn-state.js';

export interface TransactionInit {
  readonly id: string;
  readonly tenant: string;
  readonly isolation: IsolationLevel;
  readonly readOnly: boolean;
  /** A request's own batch transaction (query/txn/batch.ts), not a REST one. */
  readonly internal: boolean;
  /** The credential that began it (opaque to query/); null: begun in process, by no credential. */
  readonly owner: string | null;
  readonly startedAtMs: number;
  readonly expiresAtMs: number;
  /** repeatable_read and serializable: the snapshot every SELECT reads, and the LSN it covers. */
  readonly snapshot: { readonly store: StoreSnapshot; readonly lsn: Lsn } | null;
  /** The oldest LSN the transaction's conflict checks look back from. */
  readonly floorLsn: Lsn;
  readonly sequencer: Sequencer;
  readonly recent: RecentWrites;
  /** Key ranges read or written, and row changes staged, before the transaction is refused. */
  readonly readsMax: number;
  readonly opsMax: number;
}

/**
 * One open transaction: optimistic, lock-free. Its changes are kept here (never appended) until
 * commit, where they become ONE log record; what it read is checked against what others committed
 * since (read-set.ts), and a conflict refuses the statement or the commit with TRANSACTION_CONFLICT.
 */
export class Transaction implements TxnContext {
  status: TxnStatus = 'open';
  endedAtMs: number | null = null;
  /** Why an aborted transaction failed (its last failing statement). */
  failure: TxnFailure | null = null;
  /** A statement or the commit is running (one at a time per transaction). */
  busy = false;
  /** The running statement, awaited before the snapshot is released (ending while it runs). */
  running: Promise<unknown> | null = null;
  /** Aborted when the transaction ends while a statement runs (rollback, expiry). */
  readonly abort = new AbortController();
  readonly reads: ReadSet;
  private readonly ops: RowChange[] = [];
  private readonly sequences = new Map<string, bigint>();
  private readonly overlay = new PendingOverlay();
  private statements = 0;
  /** The LSN the running DML statement reads at (set by dmlView, used by stage). */
  private statementSeenLsn: Lsn | null = null;

  constructor(readonly init: TransactionInit) {
    this.reads = new ReadSet(init.readsMax);
  }

  get id(): string {
    return this.init.id;
  }

  /** Row changes staged so far. */
  get changeCount(): number {
    return this.ops.length;
  }

  /** Moves the state machine; false when the event is not allowed now. */
  move(event: TxnEvent, nowMs: number): boolean {
    const next = nextTxnStatus(this.status, event);
    if (next === null) return false;
    this.status = next;
    if (isFinal(next)) this.endedAtMs = nowMs;
    return true;
  }

  openReadSource(store: RowVersionedStore, vectors: VectorSearcher | null = null): ReadScope {
    const { snapshot, isolation } = this.init;
    if (snapshot) {
      // The transaction's own snapshot: released when the transaction ends, not by the statement.
      const tracking = isolation === 'serializable' ? { reads: this.reads, seenLsn: snapshot.lsn } : null;
      return { source: new LayeredSource(new SnapshotSource(store, snapshot.store, vectors), this.overlay, tracking), close: async () => undefined };
    }
    const statementSnapshot = store.snapshot();
    return { source: new LayeredSource(new SnapshotSource(store, statementSnapshot, vectors), this.overlay, null), close: () => statementSnapshot.close() };
  }

  dmlView(view: WriteView, headLsn: number): WriteView {
    // A conflict already there would refuse the commit: say so at this statement.
    this.refuseOnConflict(asLsn(headLsn));
    // read_committed reads the latest state; the others read as of their snapshot, so a row
    // changed by another commit since is a conflict (PostgreSQL's "could not serialize access").
    const seenLsn = this.init.snapshot?.lsn ?? asLsn(headLsn);
    this.statementSeenLsn = seenLsn;
    return layeredWriteView(view, this.overlay, { reads: this.reads, seenLsn });
  }

  stage(ops: readonly TxnOp[], catalog: CatalogState): void {
    const rows = ops.filter((op): op is RowChange => op.kind === 'row');
    if (this.ops.length + rows.length > this.init.opsMax) {
      throw new SvcError('LIMIT_EXCEEDED', `a transaction may change at most ${this.init.opsMax} rows (sqlDmlRowsMax); split it`, { limit: this.init.opsMax });
    }
    const seenLsn = this.statementSeenLsn ?? this.init.floorLsn;
    for (const row of rows) this.reads.addKey(keys.rowKey(row.tableId, row.key), seenLsn);
    const effects = rowRecordEffects(rows, (id) => catalog.table(id));
    if (effects) this.overlay.add(asLsn(++this.statements), effects.ops);
    this.ops.push(...rows);
    for (const op of ops) {
      if (op.kind !== 'sequence') continue;
      if (op.lastValue > (this.sequences.get(op.name) ?? 0n)) this.sequences.set(op.name, op.lastValue);
      this.init.sequencer.reserveSequence(op.name, op.lastValue);
    }
  }

  /**
   * Set when the writes of others since this transaction began outgrew what is kept to check it
   * (the manager's bound): it can no longer be validated, so it can only fail.
   */
  doomedAtLsn: Lsn | null = null;

  /** Throws TRANSACTION_CONFLICT when another commit wrote into something this transaction read or wrote. */
  refuseOnConflict(headLsn: Lsn): void {
    if (this.doomedAtLsn !== null) {
      throw new SvcError(
        'TRANSACTION_CONFLICT',
        'too much was written by others while this transaction was open to check it for conflicts; roll back and retry it (shorter)',
        {
          transaction_id: this.id,
          isolation_level: this.init.isolation,
        },
      );
    }
    const conflict = this.reads.firstConflict(this.init.recent, headLsn);
    if (!conflict) return;
    throw new SvcError(
      'TRANSACTION_CONFLICT',
      `could not serialize access due to a concurrent update (committed at LSN ${conflict.lsn}); roll back and retry the transaction`,
      { transaction_id: this.id, isolation_level: this.init.isolation, conflicting_lsn: conflict.lsn },
    );
  }

  /** The ops of the commit record: the staged row changes, then sequences (never moved backwards). */
  commitOps(view: WriteView): TxnOp[] {
    const sequenceOps: SequenceUpdate[] = [];
    for (const [name, value] of this.sequences) {
      const current = view.sequence(name);
      if (current === undefined) continue; // its table was dropped meanwhile: the row ops conflict anyway
      sequenceOps.push({ kind: 'sequence', name, lastValue: current > value ? current : value });
    }
    return [...this.ops, ...sequenceOps];
  }

  /** Lets go of the snapshot and the staged changes. */
  async release(): Promise<void> {
    this.ops.length = 0;
    this.reads.clear();
    this.sequences.clear();
    this.overlay.release(asLsn(Number.MAX_SAFE_INTEGER));
    await this.init.snapshot?.store.close();
  }
}
