import type { TableModel } from './model.js';

/** The values of the `order_by` enum and their SQL (Hasura's; PostgreSQL puts NULLs last ascending). */
export const ORDER_BY_SQL: Readonly<Record<string, string>> = Object.freeze({
  asc: 'ASC',
  asc_nulls_first: 'ASC NULLS FIRST',
  asc_nulls_last: 'ASC NULLS LAST',
  desc: 'DESC',
  desc_nulls_first: 'DESC NULLS FIRST',
  desc_nulls_last: 'DESC NULLS LAST',
});

export type OrderBy = Readonly<Record<string, string | null | undefined>>;

/**
 * ORDER BY terms for `<table>_order_by` values (a list, or one object: keys in their order).
 * Object relations are not orderable here (columns of this table only). A given order ends with the
 * primary key, so limit/offset pages are stable (without one, rows come in primary-key order).
 */
export function compileOrderBy(table: TableModel, alias: string, orderBy: OrderBy | readonly OrderBy[] | null | undefined): string[] {
  const items: readonly OrderBy[] = orderBy === null || orderBy === undefined ? [] : Array.isArray(orderBy) ? (orderBy as readonly OrderBy[]) : [orderBy as OrderBy];
  const terms: string[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    for (const [field, direction] of Object.entries(item) as [string, string | null | undefined][]) {
      const column = table.columnByField.get(field);
      if (!column || direction === null || direction === undefined) continue;
      terms.push(`${alias}.${column.sql} ${ORDER_BY_SQL[direction] ?? 'ASC'}`);
      seen.add(field);
    }
  }
  if (terms.length === 0) return terms;
  for (const column of table.primaryKey) if (!seen.has(column.field)) terms.push(`${alias}.${column.sql} ASC`);
  return terms;
}
