import type { TxnContext } from './context.js';

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

/** What one statement of an open transaction runs with (TxnScope.within). */
export interface TxnStatement {
  readonly txn: TxnContext;
  /** The transaction was begun read-only: the statement may only read. */
  readonly readOnly: boolean;
  /** Aborts when the caller's signal does, or when the transaction ends meanwhile (rollback, expiry). */
  readonly signal: AbortSignal;
  /** The caller's timeout, cut at the transaction's expiry. */
  readonly timeoutMs: number;
}

/** The caller's bounds of one statement run in a transaction. */
export interface TxnStatementBounds {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

/**
 * The transaction-scope layer between the SQL engine and the transaction manager: the engine runs
 * statements inside a scope, the manager (manager.ts) provides scopes, and neither knows the other
 * (both depend on this file only), so the composition root builds the manager, then the engine.
 */
export interface TxnScope {
  /**
   * Runs `body` in a read_committed transaction of its own, then commits it (or rolls it back):
   * the statements of one request as one log record (batch.ts).
   */
  atomically<T>(tenant: string, timeoutMs: number, body: (txn: TxnContext) => Promise<T>, end: 'commit' | 'rollback'): Promise<T>;
  /** Runs one statement in the open transaction `id`; a failing statement aborts it (PostgreSQL's rule). */
  within<T>(id: string, caller: TxnCaller, bounds: TxnStatementBounds, body: (statement: TxnStatement) => Promise<T>): Promise<T>;
}
