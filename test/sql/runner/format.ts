/**
 * Result formatting, the same rules as ../shared/conformance/sql/run.mjs (keep them in step, so a
 * file behaves the same in both runners):
 * - NULL -> `NULL`, booleans -> `t` / `f`, the empty string -> `(empty)`;
 * - a value of a column whose SQL type mentions json: a string is kept (it is the text form, as
 *   PostgreSQL sends it), anything else is printed with PostgreSQL's jsonb separators `, ` and `: `;
 * - arrays as PostgreSQL's `{a,b}` text; other objects as JSON;
 * - with float3: type-R values with 3 decimals, type-I values truncated (SQLite's files need it).
 * PGlite hands every value over as PostgreSQL's text output, so there these rules are the identity
 * (apart from NULL and the empty string); over HTTP they turn svcdb's JSON values into that text.
 */

import { JsonNull, JsonNumber } from '../../../core/json-exact.js';
export interface FormatOptions {
  readonly float3: boolean;
}

function pgArrayElement(x: unknown): string {
  if (x === null || x === undefined) return 'NULL';
  if (Array.isArray(x)) return pgArray(x);
  if (typeof x === 'boolean') return x ? 't' : 'f';
  const s = String(x);
  return /[\s,{}"]/.test(s) || s === '' ? JSON.stringify(s) : s;
}

/** PostgreSQL's array text form, as run.mjs writes it. */
export function pgArray(a: readonly unknown[]): string {
  return `{${a.map(pgArrayElement).join(',')}}`;
}

/** PostgreSQL's jsonb text form: `, ` between elements and `: ` after keys. */
export function pgJson(j: unknown): string {
  if (j === null || j instanceof JsonNull) return 'null'; // a top-level JSON null comes as JSON_NULL (SQL NULL is null)
  if (j instanceof JsonNumber) return j.text; // an exact jsonb number, written as this text on the wire
  if (Array.isArray(j)) return `[${j.map(pgJson).join(', ')}]`;
  if (typeof j === 'object') {
    return `{${Object.entries(j as Record<string, unknown>)
      .map(([k, x]) => `${JSON.stringify(k)}: ${pgJson(x)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(j);
}

/** One value as the expected-result text of a .slt file. */
export function formatValue(v: unknown, typeLetter: string | undefined, sqlType: string, options: FormatOptions): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'boolean') return v ? 't' : 'f';
  let value: unknown = v;
  if (/json/i.test(sqlType)) value = typeof v === 'string' ? v : pgJson(v);
  else if (Array.isArray(v)) value = pgArray(v);
  else if (typeof v === 'object') value = JSON.stringify(v);
  let s = String(value);
  if (s === '') return '(empty)';
  if (options.float3 && typeLetter === 'I' && /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(s)) s = String(Math.trunc(Number(s)));
  else if (typeLetter === 'R' && options.float3 && !Number.isNaN(Number(s))) s = Number(s).toFixed(3);
  return s;
}

/** Formats every row; types[j] is the record's type letter, sqlTypes[j] the engine's column type. */
export function formatRows(rows: readonly (readonly unknown[])[], types: string, sqlTypes: readonly string[], options: FormatOptions): string[][] {
  return rows.map((row) => row.map((v, j) => formatValue(v, types[j], sqlTypes[j] ?? '', options)));
}
