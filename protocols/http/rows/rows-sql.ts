import type { TableDef } from '../../../core/catalog.js';
import { SvcError, columnNotFound } from '../../../core/errors.js';
import { checkExpression } from '../../../query/index.js';
import { afterSql, orderBySql, type CursorPosition, type OrderKey } from './cursor.js';
import { primaryKeyNames, qualified, quoteIdent, type TableRef } from '../tables/table-ref.js';

/**
 * SQL text of the row endpoints. Identifiers are checked against the table and quoted; values are
 * always $n parameters; a filter is spliced only after checkExpression proved it one expression.
 */
export interface Statement {
  readonly sql: string;
  readonly params: unknown[];
}

/** A filter (SQL WHERE condition text) checked to be one expression, ready to splice in parentheses. */
export function filterSql(filter: string, textBytesMax: number): string {
  return `(${checkExpression(filter, { what: 'filter', textBytesMax })})`;
}

/** A column of the table, or 400 COLUMN_NOT_FOUND. */
function column(table: TableDef, name: string): string {
  if (!table.columns.some((c) => c.name === name)) throw columnNotFound(name, { relation: table.name });
  return name;
}

/** select= text (comma-separated names, * or absent for all) as the table's column names. */
export function selectColumns(table: TableDef, select: string | undefined): readonly string[] {
  if (select === undefined || select.trim() === '*') return columnNames(table);
  const names = select.split(',').map((s) => s.trim());
  if (names.some((n) => n === '')) throw new SvcError('INVALID_QUERY', 'select has an empty item: give column names separated by commas', { field: 'select' });
  return [...new Set(names.map((n) => (n === '*' ? null : column(table, n))).flatMap((n) => (n === null ? table.columns.map((c) => c.name) : [n])))];
}

/** Every column's name per table definition (an ALTER makes a new one): asked on every GET of a row. */
const allColumns = new WeakMap<TableDef, readonly string[]>();

function columnNames(table: TableDef): readonly string[] {
  let names = allColumns.get(table);
  if (names === undefined) {
    names = Object.freeze(table.columns.map((c) => c.name));
    allColumns.set(table, names);
  }
  return names;
}

/** RETURNING text of a returning list (column names, or ["*"]); empty when none is asked for. */
export function returningSql(table: TableDef, returning: readonly string[] | undefined): string {
  if (!returning || returning.length === 0) return '';
  if (returning.includes('*')) return ' RETURNING *';
  return ` RETURNING ${[...new Set(returning)].map((n) => quoteIdent(column(table, n))).join(', ')}`;
}

/** Names of extra select items carrying the cursor's key values: not names of the table's columns. */
export function keyAliases(table: TableDef, count: number): string[] {
  let prefix = '__svc_key_';
  while (table.columns.some((c) => c.name.startsWith(prefix))) prefix = `_${prefix}`;
  return Array.from({ length: count }, (_v, i) => `${prefix}${i}`);
}

export interface PageRequest {
  readonly ref: TableRef;
  readonly columns: readonly string[];
  /** Already checked (filterSql). */
  readonly filter: string | null;
  /** Order keys, primary key last; empty: the table's storage order (no primary key). */
  readonly keys: readonly OrderKey[];
  /** Aliases of the key columns in the result (keyAliases; one per key), or none when there are no cursors. */
  readonly aliases: readonly string[];
  readonly cursor: CursorPosition | null;
  /** Rows to fetch (one more than the page, to know whether there are more). */
  readonly fetch: number;
  readonly offset: number;
}

/** One page: the selected columns, the key values under their aliases, backwards for a prev cursor. */
export function pageSql(page: PageRequest): Statement {
  const params: unknown[] = [];
  const reverse = page.cursor?.direction === 'prev';
  const items = [...page.columns.map(quoteIdent), ...page.aliases.map((a, i) => `${quoteIdent(page.keys[i]!.column)} AS ${quoteIdent(a)}`)];
  const where: string[] = [];
  if (page.filter !== null) where.push(page.filter);
  if (page.cursor) where.push(`(${afterSql(page.keys, page.cursor.values, reverse, params)})`);
  let sql = `SELECT ${items.join(', ')} FROM ${qualified(page.ref)}`;
  if (where.length > 0) sql += ` WHERE ${where.join(' AND ')}`;
  if (page.keys.length > 0) sql += ` ORDER BY ${orderBySql(page.keys, reverse)}`;
  sql += ` LIMIT ${page.fetch}`;
  if (page.offset > 0) sql += ` OFFSET ${page.offset}`;
  return { sql, params };
}

export function countSql(ref: TableRef, filter: string | null): string {
  return `SELECT count(*) AS n FROM ${qualified(ref)}${filter === null ? '' : ` WHERE ${filter}`}`;
}

/** SET "c" = $n, ... for an updates object (column -> JSON value); at least one column. */
function setSql(table: TableDef, updates: Readonly<Record<string, unknown>>, params: unknown[]): string {
  const names = Object.keys(updates);
  if (names.length === 0) throw new SvcError('VALIDATION_ERROR', 'updates must set at least one column', { field: 'updates', reason: 'schema_validation' });
  return names.map((n) => `${quoteIdent(column(table, n))} = $${params.push(updates[n])}`).join(', ');
}

export function updateSql(
  ref: TableRef,
  table: TableDef,
  updates: Readonly<Record<string, unknown>>,
  where: Statement,
  returning: readonly string[] | undefined,
): Statement {
  const params = [...where.params];
  const set = setSql(table, updates, params);
  return { sql: `UPDATE ${qualified(ref)} SET ${set} WHERE ${where.sql}${returningSql(table, returning)}`, params };
}

export function deleteSql(ref: TableRef, table: TableDef, where: Statement, returning: readonly string[] | undefined): Statement {
  return { sql: `DELETE FROM ${qualified(ref)} WHERE ${where.sql}${returningSql(table, returning)}`, params: [...where.params] };
}

/** WHERE text matching one primary key: the id's parts (text) in key order as parameters. */
export function keySql(table: TableDef, parts: readonly string[]): Statement {
  const names = primaryKeyNames(table);
  const params: unknown[] = [];
  return { sql: names.map((n, i) => `${quoteIdent(n)} = $${params.push(parts[i])}`).join(' AND '), params };
}

export function selectByKeySql(ref: TableRef, columns: readonly string[], key: Statement): Statement {
  return { sql: `SELECT ${columns.map(quoteIdent).join(', ')} FROM ${qualified(ref)} WHERE ${key.sql}`, params: key.params };
}
