import { PGlite } from '@electric-sql/pglite';
import type { SqlEngine as SvcdbSql } from '../../../query/index.js';
import { pgArray, pgJson } from '../runner/index.js';

/**
 * The two sides of the fuzzer, each answering with PostgreSQL's text output per value (so the
 * comparison is the one a psql user would make): PGlite hands every built-in type over as text;
 * svcdb's JSON-ready values are formatted into that text here, typed by PostgreSQL's column type.
 */

export type Outcome =
  | { readonly kind: 'rows'; readonly columnTypes: readonly string[]; readonly rows: readonly (readonly string[])[] }
  | { readonly kind: 'error'; readonly code: string; readonly message: string; readonly crash: boolean };

/** PostgreSQL (PGlite, in process) with every value as its text output; session time zone UTC. */
export class PgSide {
  private constructor(
    private readonly db: PGlite,
    private readonly typeNames: Map<number, string>,
  ) {}

  static async open(): Promise<PgSide> {
    const parsers: Record<number, (value: string) => unknown> = {};
    for (let oid = 0; oid < 16384; oid++) parsers[oid] = (value) => value;
    const db = new PGlite({ parsers });
    await db.waitReady;
    await db.exec("SET TIME ZONE 'UTC'");
    const types = await db.query<{ oid: number; typname: string }>('SELECT oid::int AS oid, typname FROM pg_type');
    return new PgSide(db, new Map(types.rows.map((t) => [Number(t.oid), t.typname])));
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<Outcome> {
    try {
      const result = await this.db.query<unknown[]>(sql, [...params], { rowMode: 'array' });
      const columnTypes = result.fields.map((f) => this.typeNames.get(f.dataTypeID) ?? String(f.dataTypeID));
      return { kind: 'rows', columnTypes, rows: result.rows.map((row) => row.map((v) => pgText(v))) };
    } catch (error) {
      const e = error as { code?: unknown; message?: unknown };
      if (typeof e.code !== 'string') throw error; // not PostgreSQL's refusal: the oracle is broken
      return { kind: 'error', code: e.code, message: String(e.message), crash: false };
    }
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}

/** PGlite's text value (arrays come parsed into arrays of text). */
function pgText(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (Array.isArray(v)) return pgArray(v);
  return String(v);
}

/** svcdb's SQL engine in process; an error without a SvcError code, or INTERNAL_ERROR, is a crash. */
export class SvcdbSide {
  constructor(private readonly engine: SvcdbSql) {}

  async run(sql: string, params: readonly unknown[], pgTypes: readonly string[] | null): Promise<Outcome> {
    try {
      const result = await this.engine.execute(sql, { params: [...params], timeoutMs: 30_000, maxRows: 10_000, tenant: 'default' });
      const names = result.columns.map((c) => c.name);
      const types = result.columns.map((c, j) => pgTypes?.[j] ?? c.type.toLowerCase());
      return {
        kind: 'rows',
        columnTypes: result.columns.map((c) => c.type),
        rows: result.rows.map((row) => names.map((n, j) => svcdbText(row[n], types[j]!))),
      };
    } catch (error) {
      const e = error as { code?: unknown; message?: unknown };
      const code = typeof e.code === 'string' ? e.code : 'NO_CODE';
      return { kind: 'error', code, message: String(e.message ?? error), crash: code === 'NO_CODE' || code === 'INTERNAL_ERROR' };
    }
  }
}

/** A timestamp in PostgreSQL's text form: `YYYY-MM-DD HH:MM:SS[.fff][+00]`, fraction without trailing zeros. */
function pgTimestamp(s: string, withZone: boolean): string {
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}(?::?\d{2})?)?$/.exec(s);
  if (!m) return s;
  const fraction = (m[3] ?? '').replace(/0+$/, '').replace(/^\.$/, '');
  const zone = m[4] === undefined ? '' : m[4] === 'Z' || m[4] === '+00:00' || m[4] === '+0000' ? '+00' : m[4];
  return `${m[1]} ${m[2]}${fraction}${withZone ? zone || '+00' : ''}`;
}

/** A float8 as PostgreSQL 12+ prints it (shortest round-trip digits, `e+NN` above 1e15). */
function pgFloat(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  if (Object.is(x, -0)) return '-0';
  const abs = Math.abs(x);
  if (abs !== 0 && (abs >= 1e15 || abs < 1e-4)) return x.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
  return String(x);
}

/** One svcdb value as PostgreSQL's text output for a column of PostgreSQL type `type`. */
export function svcdbText(v: unknown, type: string): string {
  if (v === null || v === undefined) return 'NULL';
  const t = type.toLowerCase();
  if (t.includes('json')) return typeof v === 'string' && t === 'text' ? v : pgJson(v);
  if (typeof v === 'boolean') return v ? 't' : 'f';
  if (Array.isArray(v)) return pgArray(v);
  if (t === 'float8' || t === 'float4' || t.startsWith('double') || t === 'real') return pgFloat(Number(v));
  if (t === 'timestamptz' || t.includes('with time zone')) return pgTimestamp(String(v), true);
  if (t === 'timestamp' || t.startsWith('timestamp')) return pgTimestamp(String(v), false);
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}
