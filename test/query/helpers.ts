import { silentLogger } from '../../core/logger.js';
import { SqlEngine, TxnManager, typeSystem, type QueryResult, type SqlLimits, type TxnLimits } from '../../query/index.js';
import { openStack, tempDir, type Stack } from '../helpers/stack.js';

/** A real stack (log + LevelDB + projections) in a temp dir with a SqlEngine over it. */
export interface SqlHarness {
  readonly engine: SqlEngine;
  readonly stack: Stack;
  /** The transaction manager the engine is built on (openSql's `transactions`), or null. */
  readonly transactions: TxnManager | null;
  q(sql: string, params?: unknown[]): Promise<QueryResult>;
  rows(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

/**
 * `transactions`: build the engine on a transaction manager with these limits (as the server
 * does), so the statements of one request run as one transaction; without it they run one by one.
 */
export async function openSql(options: { limits?: SqlLimits; transactions?: TxnLimits } = {}): Promise<SqlHarness> {
  const dir = await tempDir('svcdb-sql-');
  const stack = await openStack(dir.dir);
  const transactions = options.transactions
    ? new TxnManager({ projections: stack.projections, limits: options.transactions, logger: silentLogger })
    : undefined;
  const engine = new SqlEngine({
    projections: stack.projections,
    types: typeSystem,
    logger: silentLogger,
    ...(options.limits ? { limits: options.limits } : {}),
    ...(transactions ? { transactions } : {}),
  });
  const q = (sql: string, params: unknown[] = []): Promise<QueryResult> =>
    engine.execute(sql, { params, timeoutMs: 30_000, maxRows: 10_000, tenant: 'default' });
  return {
    engine,
    stack,
    transactions: transactions ?? null,
    q,
    rows: async (sql, params) => (await q(sql, params)).rows,
    async close() {
      await transactions?.close();
      await stack.close();
      await dir.remove();
    },
  };
}

/** The SvcError a promise rejects with (code, message, details); fails when it resolves. */
export async function caught(p: Promise<unknown>): Promise<{ code: string; message: string; details: Record<string, unknown> }> {
  try {
    await p;
  } catch (e) {
    const err = e as { code: string; message: string; details: Record<string, unknown> };
    return { code: err.code, message: err.message, details: err.details };
  }
  throw new Error('expected an error');
}
