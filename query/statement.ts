import type { Logger } from '../core/logger.js';
import type { Projections } from '../projections/index.js';
import type { ScanCache } from './exec/scan-cache.js';
import type { SqlLimits } from './limits.js';
import type { TypeSystem } from './types/contract.js';
import type { TxnContext } from './txn/context.js';
import type { TxnScope } from './txn/scope.js';

/** What the engine is built with (by the composition root). */
export interface SqlEngineDeps {
  readonly projections: Projections;
  readonly types: TypeSystem;
  readonly logger: Logger;
  /** Defaults: DEFAULT_SQL_LIMITS. */
  readonly limits?: SqlLimits;
  /**
   * Where statements of transactions run (the transaction manager, built first): without it,
   * ExecuteOptions.transaction is refused and the statements of one request run one by one.
   */
  readonly transactions?: TxnScope;
}

/** The per-request settings every statement of a request shares. */
export interface StatementEnv {
  readonly tenant: string;
  /** Raw request parameters ($1 is params[0]), converted per inferred type. */
  readonly params: readonly unknown[];
  readonly deadlineMs: number;
  readonly signal: AbortSignal | undefined;
  readonly maxRows: number;
  /** Writes are refused, and why (ExecuteOptions.readOnly); null: writes allowed. */
  readonly readOnly: 'role' | 'transaction' | null;
  /** The open transaction the statement runs in (ExecuteOptions.transaction, or a request's atomic batch), or null. */
  readonly txn: TxnContext | null;
  readonly limits: SqlLimits;
  /** The engine's cache of whole-table scans (null when sized 0). */
  readonly scanCache: ScanCache | null;
  /** hnsw search beam of index scans (ExecuteOptions.efSearch). */
  readonly efSearch: number;
}
