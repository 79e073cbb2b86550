import type { SqlEngine as SvcdbSql } from '../../query/index.js';
import type { EngineResult, SqlEngine } from '../../test/sql/runner/index.js';

/**
 * svcdb's SQL engine called in the same process, as PGlite is: the comparison without HTTP and
 * JSON in between. Rows come back as the engine returns them for a response (JSON-ready values).
 */
export class SvcdbInProcessEngine implements SqlEngine {
  readonly name = 'svcdb-in-process';
  readonly dialects: ReadonlySet<string> = new Set(['postgresql', 'postgres', 'svcdb']);

  constructor(
    private readonly sql: SvcdbSql,
    private readonly timeoutMs = 600_000,
  ) {}

  async execute(sql: string): Promise<EngineResult> {
    try {
      const result = await this.sql.execute(sql, { timeoutMs: this.timeoutMs, maxRows: 100_000, tenant: 'default' });
      const names = result.columns.map((c) => c.name);
      return { kind: 'rows', columns: result.columns.map((c) => ({ name: c.name, type: c.type })), rows: result.rows.map((r) => names.map((n) => r[n])) };
    } catch (error) {
      const e = error as { code?: string; message?: string };
      return { kind: 'error', message: `${e.code ?? 'ERROR'}: ${e.message ?? String(error)}` };
    }
  }

  async close(): Promise<void> {
    // The engine belongs to the server that made it.
  }
}
