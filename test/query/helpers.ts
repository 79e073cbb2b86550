import { silentLogger } from '../../core/logger.js';
import { SqlEngine, typeSystem, type QueryResult, type SqlLimits } from '../../query/index.js';
import { openStack, tempDir, type Stack } from '../helpers/stack.js';

/** A real stack (log + LevelDB + projections) in a temp dir with a SqlEngine over it. */
export interface SqlHarness {
  readonly engine: SqlEngine;
  readonly stack: Stack;
  q(sql: string, params?: unknown[]): Promise<QueryResult>;
  rows(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

export async function openSql(options: { limits?: SqlLimits } = {}): Promise<SqlHarness> {
  const dir = await tempDir('svcdb-sql-');
  const stack = await openStack(dir.dir);
  const engine = new SqlEngine({ projections: stack.projections, types: typeSystem, logger: silentLogger, ...(options.limits ? { limits: options.limits } : {}) });
  const q = (sql: string, params: unknown[] = []): Promise<QueryResult> => engine.execute(sql, { params, timeoutMs: 30_000, maxRows: 10_000, tenant: 'default' });
  return {
    engine,
    stack,
    q,
    rows: async (sql, params) => (await q(sql, params)).rows,
    async close() {
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
