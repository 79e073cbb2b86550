import { SvcError } from '../../../core/errors.js';
import type { TableEntry } from '../../../projections/index.js';
import type { ExecuteOptions, SqlEngine } from '../../../query/index.js';
import { checkCursorOrder, decodeCursor, encodeCursor, orderKeys, orderText, type CursorPosition, type OrderKey } from './cursor.js';
import { countSql, filterSql, keyAliases, pageSql, selectColumns } from './rows-sql.js';
import { ROWS_LIMIT_MAX } from './rows-schemas.js';
import type { TableRef } from '../tables/table-ref.js';

export interface RowsQuery {
  filter?: string;
  select?: string;
  order_by?: string;
  limit: number;
  offset: number;
  cursor?: string;
}

export interface Pagination {
  readonly limit: number;
  readonly offset: number;
  readonly total_count: number;
  readonly has_more: boolean;
  readonly next_cursor: string | null;
  readonly prev_cursor: string | null;
}

interface PagePlan {
  readonly keys: OrderKey[];
  /** Cursors need the primary key as the last tie-breaker. */
  readonly pageable: boolean;
  readonly cursor: CursorPosition | null;
}

/** The order of the page: order_by (or the cursor's own, when order_by is absent) then the primary key. */
function planPage(entry: TableEntry, query: RowsQuery): PagePlan {
  const table = entry.def;
  const pageable = table.primaryKey.length > 0;
  const cursor = query.cursor === undefined ? null : decodeCursor(query.cursor);
  if (cursor && !pageable) {
    throw new SvcError('INVALID_QUERY', `"${table.name}" has no primary key, so its rows cannot be paged by cursor: use offset`, {
      field: 'cursor',
      reason: 'no_primary_key',
    });
  }
  if (cursor && query.offset > 0)
    throw new SvcError('INVALID_QUERY', 'cursor and offset cannot be combined: a cursor already says where the page starts', { field: 'offset' });
  const keys = orderKeys(table, query.order_by ?? cursor?.order);
  if (cursor) checkCursorOrder(cursor, keys);
  return { keys, pageable, cursor };
}

function checkLimit(limit: number): void {
  if (limit > ROWS_LIMIT_MAX) {
    throw new SvcError('LIMIT_EXCEEDED', `limit is at most ${ROWS_LIMIT_MAX} rows per page; page with next_cursor for more`, {
      field: 'limit',
      limit_max: ROWS_LIMIT_MAX,
    });
  }
}

/**
 * GET /tables/{t}/rows: one page (limit rows from offset, or after/before a cursor), its
 * pagination and the exact count of rows matching the filter (a second read, run alongside).
 */
export async function readPage(
  engine: SqlEngine,
  entry: TableEntry,
  ref: TableRef,
  query: RowsQuery,
  options: ExecuteOptions & { textBytesMax: number },
): Promise<{ data: Record<string, unknown>[]; pagination: Pagination }> {
  checkLimit(query.limit);
  const table = entry.def;
  const columns = selectColumns(table, query.select);
  const filter = query.filter === undefined ? null : filterSql(query.filter, options.textBytesMax);
  const plan = planPage(entry, query);
  const aliases = plan.pageable ? keyAliases(table, plan.keys.length) : [];
  const fetch = query.limit + 1;
  const statement = pageSql({ ref, columns, filter, keys: plan.keys, aliases, cursor: plan.cursor, fetch, offset: query.offset });
  const [result, total] = await Promise.all([
    engine.execute(statement.sql, { ...options, params: statement.params, maxRows: fetch }),
    // Without a filter the table's row count is exact and kept current by the projection.
    filter === null && table.kind === 'table'
      ? Promise.resolve(entry.stats.rowCount)
      : engine.execute(countSql(ref, filter), { ...options, maxRows: 1 }).then((r) => Number(r.rows[0]!.n)),
  ]);
  return assemble(result.rows, { query, plan, aliases, total });
}

function assemble(
  fetched: Record<string, unknown>[],
  context: { query: RowsQuery; plan: PagePlan; aliases: readonly string[]; total: number },
): { data: Record<string, unknown>[]; pagination: Pagination } {
  const { query, plan, aliases } = context;
  const backwards = plan.cursor?.direction === 'prev';
  const more = fetched.length > query.limit;
  const rows = fetched.slice(0, query.limit);
  if (backwards) rows.reverse();
  const keyValues = rows.map((row) => {
    const values = aliases.map((a) => row[a] ?? null);
    for (const a of aliases) delete row[a];
    return values;
  });
  const order = orderText(plan.keys);
  const cursorAt = (i: number, direction: 'next' | 'prev'): string => encodeCursor({ order, direction, values: keyValues[i]! });
  const pageable = plan.pageable && rows.length > 0;
  // Backwards, the rows after the page are the ones the client paged back from.
  const next = pageable && (backwards || more) ? cursorAt(rows.length - 1, 'next') : null;
  const prev = pageable && (backwards ? more : plan.cursor !== null || query.offset > 0) ? cursorAt(0, 'prev') : null;
  return {
    data: rows,
    pagination: {
      limit: query.limit,
      offset: query.offset,
      total_count: context.total,
      has_more: plan.pageable ? next !== null : more,
      next_cursor: next,
      prev_cursor: prev,
    },
  };
}
