import type { TableModel } from './model.js';
import type { SqlParams } from './sql-params.js';

/** The values of the `order_by` enum and their SQL (Hasura's; PostgreSQL puts NULLs last ascending). */
export const ORDER_BY_SQL: Readonly<Record<string, string>> = Object.freeze({
  asc: 'ASC',
  asc_nulls_first: 'ASC NULLS FIRST',
  asc_nulls_last: 'ASC NULLS LAST',
  desc: 'DESC',
  desc_nulls_first: 'DESC NULLS FIRST',
  desc_nulls_last: 'DESC NULLS LAST',
});

export type OrderBy = Readonly<Record<string, unknown>>;

export type OrderByValue = OrderBy | readonly OrderBy[] | null | undefined;

/**
 * Terms of one `<table>_order_by` object: columns, and object relations (the parent's column,
 * read by a scalar subquery, as Hasura orders by `{author: {name: asc}}`; nested ones nest).
 */
function termsOf(table: TableModel, alias: string, item: OrderBy, params: SqlParams, seen: Set<string>): { expression: string; direction: string }[] {
  const terms: { expression: string; direction: string }[] = [];
  for (const [field, direction] of Object.entries(item) as [string, unknown][]) {
    if (direction === null || direction === undefined) continue;
    const column = table.columnByField.get(field);
    if (column && typeof direction === 'string') {
      terms.push({ expression: `${alias}.${column.sql}`, direction: ORDER_BY_SQL[direction] ?? 'ASC' });
      seen.add(field);
      continue;
    }
    const relation = table.relationByField.get(field);
    if (relation?.kind !== 'object' || typeof direction !== 'object') continue;
    const inner = params.alias();
    const join = relation.to.map((c, i) => `${inner}.${c.sql} = ${alias}.${relation.from[i]!.sql}`).join(' AND ');
    for (const term of termsOf(relation.target, inner, direction as OrderBy, params, new Set())) {
      terms.push({ expression: `(SELECT ${term.expression} FROM ${relation.target.sql} AS ${inner} WHERE ${join})`, direction: term.direction });
    }
  }
  return terms;
}

/**
 * ORDER BY terms for `<table>_order_by` values (a list, or one object: keys in their order). A
 * given order ends with the primary key, so limit/offset pages are stable (without one, rows
 * come in primary-key order).
 */
export function compileOrderBy(table: TableModel, alias: string, orderBy: OrderByValue, params: SqlParams): string[] {
  const items: readonly OrderBy[] =
    orderBy === null || orderBy === undefined ? [] : Array.isArray(orderBy) ? (orderBy as readonly OrderBy[]) : [orderBy as OrderBy];
  const seen = new Set<string>();
  const terms = items.flatMap((item) => termsOf(table, alias, item, params, seen)).map((t) => `${t.expression} ${t.direction}`);
  if (terms.length === 0) return terms;
  for (const column of table.primaryKey) if (!seen.has(column.field)) terms.push(`${alias}.${column.sql} ASC`);
  return terms;
}
