import { SvcError } from '../../../core/errors.js';
import type { BeginOptions, ExecuteOptions, QueryResult, SqlEngine, TxnCaller, TxnManager } from '../../../query/index.js';
import { formatError, type FormattedError } from '../errors.js';

/** What a request's transaction needs of query: TxnManager's begin/commit/rollback, and a statement inside it. */
export interface MutationTransactions {
  begin(options: BeginOptions): Promise<{ readonly transactionId: string }>;
  query(id: string, caller: TxnCaller, sql: string, options: Omit<ExecuteOptions, 'transaction' | 'tenant'>): Promise<QueryResult>;
  commit(id: string, caller: TxnCaller): Promise<unknown>;
  rollback(id: string, caller: TxnCaller): Promise<unknown>;
}

/** MutationTransactions over query's TxnManager, its statements run by the engine inside the transaction. */
export function mutationTransactions(engine: SqlEngine, manager: TxnManager): MutationTransactions {
  return {
    begin: (options) => manager.begin(options),
    query: (id, caller, sql, options) =>
      engine.execute(sql, {
        ...options,
        tenant: caller.tenant,
        transaction: {
          id,
          ...(caller.credential !== undefined ? { credential: caller.credential } : {}),
          ...(caller.admin !== undefined ? { admin: caller.admin } : {}),
        },
      }),
    commit: (id, caller) => manager.commit(id, caller),
    rollback: (id, caller) => manager.rollback(id, caller),
  };
}

/** The options of each statement (deadline, row cap, signal, read-only role), computed when it runs. */
export type StatementOptions = () => Omit<ExecuteOptions, 'transaction' | 'tenant' | 'params'> & { readonly tenant?: string };

/** How long after the request's deadline its transaction expires on its own (a backstop: settle ends it first). */
const EXPIRY_MARGIN_MS = 60_000;

/** details.reason of the error a field gets when an earlier field of its mutation failed (left out of the response). */
export const MUTATION_SKIPPED = 'mutation_skipped';

/** A response as execution gives it (errors already in our shape). */
export interface ExecutionBody {
  readonly data?: unknown;
  readonly errors?: readonly unknown[];
}

/**
 * The transaction of one GraphQL request: begun by its first mutation statement, then every
 * statement of the request (writes, and the reads of `returning` relations) runs inside it, one at
 * a time, in the order asked. settle() commits it when the request had no error, else rolls it back
 * (Hasura's rule: the top-level fields of one mutation commit together or not at all).
 */
export class RequestTransaction {
  private id: Promise<string> | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private failure: unknown = null;
  /** Set once a mutation field started: the response is then all-or-nothing. */
  private mutating = false;

  constructor(
    private readonly txns: MutationTransactions,
    private readonly tenant: string,
    private readonly options: StatementOptions,
  ) {}

  /** Whether a statement began the transaction (reads of the request then run inside it). */
  get begun(): boolean {
    return this.id !== null;
  }

  /** Called as each mutation field starts: refuses it (with a marker error) when an earlier one failed. */
  enter(): void {
    this.mutating = true;
    if (this.failure !== null) throw skipped();
  }

  /** Records a field's failure: later fields are skipped and settle() rolls back. */
  fail(error: unknown): void {
    this.failure ??= error;
  }

  /** Runs ONE statement inside the transaction (beginning it first), after the statements queued before it. */
  run(sql: string, params: readonly unknown[]): Promise<QueryResult> {
    const next = this.queue.then(() => this.runNow(sql, params));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async runNow(sql: string, params: readonly unknown[]): Promise<QueryResult> {
    if (this.failure !== null) throw skipped();
    const { tenant: _tenant, ...options } = this.options();
    this.id ??= this.txns
      .begin({ tenant: this.tenant, isolation: 'read_committed', readOnly: false, internal: true, timeoutMs: options.timeoutMs + EXPIRY_MARGIN_MS })
      .then((created) => created.transactionId);
    try {
      return await this.txns.query(await this.id, { tenant: this.tenant }, sql, { ...options, params });
    } catch (error) {
      this.fail(error);
      throw error;
    }
  }

  /**
   * Ends the transaction after execution and gives the response to send: unchanged for a request
   * that ran no mutation; on any error the transaction is rolled back and `data` is null (the
   * skipped fields' errors left out); a failing commit (a conflict) is the response's only error.
   */
  async settle<T extends ExecutionBody>(result: T): Promise<T | { data: null; errors: FormattedError[] }> {
    if (!this.mutating) return result;
    const errors = (result.errors ?? []) as FormattedError[];
    const id = this.id === null ? null : await this.id.catch(() => null);
    if (errors.length > 0 || this.failure !== null) {
      if (id !== null) await this.txns.rollback(id, { tenant: this.tenant }).catch(() => undefined);
      const kept = errors.filter((e) => (e.extensions?.details as { reason?: string } | undefined)?.reason !== MUTATION_SKIPPED);
      const shown = kept.length > 0 ? kept : errors.length > 0 ? errors : [formatError(this.failure as Error)];
      return { data: null, errors: shown };
    }
    if (id === null) return result;
    try {
      await this.txns.commit(id, { tenant: this.tenant });
    } catch (error) {
      return { data: null, errors: [formatError(error as Error)] };
    }
    return result;
  }

  /** Rolls back a begun transaction when execution itself threw (settle() was not reached). */
  async abandon(): Promise<void> {
    const id = this.id === null ? null : await this.id.catch(() => null);
    if (id !== null) await this.txns.rollback(id, { tenant: this.tenant }).catch(() => undefined);
  }
}

function skipped(): SvcError {
  return new SvcError('INVALID_STATE', 'not run: an earlier field of this mutation failed, so nothing of it was committed', { reason: MUTATION_SKIPPED });
}
