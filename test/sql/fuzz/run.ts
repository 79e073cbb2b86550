import type { SqlEngine as SvcdbSql } from '../../../query/index.js';
import { PgSide, SvcdbSide, type Outcome } from './engines.js';
import type { FuzzStatement } from './generate.js';
import { DATA_SQL, MUTABLE_TABLES, TABLE_DDL } from './schema.js';

/**
 * Runs generated statements on PostgreSQL and svcdb and classifies each:
 * - agree: both accept and return the same rows (as multisets, in order when `ordered`);
 * - both-refuse: both raise an error;
 * - svcdb-refuses: PostgreSQL accepts, svcdb raises an error (a gap, never a wrong answer);
 * - pg-refuses: svcdb accepts what PostgreSQL refuses (e.g. a missed division by zero);
 * - wrong: both accept, the rows differ (or, after DML, the tables differ);
 * - crash: svcdb throws something that is not a SvcError, or INTERNAL_ERROR.
 * After every data-changing statement both sides' tables are reloaded from the base data, so one
 * disagreement is counted once and never leaks into later statements.
 */

export type Verdict = 'agree' | 'both-refuse' | 'svcdb-refuses' | 'pg-refuses' | 'wrong' | 'crash';

export interface Judged {
  readonly statement: FuzzStatement;
  readonly verdict: Verdict;
  readonly pg: Outcome;
  readonly svcdb: Outcome;
  /** For wrong answers: what differs, short. */
  readonly detail: string;
}

export class FuzzRunner {
  /** Setup statements svcdb refused: reported here (fuzz.test.ts expects none). */
  readonly svcdbSetupErrors: string[] = [];

  private constructor(
    private readonly pg: PgSide,
    private readonly svcdb: SvcdbSide,
  ) {}

  /** Creates the schema and loads the data on both sides; PostgreSQL must accept all of it. */
  static async open(engine: SvcdbSql): Promise<FuzzRunner> {
    const runner = new FuzzRunner(await PgSide.open(), new SvcdbSide(engine));
    for (const sql of [...TABLE_DDL, ...DATA_SQL]) {
      const pg = await runner.pg.run(sql);
      if (pg.kind === 'error') throw new Error(`the fuzzer's setup fails on PostgreSQL: ${sql}\n  ${pg.message}`);
      const svc = await runner.svcdb.run(sql, [], null);
      if (svc.kind === 'error') runner.svcdbSetupErrors.push(`${sql.slice(0, 80)} -> ${svc.code}: ${svc.message}`);
    }
    return runner;
  }

  /** Runs one statement on both sides and judges it. */
  async judge(statement: FuzzStatement): Promise<Judged> {
    const pg = await this.pg.run(statement.sql, statement.params);
    const svcdb = await this.svcdb.run(statement.sql, statement.params, pg.kind === 'rows' ? pg.columnTypes : null);
    let verdict = verdictOf(pg, svcdb, statement.ordered);
    let detail = verdict === 'wrong' ? difference(pg, svcdb) : '';
    if (statement.changesData) {
      const tables = verdict === 'agree' ? await this.tablesDiffer() : null;
      if (tables !== null && verdict === 'agree') {
        // Accepted by both: svcdb must have changed what PostgreSQL changed (a refusal is judged by its error).
        verdict = 'wrong';
        detail = `after the statement: ${tables}`;
      }
      await this.reload();
    }
    return { statement, verdict, pg, svcdb, detail };
  }

  /** The first mutable table whose contents differ between the sides, or null. */
  private async tablesDiffer(): Promise<string | null> {
    for (const table of MUTABLE_TABLES) {
      const sql = `SELECT * FROM ${table} ORDER BY id`;
      const pg = await this.pg.run(sql);
      const svc = await this.svcdb.run(sql, [], pg.kind === 'rows' ? pg.columnTypes : null);
      if (verdictOf(pg, svc, true) !== 'agree') return `table ${table}: ${difference(pg, svc)}`;
    }
    return null;
  }

  private async reload(): Promise<void> {
    for (const table of MUTABLE_TABLES) {
      for (const side of ['pg', 'svcdb'] as const) {
        const run = (sql: string): Promise<Outcome> => (side === 'pg' ? this.pg.run(sql) : this.svcdb.run(sql, [], null));
        const deleted = await run(`DELETE FROM ${table}`);
        if (deleted.kind === 'error') throw new Error(`cannot empty ${table} on ${side}: ${deleted.message}`);
      }
    }
    for (const sql of DATA_SQL.filter((s) => MUTABLE_TABLES.some((t) => s.startsWith(`INSERT INTO ${t} `)))) {
      const pg = await this.pg.run(sql);
      const svc = await this.svcdb.run(sql, [], null);
      if (pg.kind === 'error' || svc.kind === 'error') throw new Error(`cannot reload: ${sql.slice(0, 60)}`);
    }
  }

  async close(): Promise<void> {
    await this.pg.close();
  }
}

/**
 * A row for comparison. float8/float4 values are compared to 12 significant digits: summation order
 * (stddev, avg of floats) changes the last digits, which a user does not call a different answer;
 * numeric stays exact (its scale is part of PostgreSQL's output).
 */
function rowText(row: readonly string[], types: readonly string[]): string {
  return row.map((v, j) => (FLOAT_TYPES.has(types[j] ?? '') && /^-?[\d.]+(e[+-]?\d+)?$/.test(v) ? String(Number(Number(v).toPrecision(12))) : v)).join(' | ');
}
const FLOAT_TYPES = new Set(['float8', 'float4']);

function verdictOf(pg: Outcome, svcdb: Outcome, ordered: boolean): Verdict {
  if (svcdb.kind === 'error' && svcdb.crash) return 'crash';
  if (pg.kind === 'error') return svcdb.kind === 'error' ? 'both-refuse' : 'pg-refuses';
  if (svcdb.kind === 'error') return 'svcdb-refuses';
  if (pg.columnTypes.length !== svcdb.columnTypes.length || pg.rows.length !== svcdb.rows.length) return 'wrong';
  const a = pg.rows.map((row) => rowText(row, pg.columnTypes));
  const b = svcdb.rows.map((row) => rowText(row, pg.columnTypes));
  if (!ordered) {
    a.sort();
    b.sort();
  }
  return a.every((x, i) => x === b[i]) ? 'agree' : 'wrong';
}

/** A short account of how two row sets differ (column count, row count, first differing row). */
function difference(pg: Outcome, svcdb: Outcome): string {
  if (pg.kind === 'error' || svcdb.kind === 'error')
    return `pg: ${pg.kind === 'error' ? pg.message : 'rows'}; svcdb: ${svcdb.kind === 'error' ? svcdb.message : 'rows'}`;
  if (pg.columnTypes.length !== svcdb.columnTypes.length) return `columns: pg ${pg.columnTypes.length}, svcdb ${svcdb.columnTypes.length}`;
  const a = pg.rows.map((row) => rowText(row, pg.columnTypes)).sort();
  const b = svcdb.rows.map((row) => rowText(row, pg.columnTypes)).sort();
  const onlyPg = a.filter((x) => !b.includes(x));
  const onlySvc = b.filter((x) => !a.includes(x));
  if (onlyPg.length === 0 && onlySvc.length === 0 && a.length === b.length) return 'same rows, different order';
  return `rows pg ${a.length}, svcdb ${b.length}; pg only: [${onlyPg.slice(0, 3).join('; ')}]; svcdb only: [${onlySvc.slice(0, 3).join('; ')}]`;
}

/** An error message with quoted names, numbers and positions removed: the refusal's signature. */
export function errorSignature(outcome: Outcome): string {
  if (outcome.kind !== 'error') return '';
  const keepTokens = outcome.message.startsWith('syntax error');
  const message = outcome.message
    .replace(/\(line \d+, column \d+\)/g, '')
    .replace(/"[^"]*"/g, (m) => (keepTokens ? m : '"…"'))
    .replace(/'[^']*'/g, "'…'")
    .replace(/\b\d+\b/g, 'N')
    .trim();
  return `${outcome.code}: ${message}`.slice(0, 120);
}
