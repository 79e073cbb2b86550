/** What a caller of the SQL engine passes with a statement (SqlEngine.execute, stream), and a transaction's statement's scope of it. */
import { SvcError } from '../core/errors.js';
import type { ScanCache } from './exec/scan-cache.js';
import { LIMITS, type SqlLimits } from './limits.js';
import type { StatementEnv } from './statement.js';
import type { TxnContext } from './txn/context.js';
import type { TxnScope } from './txn/scope.js';

export interface ExecuteOptions {
  readonly params?: readonly unknown[];
  readonly timeoutMs: number;
  readonly maxRows: number;
  readonly signal?: AbortSignal;
  readonly tenant: string;
  /**
   * Run inside this open transaction of the tenant (TxnManager.begin): reads see its changes,
   * writes are staged in it, and a failing statement aborts it.
   */
  readonly transaction?: TransactionRef;
  /** Refuse anything but reads: 'role' for a read_only credential (403), 'transaction' for a read-only transaction. */
  readonly readOnly?: ReadOnlyReason;
  /** hnsw search beam of vector index scans (pgvector's hnsw.ef_search; default limits.efSearchDefault, at most 1000). */
  readonly efSearch?: number;
}

/** ExecuteOptions.efSearch checked: an integer in 1..1000 (pgvector's range), the server's default when absent. */
export function efSearchOf(value: number | undefined, defaultEf: number): number {
  if (value === undefined) return defaultEf;
  if (!Number.isInteger(value) || value < 1 || value > LIMITS.efSearchCandidatesMax)
    throw new SvcError('INVALID_QUERY', `ef_search must be an integer from 1 to ${LIMITS.efSearchCandidatesMax}`, { ef_search: value });
  return value;
}

/**
 * What a statement runs with (StatementEnv), from its caller's options: its deadline starts now.
 * Refuses a text longer than the limit (the spec's max_query_size_bytes) before anything parses it.
 */
export function statementEnv(sql: string, options: ExecuteOptions, limits: SqlLimits, scanCache: ScanCache | null, txn: TxnContext | null): StatementEnv {
  const bytesMax = limits.queryTextBytesMax;
  // A UTF-16 unit is at most 3 bytes of UTF-8: most texts need no byte count.
  if (sql.length > bytesMax || (sql.length * 3 > bytesMax && Buffer.byteLength(sql, 'utf8') > bytesMax)) {
    throw new SvcError('LIMIT_EXCEEDED', `query text is larger than ${bytesMax} bytes`, { max_query_size_bytes: bytesMax });
  }
  return {
    tenant: options.tenant,
    params: options.params ?? [],
    deadlineMs: Date.now() + options.timeoutMs,
    signal: options.signal,
    maxRows: Math.min(options.maxRows, limits.resultRowsMax),
    readOnly: options.readOnly ?? null,
    txn,
    limits,
    scanCache,
    efSearch: efSearchOf(options.efSearch, limits.efSearchDefault),
  };
}

/** Why writes are refused (ExecuteOptions.readOnly). */
export type ReadOnlyReason = 'role' | 'transaction';

/** An open transaction and the credential using it (only its owner, or an admin of the tenant, may). */
export interface TransactionRef {
  readonly id: string;
  /** undefined: an in-process caller. */
  readonly credential?: string;
  readonly admin?: boolean;
}

/**
 * Runs `body` as a statement of the open transaction `ref` names (TxnScope.within: its owner or an
 * admin of the tenant only), with the options scoped to it: the transaction's signal and timeout
 * (cut at its expiry), read-only when it was begun so.
 */
export function withinTransaction<T>(
  transactions: TxnScope,
  ref: TransactionRef,
  options: ExecuteOptions,
  body: (scoped: ExecuteOptions, txn: TxnContext) => Promise<T>,
): Promise<T> {
  const caller = {
    tenant: options.tenant,
    ...(ref.credential !== undefined ? { credential: ref.credential } : {}),
    ...(ref.admin !== undefined ? { admin: ref.admin } : {}),
  };
  const bounds = { timeoutMs: options.timeoutMs, ...(options.signal ? { signal: options.signal } : {}) };
  return transactions.within(ref.id, caller, bounds, async (statement) => {
    // The role's refusal wins over the transaction's (its message says what to change).
    const readOnly = options.readOnly ?? (statement.readOnly ? 'transaction' : undefined);
    const scoped = { ...options, signal: statement.signal, timeoutMs: statement.timeoutMs, ...(readOnly ? { readOnly } : {}) };
    return body(scoped, statement.txn);
  });
}

export interface StreamOptions {
  readonly params?: readonly unknown[];
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  readonly tenant: string;
  readonly readOnly?: ReadOnlyReason;
  readonly efSearch?: number;
  /** Rows per batch the stream hands out (the last batch may be smaller). */
  readonly batchRows: number;
}
