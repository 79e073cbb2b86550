/**
 * The expression differential: each expression runs as `SELECT (expr)::text` (and
 * `SELECT pg_typeof(expr)::text`) through PostgreSQL (PGlite, started once per file) and through
 * the svcdb SQL engine over a real stack (parse, bind, plan, execute: nothing stood in for).
 */
import { PGlite } from '@electric-sql/pglite';
import { isSvcError } from '../../../core/errors.js';
import { openSql, type SqlHarness } from '../helpers.js';

export type Outcome = string | null | { error: string };

/** Something that answers a one-row, one-column query: PostgreSQL or svcdb. */
export interface Answerer {
  /** The first column of the first row, or { error }. */
  scalar(sql: string): Promise<Outcome>;
  close(): Promise<void>;
}

export async function startOracle(): Promise<Answerer> {
  const db = new PGlite();
  await db.exec("set timezone = 'UTC'; set extra_float_digits = 1; set datestyle = 'ISO, MDY'; set intervalstyle = 'postgres'");
  return {
    async scalar(sql) {
      try {
        const r = await db.query<unknown[]>(sql, [], { rowMode: 'array' });
        return r.rows[0]![0] as string | null;
      } catch (e) {
        return { error: (e as Error).message };
      }
    },
    close: () => db.close(),
  };
}

/**
 * The engine under test. An error that is not a SvcError, or an INTERNAL_ERROR, is a crash: it is
 * reported as a mismatch whatever PostgreSQL says.
 */
export async function startEngine(): Promise<Answerer> {
  const h: SqlHarness = await openSql();
  return {
    async scalar(sql) {
      try {
        const r = await h.q(sql);
        const value = Object.values(r.rows[0]!)[0];
        return value === null ? null : String(value);
      } catch (e) {
        if (isSvcError(e) && e.code !== 'INTERNAL_ERROR') return { error: e.message };
        return { error: `CRASH ${(e as Error).stack ?? String(e)}` };
      }
    },
    close: () => h.close(),
  };
}

const isCrash = (o: Outcome): boolean => o !== null && typeof o === 'object' && o.error.startsWith('CRASH ');

/**
 * Compares outcomes: equal texts/NULLs, or both errors. With `messages`, error texts must match too,
 * except that "no such operator" and "operator is not unique" count as the same refusal.
 */
export function sameOutcome(ours: Outcome, pg: Outcome, messages: boolean): boolean {
  if (isCrash(ours)) return false;
  if (ours === null || pg === null || typeof ours === 'string' || typeof pg === 'string') return ours === pg;
  const ambiguous = /^(operator|function) is not unique: /.test(pg.error) && /does not exist$|^operator does not exist: /.test(ours.error);
  return !messages || ours.error === pg.error || ambiguous;
}

/** Runs each statement on both and returns the mismatches, formatted for a readable failure. */
export async function diffStatements(pg: Answerer, engine: Answerer, statements: readonly string[], messages = true): Promise<string[]> {
  const out: string[] = [];
  for (const sql of statements) {
    const want = await pg.scalar(sql);
    const got = await engine.scalar(sql);
    if (!sameOutcome(got, want, messages)) out.push(`${sql}\n   pg:   ${JSON.stringify(want)}\n   ours: ${JSON.stringify(got)}`);
  }
  return out;
}

/** `(expr)::text` on both. */
export function diff(pg: Answerer, engine: Answerer, exprs: readonly string[]): Promise<string[]> {
  return diffStatements(
    pg,
    engine,
    exprs.map((e) => `SELECT (${e})::text`),
  );
}

/** `pg_typeof(expr)` on both, for the expressions PostgreSQL can type (the value tables check errors). */
export async function diffTypes(pg: Answerer, engine: Answerer, exprs: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const expr of exprs) {
    const sql = `SELECT pg_typeof(${expr})::text`;
    const want = await pg.scalar(sql);
    if (want === null || typeof want !== 'string') continue;
    const got = await engine.scalar(sql);
    if (got !== want) out.push(`${sql}\n   pg:   ${JSON.stringify(want)}\n   ours: ${JSON.stringify(got)}`);
  }
  return out;
}
