import { SvcError, columnNotFound } from '../../../core/errors.js';
import type { TableDef } from '../../../core/catalog.js';
import { primaryKeyNames, quoteIdent } from '../tables/table-ref.js';

/**
 * Keyset pagination for GET /tables/{t}/rows. A page is ordered by the order_by columns plus the
 * primary key as tie-breaker, so every row has one place in the order. A cursor carries that
 * order and the key values of one row; the next page is the rows strictly after it (the previous
 * page the rows strictly before it), found by a WHERE over those values. Rows inserted or deleted
 * elsewhere in the order cannot shift it: no row that exists throughout is skipped or repeated.
 */
export interface OrderKey {
  readonly column: string;
  readonly descending: boolean;
}

export interface CursorPosition {
  /** The order the values belong to (orderText of the keys). */
  readonly order: string;
  /** 'next': rows after the row; 'prev': rows before it. */
  readonly direction: 'next' | 'prev';
  /** JSON values of the row's order keys, as the API returns them. */
  readonly values: readonly unknown[];
}

const CURSOR_VERSION = 1;

/** order_by text (`-score,name`) to keys, each a column of the table; the primary key is appended. */
export function orderKeys(table: TableDef, orderBy: string | undefined): OrderKey[] {
  const keys: OrderKey[] = [];
  for (const raw of (orderBy ?? '').split(',')) {
    const item = raw.trim();
    if (item === '') {
      if (orderBy !== undefined && orderBy.trim() !== '') throw badOrder('has an empty item');
      continue;
    }
    const descending = item.startsWith('-');
    const column = (descending || item.startsWith('+') ? item.slice(1) : item).trim();
    if (!table.columns.some((c) => c.name === column)) throw columnNotFound(column, { relation: table.name });
    if (keys.some((k) => k.column === column)) throw badOrder(`names "${column}" twice`);
    keys.push({ column, descending });
  }
  for (const column of primaryKeyNames(table)) if (!keys.some((k) => k.column === column)) keys.push({ column, descending: false });
  return keys;
}

function badOrder(what: string): SvcError {
  return new SvcError('INVALID_QUERY', `order_by ${what}: give column names separated by commas, - before a name for descending`, {
    field: 'order_by',
    reason: 'invalid_order_by',
  });
}

/** The canonical text of an order (what a cursor is checked against). */
export function orderText(keys: readonly OrderKey[]): string {
  return keys.map((k) => `${k.descending ? '-' : ''}${k.column}`).join(',');
}

/** ORDER BY text: PostgreSQL's default null placement (last ascending, first descending), spelled out. */
export function orderBySql(keys: readonly OrderKey[], reverse: boolean): string {
  return keys.map((k) => `${quoteIdent(k.column)} ${k.descending !== reverse ? 'DESC NULLS FIRST' : 'ASC NULLS LAST'}`).join(', ');
}

export function encodeCursor(position: CursorPosition): string {
  const body = { v: CURSOR_VERSION, o: position.order, d: position.direction, k: position.values };
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
}

function invalidCursor(why: string): SvcError {
  return new SvcError('INVALID_QUERY', `cursor is not valid (${why}); use a next_cursor or prev_cursor as returned`, {
    field: 'cursor',
    reason: 'invalid_cursor',
  });
}

export function decodeCursor(text: string): CursorPosition {
  let body: { v?: unknown; o?: unknown; d?: unknown; k?: unknown };
  try {
    body = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as typeof body;
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    throw invalidCursor('not a cursor');
  }
  if (body === null || typeof body !== 'object' || body.v !== CURSOR_VERSION) throw invalidCursor('not a cursor of this version');
  if (typeof body.o !== 'string' || (body.d !== 'next' && body.d !== 'prev') || !Array.isArray(body.k)) throw invalidCursor('malformed');
  return { order: body.o, direction: body.d, values: body.k };
}

/** The cursor must belong to this order (same order_by, same primary key). */
export function checkCursorOrder(position: CursorPosition, keys: readonly OrderKey[]): void {
  if (position.order !== orderText(keys) || position.values.length !== keys.length) {
    throw new SvcError('INVALID_QUERY', `cursor was made for order_by "${position.order}", not "${orderText(keys)}": send the same order_by (or none)`, {
      field: 'cursor',
      reason: 'cursor_order_mismatch',
    });
  }
}

/**
 * WHERE text selecting the rows strictly after `values` in the order (`reverse`: strictly before).
 * Non-null values become parameters appended to `params`; NULLs sort last ascending, first descending.
 */
export function afterSql(keys: readonly OrderKey[], values: readonly unknown[], reverse: boolean, params: unknown[]): string {
  const refs = values.map((v) => (v === null ? null : `$${params.push(v)}`));
  const equal = (i: number): string => (refs[i] === null ? `${quoteIdent(keys[i]!.column)} IS NULL` : `${quoteIdent(keys[i]!.column)} = ${refs[i]}`);
  const disjuncts: string[] = [];
  for (let i = 0; i < keys.length; i++) {
    const col = quoteIdent(keys[i]!.column);
    const descending = keys[i]!.descending !== reverse;
    let after: string | null;
    if (refs[i] === null) after = descending ? `${col} IS NOT NULL` : null;
    else after = descending ? `${col} < ${refs[i]}` : `(${col} > ${refs[i]} OR ${col} IS NULL)`;
    if (after === null) continue;
    disjuncts.push([...keys.slice(0, i).map((_k, j) => equal(j)), after].join(' AND '));
  }
  return disjuncts.length === 0 ? 'FALSE' : disjuncts.map((d) => `(${d})`).join(' OR ');
}
