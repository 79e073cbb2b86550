/** PGlite as the PostgreSQL oracle: one instance per test file, started once. */
import { PGlite } from '@electric-sql/pglite';
import { isSvcError } from '../../../core/errors.js';
import { evalToText, pgTypeOf } from './mini-sql.js';

export interface Oracle {
  /** `select (expr)::text`: the text, null, or { error }. */
  text(expr: string): Promise<string | null | { error: string }>;
  typeOf(expr: string): Promise<string | { error: string }>;
  close(): Promise<void>;
}

export async function startOracle(): Promise<Oracle> {
  const db = new PGlite();
  await db.exec("set timezone = 'UTC'; set extra_float_digits = 1; set datestyle = 'ISO, MDY'; set intervalstyle = 'postgres'");
  const one = async (sql: string): Promise<unknown> => {
    const r = await db.query<unknown[]>(sql, [], { rowMode: 'array' });
    return r.rows[0]![0];
  };
  return {
    async text(expr) {
      try { return (await one(`select (${expr})::text`)) as string | null; } catch (e) { return { error: (e as Error).message }; }
    },
    async typeOf(expr) {
      try { return (await one(`select pg_typeof(${expr})::text`)) as string; } catch (e) { return { error: (e as Error).message }; }
    },
    close: () => db.close(),
  };
}

export type Outcome = string | null | { error: string };

/** Our result for `expr`, in the oracle's shape. Non-SvcError exceptions are bugs and propagate. */
export function ours(expr: string): Outcome {
  try {
    return evalToText(expr);
  } catch (e) {
    if (isSvcError(e)) return { error: e.message };
    throw e;
  }
}

export function oursType(expr: string): Outcome {
  try {
    return pgTypeOf(expr);
  } catch (e) {
    if (isSvcError(e)) return { error: e.message };
    throw e;
  }
}

/**
 * Compares outcomes: equal texts/NULLs, or both errors. With `messages`, error texts must match too
 * (ours may differ only in a trailing detail).
 */
export function sameOutcome(a: Outcome, b: Outcome, messages: boolean): boolean {
  if (a === null || b === null || typeof a === 'string' || typeof b === 'string') return a === b;
  // resolveFunction answers null for "no candidate" and "several candidates" alike.
  const ambiguous = /^(operator|function) is not unique: /.test(b.error) && /does not exist$|^operator does not exist: /.test(a.error);
  return !messages || a.error === b.error || ambiguous;
}

/** Runs the table against both and returns the mismatches, formatted for a readable failure. */
export async function diff(oracle: Oracle, exprs: readonly string[], messages = true): Promise<string[]> {
  const out: string[] = [];
  for (const expr of exprs) {
    const want = await oracle.text(expr);
    let got: Outcome;
    try { got = ours(expr); } catch (e) { got = { error: `CRASH ${(e as Error).stack}` }; out.push(`${expr}\n   pg:   ${JSON.stringify(want)}\n   ours: ${JSON.stringify(got)}`); continue; }
    if (!sameOutcome(got, want, messages)) out.push(`${expr}\n   pg:   ${JSON.stringify(want)}\n   ours: ${JSON.stringify(got)}`);
  }
  return out;
}

export async function diffTypes(oracle: Oracle, exprs: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const expr of exprs) {
    const want = await oracle.typeOf(expr);
    if (typeof want !== 'string') continue; // the value table checks errors
    const got = oursType(expr);
    if (got !== want) out.push(`pg_typeof(${expr})\n   pg:   ${JSON.stringify(want)}\n   ours: ${JSON.stringify(got)}`);
  }
  return out;
}
