import { PGlite } from '@electric-sql/pglite';

/** Real PostgreSQL (WASM) as the oracle of the differential tests. */
export async function openPg(): Promise<PGlite> {
  const pg = new PGlite();
  await pg.query("SET TIME ZONE 'UTC'");
  return pg;
}

/** A JSON-comparable form of a value from either side. */
export function normalize(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : String(value);
  if (typeof value === 'number') return Number.isInteger(value) ? value : Number(value.toPrecision(12));
  if (typeof value === 'string' && /^-?\d+\.\d+$/.test(value)) return value;
  if (Array.isArray(value)) return value.map(normalize);
  if (typeof value === 'object') return JSON.parse(JSON.stringify(value));
  return value;
}

export function normalizeRows(rows: readonly Record<string, unknown>[], columns: readonly string[]): unknown[][] {
  return rows.map((r) => columns.map((c) => normalize(r[c])));
}

export function sortRows(rows: unknown[][]): unknown[][] {
  return [...rows].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : JSON.stringify(a) > JSON.stringify(b) ? 1 : 0));
}

/** PGlite result rows as arrays in field order (duplicate names kept apart). */
export async function pgRows(pg: PGlite, sql: string, params: unknown[] = []): Promise<unknown[][]> {
  const result = await pg.query<unknown[]>(sql, params, { rowMode: 'array' });
  return result.rows.map((r) => r.map(normalize));
}
