import { randomUUID } from 'node:crypto';
import { SvcError, shuttingDown } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { lsn as asLsn, type Lsn } from '../../core/units.js';
import type { Projections } from '../../projections/index.js';
import { txnRecord } from '../ddl/common.js';
import { asSvcError } from '../failure.js';
import { LIMITS } from '../limits.js';
import { RecentWrites } from './recent-writes.js';
import { Transaction } from './transaction.js';
import type { TxnContext } from './context.js';
import type { TransactionCommitted, TransactionInfo, TransactionRolledBack } from './info.js';
import { abortedAtCommit, refuseEnded, transactionAborted, transactionBusy, transactionNotFound } from './refusals.js';
import type { TxnCaller, TxnScope, TxnStatement, TxnStatementBounds } from './scope.js';
import type { IsolationLevel, TxnStatus } from './txn-state.js';

export interface TxnLimits {
  readonly transactionTimeoutMsDefault: number;
  readonly transactionTimeoutMsMax: number;
  readonly transactionsOpenMax: number;
  /** Row changes one transaction may stage (the same bound as one DML statement's). */
  readonly sqlDmlRowsMax: number;
}

export interface TxnManagerDeps {
  readonly projections: Projections;
  readonly limits: TxnLimits;
  readonly logger: Logger;
  now?(): number;
}

export interface BeginOptions {
  readonly tenant: string;
  /** The credential beginning it: only that credential (or an admin of the tenant) may use it afterwards. */
  readonly owner?: string;
  readonly isolation: IsolationLevel;
  readonly readOnly: boolean;
  readonly timeoutMs?: number;
  /** A request's own batch (atomically): no REST slot, no record kept after it ends. */
  readonly internal?: boolean;
}

const { txnReadSpansMax, txnEndedCountMax, txnBatchExpiryMarginMs, txnRecentWriteKeysMax } = LIMITS;

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * The open transactions: begin, run statements (as the TxnScope the engine runs them in), commit,
 * roll back, expire. Watches every appended record (while a transaction is open) so commits can be
 * validated. Knows no SQL engine: the engine is built on it (scope.ts).
 */
export class TxnManager implements TxnScope {
  private readonly open = new Map<string, Transaction>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly ended = new Map<string, Transaction>();
  private readonly recent = new RecentWrites();
  /** Floors of transactions being begun (they watch appends before they are in `open`). */
  private readonly pendingFloors = new Set<{ floorLsn: Lsn; tenant: string; internal: boolean }>();
  private readonly now: () => number;
  private readonly unobserve: () => void;
  private closed = false;

  constructor(private readonly deps: TxnManagerDeps) {
    this.now = deps.now ?? Date.now;
    this.unobserve = deps.projections.sequencer.observeAppends((lsn, keys) => {
      if (this.open.size === 0 && this.pendingFloors.size === 0) return;
      this.recent.add(lsn, keys());
      if (this.recent.size.keys > txnRecentWriteKeysMax) this.shedRecentWrites();
    });
  }

  /** Open transactions, and what the conflict checks hold (for tests and metrics). */
  stats(): { readonly open: number; readonly recentRecords: number; readonly recentKeys: number } {
    const size = this.recent.size;
    return { open: this.open.size, recentRecords: size.records, recentKeys: size.keys };
  }

  /** Opens a transaction (a snapshot for repeatable_read and serializable); it expires after its timeout. */
  async begin(options: BeginOptions): Promise<TransactionInfo> {
    const txn = await this.openTransaction(options);
    return infoOf(txn);
  }

  private async openTransaction(options: BeginOptions): Promise<Transaction> {
    if (this.closed) throw shuttingDown();
    const internal = options.internal ?? false;
    if (!internal) this.makeRoom(options.tenant);
    const { limits, projections } = this.deps;
    const timeoutMs = options.timeoutMs ?? limits.transactionTimeoutMsDefault;
    if (!internal && timeoutMs > limits.transactionTimeoutMsMax) {
      throw new SvcError('VALIDATION_ERROR', `timeout_ms is above the maximum of ${limits.transactionTimeoutMsMax} (transactionTimeoutMsMax)`, {
        field: 'timeout_ms',
        max: limits.transactionTimeoutMsMax,
      });
    }
    const id = randomUUID();
    const startedAtMs = this.now();
    const headLsn = projections.sequencer.headLsn;
    // Registered before the snapshot, so every record after it is watched; the snapshot waits for
    // what was appended before, so it covers every LSN up to its own.
    const placeholder = { floorLsn: asLsn(0), tenant: options.tenant, internal };
    this.pendingFloors.add(placeholder);
    let snapshot: { store: ReturnType<typeof projections.store.snapshot>; lsn: Lsn } | null = null;
    try {
      if (options.isolation !== 'read_committed') {
        await projections.applied.waitFor(headLsn);
        const appliedLsn = projections.applied.lsn;
        snapshot = { store: projections.store.snapshot(), lsn: appliedLsn };
      }
    } finally {
      this.pendingFloors.delete(placeholder);
    }
    if (this.closed) {
      await snapshot?.store.close();
      throw shuttingDown();
    }
    const txn = new Transaction({
      id,
      tenant: options.tenant,
      owner: options.owner ?? null,
      isolation: options.isolation,
      readOnly: options.readOnly,
      internal,
      startedAtMs,
      expiresAtMs: startedAtMs + timeoutMs,
      snapshot,
      floorLsn: snapshot?.lsn ?? headLsn,
      sequencer: projections.sequencer,
      recent: this.recent,
      readsMax: txnReadSpansMax,
      opsMax: limits.sqlDmlRowsMax,
    });
    // Writes it would need to check were dropped while it began (shedRecentWrites): it can only fail.
    const shed = this.recent.shedThroughLsn;
    if (shed !== null && shed >= txn.init.floorLsn) txn.doomedAtLsn = shed;
    this.open.set(id, txn);
    const timer = setTimeout(() => void this.expire(txn), timeoutMs);
    timer.unref();
    this.timers.set(id, timer);
    return txn;
  }

  /** The transaction as it is now (open, aborted or recently ended). */
  get(id: string, caller: TxnCaller): TransactionInfo {
    return infoOf(this.find(id, caller));
  }

  /** Runs one statement in an open transaction; a failing statement aborts it (PostgreSQL's rule). */
  async within<T>(id: string, caller: TxnCaller, bounds: TxnStatementBounds, body: (statement: TxnStatement) => Promise<T>): Promise<T> {
    await this.expireIfDue(this.find(id, caller));
    const txn = this.usable(id, caller);
    txn.busy = true;
    const signal = bounds.signal ? AbortSignal.any([bounds.signal, txn.abort.signal]) : txn.abort.signal;
    const timeoutMs = Math.max(0, Math.min(bounds.timeoutMs, txn.init.expiresAtMs - this.now()));
    const running = started(() => body({ txn, readOnly: txn.init.readOnly, signal, timeoutMs }));
    txn.running = running;
    try {
      return await running;
    } catch (error) {
      // Ended while the statement ran (expiry, rollback from another request): say that, not "cancelled".
      if (txn.status !== 'open' && txn.status !== 'aborted') refuseEnded(txn);
      if (txn.status === 'open') {
        const failure = asSvcError(error);
        txn.failure = { code: failure.code, message: failure.message };
        txn.move('statement_failed', this.now());
      }
      throw error;
    } finally {
      txn.busy = false;
      txn.running = null;
    }
  }

  /**
   * Runs `body` in a read_committed transaction of its own and commits it (or rolls it back):
   * the statements of one request as one record (query/txn/batch.ts).
   */
  async atomically<T>(tenant: string, timeoutMs: number, body: (txn: TxnContext) => Promise<T>, end: 'commit' | 'rollback'): Promise<T> {
    // Its statements' own deadline ends it first; the transaction's expiry is only a backstop.
    const txn = await this.openTransaction({
      tenant,
      isolation: 'read_committed',
      readOnly: false,
      timeoutMs: timeoutMs + txnBatchExpiryMarginMs,
      internal: true,
    });
    const id = txn.id;
    let result: T;
    txn.busy = true;
    const running = started(() => body(txn));
    txn.running = running;
    try {
      result = await running;
    } catch (error) {
      txn.busy = false;
      await this.rollback(id, { tenant }).catch(() => undefined);
      throw error;
    } finally {
      txn.busy = false;
      txn.running = null;
    }
    if (end === 'commit') await this.commit(id, { tenant });
    else await this.rollback(id, { tenant });
    return result;
  }

  /** Validates and appends the transaction as one log record; a conflict rolls it back. */
  async commit(id: string, caller: TxnCaller): Promise<TransactionCommitted> {
    const { tenant } = caller;
    const txn = this.find(id, caller);
    await this.expireIfDue(txn);
    refuseEnded(txn);
    if (txn.busy) throw transactionBusy(txn);
    if (txn.status === 'aborted') {
      await this.end(txn, 'commit');
      throw abortedAtCommit(txn);
    }
    txn.move('commit', this.now());
    txn.busy = true;
    let lsn: Lsn | null = null;
    try {
      if (txn.changeCount > 0) {
        const appended = await this.deps.projections.sequencer.submit(async (view) => {
          txn.refuseOnConflict(this.deps.projections.sequencer.headLsn);
          return { record: txnRecord(tenant, txn.commitOps(view), txn.id), result: null };
        });
        lsn = appended.lsn;
      }
      // Without changes there is nothing to validate: what it read was one consistent snapshot
      // (repeatable_read, serializable) or committed data (read_committed).
    } catch (error) {
      txn.busy = false;
      await this.end(txn, 'commit_failed');
      throw error;
    }
    txn.busy = false;
    await this.end(txn, 'committed');
    return { transactionId: id, status: txn.status, committedAtMs: txn.endedAtMs!, lsn };
  }

  /** Ends the transaction: nothing of it reaches the log. */
  async rollback(id: string, caller: TxnCaller): Promise<TransactionRolledBack> {
    const txn = this.find(id, caller);
    refuseEnded(txn);
    if (txn.status === 'committing') throw transactionBusy(txn);
    await this.end(txn, 'rollback');
    return { transactionId: id, status: txn.status, rolledBackAtMs: txn.endedAtMs! };
  }

  /** Rolls back every open transaction (shutdown): nothing of them reaches the log. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.open.values()].map((txn) => this.end(txn, 'rollback')));
    this.unobserve();
  }

  /** Ends a transaction past its expires_at whose timer has not fired yet (timers may run late). */
  private async expireIfDue(txn: Transaction): Promise<void> {
    if (this.now() >= txn.init.expiresAtMs) await this.expire(txn);
  }

  private async expire(txn: Transaction): Promise<void> {
    if (txn.status !== 'open' && txn.status !== 'aborted') return; // committing finishes on its own
    this.deps.logger.info({ transaction_id: txn.id, expires_at: iso(txn.init.expiresAtMs) }, 'transaction expired and was rolled back');
    await this.end(txn, 'expire');
  }

  private async end(txn: Transaction, event: 'commit' | 'committed' | 'commit_failed' | 'rollback' | 'expire'): Promise<void> {
    if (!txn.move(event, this.now())) return;
    txn.abort.abort();
    this.open.delete(txn.id);
    clearTimeout(this.timers.get(txn.id));
    this.timers.delete(txn.id);
    this.remember(txn);
    this.recent.retain(this.floor());
    await txn.running?.catch(() => undefined);
    await txn.release();
  }

  /** Keeps the recent writes bounded: the oldest half goes, and transactions that needed it are doomed. */
  private shedRecentWrites(): void {
    const dropped = this.recent.shed(txnRecentWriteKeysMax / 2);
    if (dropped === null) return;
    for (const txn of this.open.values()) {
      if (txn.init.floorLsn < dropped && txn.doomedAtLsn === null) txn.doomedAtLsn = dropped;
    }
    this.deps.logger.warn(
      { droppedThroughLsn: dropped, keysMax: txnRecentWriteKeysMax },
      'long transactions outlived the conflict-check window; they will be refused at commit',
    );
  }

  /** The LSN below which no open transaction needs the recent writes (a doomed one needs none). */
  private floor(): Lsn {
    let floor: Lsn = this.deps.projections.sequencer.headLsn;
    for (const txn of this.open.values()) if (txn.doomedAtLsn === null && txn.init.floorLsn < floor) floor = txn.init.floorLsn;
    for (const pending of this.pendingFloors) if (pending.floorLsn < floor) floor = pending.floorLsn;
    return floor;
  }

  private remember(txn: Transaction): void {
    if (txn.init.internal) return; // nobody was told its id
    this.ended.set(txn.id, txn);
    const cutoff = this.now() - LIMITS.txnEndedRetentionMs;
    for (const [id, old] of this.ended) {
      if (this.ended.size <= txnEndedCountMax && (old.endedAtMs ?? 0) >= cutoff) break;
      this.ended.delete(id);
    }
  }

  private find(id: string, caller: TxnCaller): Transaction {
    const txn = this.open.get(id) ?? this.ended.get(id);
    // Another tenant's (or another credential's) transaction is answered as missing: its
    // existence is not theirs to learn.
    if (!txn || txn.init.tenant !== caller.tenant || !mayUse(txn.init.owner, caller)) throw transactionNotFound(id);
    return txn;
  }

  /** An open transaction that can take a statement now. */
  private usable(id: string, caller: TxnCaller): Transaction {
    const txn = this.find(id, caller);
    refuseEnded(txn);
    if (txn.status === 'aborted') throw transactionAborted(txn);
    if (txn.busy || txn.status !== 'open') throw transactionBusy(txn);
    return txn;
  }

  /** transactionsOpenMax per tenant (REST transactions only): one tenant cannot take every slot. */
  private makeRoom(tenant: string): void {
    const max = this.deps.limits.transactionsOpenMax;
    const mine = [...this.open.values()].filter((t) => t.init.tenant === tenant && !t.init.internal);
    const beginning = [...this.pendingFloors].filter((p) => p.tenant === tenant && !p.internal).length;
    if (mine.length + beginning < max) return;
    const nextExpiryMs = Math.min(...mine.map((t) => t.init.expiresAtMs), this.now() + 1000);
    throw new SvcError(
      'RATE_LIMIT_EXCEEDED',
      `${max} transactions of tenant ${tenant} are open (transactionsOpenMax); commit or roll back one, or retry after the next expiry`,
      {
        limit: max,
        remaining: 0,
        reset_at: iso(nextExpiryMs),
      },
    );
  }
}

/** What `body` returns, or a rejection with what it threw before returning (busy must still be cleared). */
function started<T>(body: () => Promise<T>): Promise<T> {
  try {
    return body();
  } catch (error) {
    return Promise.reject(error);
  }
}

/** The typed record of a transaction (protocols render it). */
function infoOf(txn: Transaction): TransactionInfo {
  return {
    transactionId: txn.id,
    isolation: txn.init.isolation,
    readOnly: txn.init.readOnly,
    status: txn.status,
    startedAtMs: txn.init.startedAtMs,
    expiresAtMs: txn.init.expiresAtMs,
    endedAtMs: txn.endedAtMs,
    failure: txn.failure,
  };
}

/** The owner of a transaction, an admin of its tenant, or an in-process caller may use it. */
function mayUse(owner: string | null, caller: TxnCaller): boolean {
  return owner === null || caller.credential === undefined || caller.admin === true || caller.credential === owner;
}

export type { TxnCaller, TxnStatus };
