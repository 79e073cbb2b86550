import { randomUUID } from 'node:crypto';
import { SvcError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { lsn as asLsn, type Lsn } from '../../core/units.js';
import type { Projections } from '../../projections/index.js';
import type { ExecuteOptions, SqlEngine } from '../engine.js';
import { txnRecord } from '../ddl/common.js';
import { LIMITS } from '../limits.js';
import type { QueryResult } from '../result.js';
import { RecentWrites } from './recent-writes.js';
import { Transaction } from './transaction.js';
import type { TxnContext } from './context.js';
import type { AtomicBatchRunner } from './batch.js';
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
  readonly engine: SqlEngine;
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

/**
 * Who is calling about a transaction. A transaction is usable only in its tenant, and only by the
 * credential that began it or an admin of that tenant; any other caller is told it does not exist.
 */
export interface TxnCaller {
  readonly tenant: string;
  /** The calling credential (an opaque id, as BeginOptions.owner); undefined: an in-process caller. */
  readonly credential?: string;
  /** An admin of the tenant may use every transaction in it. */
  readonly admin?: boolean;
}

/** A statement of a transaction; the role's read-only refusal wins over the transaction's. */
export type TxnStatementOptions = Omit<ExecuteOptions, 'txn' | 'tenant'>;

const { txnReadSpansMax, txnEndedRetentionMs, txnEndedCountMax, txnBatchExpiryMarginMs, txnRecentWriteKeysMax } = LIMITS;

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * The open transactions of POST /transactions: begin, run statements, commit, roll back, expire.
 * Watches every appended record (while a transaction is open) so commits can be validated.
 */
export class TxnManager implements AtomicBatchRunner {
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
      this.recent.add(lsn, keys);
      if (this.recent.size.keys > txnRecentWriteKeysMax) this.shedRecentWrites();
    });
  }

  /** Open transactions, and what the conflict checks hold (for tests and metrics). */
  stats(): { readonly open: number; readonly recentRecords: number; readonly recentKeys: number } {
    const size = this.recent.size;
    return { open: this.open.size, recentRecords: size.records, recentKeys: size.keys };
  }

  async begin(options: BeginOptions): Promise<Record<string, unknown>> {
    if (this.closed) throw new SvcError('SHUTTING_DOWN', 'the server is shutting down; retry on another instance or after restart');
    const internal = options.internal ?? false;
    if (!internal) this.makeRoom(options.tenant);
    const { limits, projections } = this.deps;
    const timeoutMs = options.timeoutMs ?? limits.transactionTimeoutMsDefault;
    if (!internal && timeoutMs > limits.transactionTimeoutMsMax) {
      throw new SvcError('VALIDATION_ERROR', `timeout_ms is above the maximum of ${limits.transactionTimeoutMsMax} (transactionTimeoutMsMax)`, { field: 'timeout_ms', max: limits.transactionTimeoutMsMax });
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
      throw new SvcError('SHUTTING_DOWN', 'the server is shutting down; retry on another instance or after restart');
    }
    const txn = new Transaction({
      id, tenant: options.tenant, owner: options.owner ?? null, isolation: options.isolation, readOnly: options.readOnly, internal,
      startedAtMs, expiresAtMs: startedAtMs + timeoutMs, snapshot, floorLsn: snapshot?.lsn ?? headLsn,
      sequencer: projections.sequencer, recent: this.recent, readsMax: txnReadSpansMax, opsMax: limits.sqlDmlRowsMax,
    });
    // Writes it would need to check were dropped while it began (shedRecentWrites): it can only fail.
    const shed = this.recent.shedThroughLsn;
    if (shed !== null && shed >= txn.init.floorLsn) txn.doomedAtLsn = shed;
    this.open.set(id, txn);
    const timer = setTimeout(() => void this.expire(txn), timeoutMs);
    timer.unref();
    this.timers.set(id, timer);
    return this.view(txn);
  }

  /** The transaction's record as GET /transactions/{id} shows it. */
  get(id: string, caller: TxnCaller): Record<string, unknown> {
    return this.view(this.find(id, caller));
  }

  /** Runs SQL inside an open transaction; a failing statement aborts it (PostgreSQL's rule). */
  async query(id: string, caller: TxnCaller, sql: string, options: TxnStatementOptions): Promise<QueryResult> {
    const { tenant } = caller;
    await this.expireIfDue(this.find(id, caller));
    const txn = this.usable(id, caller);
    txn.busy = true;
    const signal = options.signal ? AbortSignal.any([options.signal, txn.abort.signal]) : txn.abort.signal;
    const timeoutMs = Math.max(0, Math.min(options.timeoutMs, txn.init.expiresAtMs - this.now()));
    const running = this.deps.engine.execute(sql, {
      ...options, signal, timeoutMs, tenant, txn,
      ...(options.readOnly ? {} : txn.init.readOnly ? { readOnly: 'transaction' as const } : {}),
    });
    txn.running = running;
    try {
      return await running;
    } catch (error) {
      // Ended while the statement ran (expiry, rollback from another request): say that, not "cancelled".
      if (txn.status !== 'open' && txn.status !== 'aborted') this.refuseEnded(txn);
      if (txn.status === 'open') {
        txn.failure = { code: (error as SvcError).code ?? 'INTERNAL_ERROR', message: (error as Error).message };
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
    const created = await this.begin({ tenant, isolation: 'read_committed', readOnly: false, timeoutMs: timeoutMs + txnBatchExpiryMarginMs, internal: true });
    const id = created.transaction_id as string;
    const txn = this.open.get(id)!;
    let result: T;
    txn.busy = true;
    const running = body(txn);
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
  async commit(id: string, caller: TxnCaller): Promise<Record<string, unknown>> {
    const { tenant } = caller;
    const txn = this.find(id, caller);
    await this.expireIfDue(txn);
    this.refuseEnded(txn);
    if (txn.busy) throw busy(txn);
    if (txn.status === 'aborted') {
      const failure = txn.failure;
      await this.end(txn, 'commit');
      throw new SvcError('INVALID_STATE', `transaction ${id} was aborted by an error in an earlier statement and has been rolled back${failure ? ` (${failure.code}: ${failure.message})` : ''}`, {
        transaction_id: id, status: txn.status,
      });
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
    return { success: true, transaction_id: id, status: txn.status, committed_at: iso(txn.endedAtMs!), ...(lsn !== null ? { lsn } : {}) };
  }

  async rollback(id: string, caller: TxnCaller): Promise<Record<string, unknown>> {
    const txn = this.find(id, caller);
    this.refuseEnded(txn);
    if (txn.status === 'committing') throw busy(txn);
    await this.end(txn, 'rollback');
    return { success: true, transaction_id: id, status: txn.status, rolled_back_at: iso(txn.endedAtMs!) };
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
    this.deps.logger.warn({ droppedThroughLsn: dropped, keysMax: txnRecentWriteKeysMax }, 'long transactions outlived the conflict-check window; they will be refused at commit');
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
    const cutoff = this.now() - txnEndedRetentionMs;
    for (const [id, old] of this.ended) {
      if (this.ended.size <= txnEndedCountMax && (old.endedAtMs ?? 0) >= cutoff) break;
      this.ended.delete(id);
    }
  }

  private find(id: string, caller: TxnCaller): Transaction {
    const txn = this.open.get(id) ?? this.ended.get(id);
    // Another tenant's (or another credential's) transaction is answered as missing: its
    // existence is not theirs to learn.
    if (!txn || txn.init.tenant !== caller.tenant || !mayUse(txn.init.owner, caller)) {
      throw new SvcError('NOT_FOUND', `transaction ${id} does not exist (or ended more than ${txnEndedRetentionMs / 60_000} minutes ago)`, { transaction_id: id });
    }
    return txn;
  }

  /** An open transaction that can take a statement now. */
  private usable(id: string, caller: TxnCaller): Transaction {
    const txn = this.find(id, caller);
    this.refuseEnded(txn);
    if (txn.status === 'aborted') {
      throw new SvcError('INVALID_STATE', `transaction ${id} is aborted (${txn.failure?.code ?? 'error'}: ${txn.failure?.message ?? ''}); commands are ignored until it is rolled back`, {
        transaction_id: id, status: txn.status,
      });
    }
    if (txn.busy || txn.status !== 'open') throw busy(txn);
    return txn;
  }

  private refuseEnded(txn: Transaction): void {
    if (txn.status === 'expired') {
      throw new SvcError('INVALID_STATE', `transaction ${txn.id} expired at ${iso(txn.init.expiresAtMs)} and was rolled back; start a new one`, {
        transaction_id: txn.id, status: txn.status, expired_at: iso(txn.init.expiresAtMs),
      });
    }
    if (txn.status === 'committed' || txn.status === 'rolled_back') {
      throw new SvcError('INVALID_STATE', `transaction ${txn.id} has already ${txn.status === 'committed' ? 'committed' : 'been rolled back'}`, {
        transaction_id: txn.id, status: txn.status,
      });
    }
  }

  /** transactionsOpenMax per tenant (REST transactions only): one tenant cannot take every slot. */
  private makeRoom(tenant: string): void {
    const max = this.deps.limits.transactionsOpenMax;
    const mine = [...this.open.values()].filter((t) => t.init.tenant === tenant && !t.init.internal);
    const beginning = [...this.pendingFloors].filter((p) => p.tenant === tenant && !p.internal).length;
    if (mine.length + beginning < max) return;
    const nextExpiryMs = Math.min(...mine.map((t) => t.init.expiresAtMs), this.now() + 1000);
    throw new SvcError('RATE_LIMIT_EXCEEDED', `${max} transactions of tenant ${tenant} are open (transactionsOpenMax); commit or roll back one, or retry after the next expiry`, {
      limit: max, remaining: 0, reset_at: iso(nextExpiryMs),
    });
  }

  private view(txn: Transaction): Record<string, unknown> {
    const out: Record<string, unknown> = {
      transaction_id: txn.id,
      isolation_level: txn.init.isolation,
      read_only: txn.init.readOnly,
      status: txn.status,
      started_at: iso(txn.init.startedAtMs),
      expires_at: iso(txn.init.expiresAtMs),
    };
    if (txn.endedAtMs !== null) out.ended_at = iso(txn.endedAtMs);
    if (txn.failure) out.error = txn.failure;
    return out;
  }
}

/** The owner of a transaction, an admin of its tenant, or an in-process caller may use it. */
function mayUse(owner: string | null, caller: TxnCaller): boolean {
  return owner === null || caller.credential === undefined || caller.admin === true || caller.credential === owner;
}

function busy(txn: Transaction): SvcError {
  return new SvcError('INVALID_STATE', `transaction ${txn.id} is running another statement (or committing); send its statements one at a time`, {
    transaction_id: txn.id, status: txn.status,
  });
}

export type { TxnStatus };
