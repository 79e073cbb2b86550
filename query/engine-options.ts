/** What a caller of the SQL engine passes with a statement (SqlEngine.execute, stream). */
import { SvcError } from '../core/errors.js';
import { LIMITS } from './limits.js';

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

/** Why writes are refused (ExecuteOptions.readOnly). */
export type ReadOnlyReason = 'role' | 'transaction';

/** An open transaction and the credential using it (only its owner, or an admin of the tenant, may). */
export interface TransactionRef {
  readonly id: string;
  /** undefined: an in-process caller. */
  readonly credential?: string;
  readonly admin?: boolean;
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
