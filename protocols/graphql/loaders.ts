import { SvcError } from '../../core/errors.js';
import { quoteIdent } from './names.js';
import type { ColumnModel, RelationModel, TableModel } from './model.js';
import { compileOrderBy, type OrderByValue } from './order-by.js';
import type { RequestScope } from './context.js';
import { SqlParams } from './sql-params.js';
import { selectList } from './selection.js';
import { compileWhere, type BoolExp } from './where.js';

type Row = Record<string, unknown>;

/** Arguments of an array relation (and of a list field): where, order_by, limit, offset. */
export interface ListArgs {
  readonly where?: BoolExp | null;
  readonly order_by?: OrderByValue;
  readonly limit?: number | null;
  readonly offset?: number | null;
}

/** Rows of `target` whose `to` columns equal one of the keys: one statement for a whole level. */
interface Batch {
  readonly keys: Map<string, readonly unknown[]>;
  readonly waiters: Map<string, { resolve: (rows: Row[]) => void; reject: (e: unknown) => void }[]>;
}

/** A join key as text; components as strings, so 5 and "5" (a federation representation, a big BIGINT) meet. */
const keyText = (values: readonly unknown[]): string =>
  JSON.stringify(values.map((v) => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v))));

/** `t0."a" IN ($1, …)` for one join column; `(t0."a" = $1 AND t0."b" = $2) OR …` for several. */
function keyCondition(to: readonly ColumnModel[], alias: string, keys: readonly (readonly unknown[])[], params: SqlParams): string {
  if (to.length === 1) return `${alias}.${to[0]!.sql} IN (${keys.map((k) => params.add(k[0])).join(', ')})`;
  return `(${keys.map((k) => `(${to.map((c, i) => `${alias}.${c.sql} = ${params.add(k[i])}`).join(' AND ')})`).join(' OR ')})`;
}

/**
 * The statement of one batch. Without limit/offset: every matching row. With them, each parent's
 * own page: row_number() OVER (PARTITION BY the join columns ORDER BY …) filtered to the page.
 */
function batchSql(
  target: TableModel,
  to: readonly ColumnModel[],
  columns: readonly ColumnModel[],
  keys: readonly (readonly unknown[])[],
  args: ListArgs,
): { sql: string; params: unknown[] } {
  const params = new SqlParams();
  const alias = params.alias();
  const where = [keyCondition(to, alias, keys, params), compileWhere(target, alias, args.where, params)].join(' AND ');
  const order = compileOrderBy(target, alias, args.order_by, params);
  const from = `FROM ${target.sql} AS ${alias} WHERE ${where}`;
  if (args.limit == null && args.offset == null) {
    return { sql: `SELECT ${selectList(columns, alias)} ${from}${order.length ? ` ORDER BY ${order.join(', ')}` : ''}`, params: params.values };
  }
  const pageOrder = order.length ? order : target.primaryKey.map((c) => `${alias}.${c.sql} ASC`);
  const partition = to.map((c) => `${alias}.${c.sql}`).join(', ');
  const rn = quoteIdent('__rn');
  const window = `row_number() OVER (PARTITION BY ${partition}${pageOrder.length ? ` ORDER BY ${pageOrder.join(', ')}` : ''})`;
  const first = params.add(args.offset ?? 0);
  const bounds = args.limit == null ? `s.${rn} > ${first}` : `s.${rn} > ${first} AND s.${rn} <= ${params.add((args.offset ?? 0) + args.limit)}`;
  const sql = `SELECT s.* FROM (SELECT ${selectList(columns, alias)}, ${window} AS ${rn} ${from}) AS s WHERE ${bounds} ORDER BY s.${rn}`;
  return { sql, params: params.values };
}

type Statement = (keys: readonly (readonly unknown[])[]) => { sql: string; params: unknown[] };

async function flush(scope: RequestScope, id: string, batch: Batch, to: readonly ColumnModel[], statement: Statement): Promise<void> {
  scope.batches.delete(id);
  try {
    const { sql, params } = statement([...batch.keys.values()]);
    const result = await scope.run(sql, params);
    const groups = new Map<string, Row[]>();
    for (const row of result.rows) {
      const key = keyText(to.map((c) => row[c.field]));
      const group = groups.get(key);
      if (group) group.push(row);
      else groups.set(key, [row]);
    }
    for (const [key, waiters] of batch.waiters) for (const w of waiters) w.resolve(groups.get(key) ?? []);
  } catch (error) {
    for (const waiters of batch.waiters.values()) for (const w of waiters) w.reject(error);
  }
}

/**
 * Joins one parent key to the batch `id` of this request: the batch runs its one statement
 * after the current level of the query has asked for all its keys (setImmediate), and each
 * parent gets the rows whose `to` columns equal its key.
 */
function batched(scope: RequestScope, id: string, to: readonly ColumnModel[], key: readonly unknown[], statement: Statement): Promise<Row[]> {
  let batch = scope.batches.get(id) as Batch | undefined;
  if (!batch) {
    const created: Batch = { keys: new Map(), waiters: new Map() };
    batch = created;
    scope.batches.set(id, created);
    setImmediate(() => void flush(scope, id, created, to, statement));
  }
  const text = keyText(key);
  batch.keys.set(text, key);
  const current = batch;
  return new Promise((resolve, reject) => {
    const list = current.waiters.get(text);
    if (list) list.push({ resolve, reject });
    else current.waiters.set(text, [{ resolve, reject }]);
  });
}

/** The rows of `target` joined to one parent key, batched with every load of the same relation, arguments and columns. */
export function loadRows(
  scope: RequestScope,
  request: { name: string; target: TableModel; to: readonly ColumnModel[]; columns: readonly ColumnModel[]; args: ListArgs; key: readonly unknown[] },
): Promise<Row[]> {
  const { target, to, columns, args } = request;
  // The window below would take a negative bound as "no rows": refuse it as a top-level LIMIT/OFFSET is.
  for (const [what, n] of [
    ['LIMIT', args.limit],
    ['OFFSET', args.offset],
  ] as const) {
    if (n != null && n < 0) return Promise.reject(new SvcError('INVALID_QUERY', `${what} must not be negative`, {}));
  }
  const id = `rows|${request.name}|${JSON.stringify(args)}|${columns.map((c) => c.field).join(',')}`;
  // The join columns are always selected, so rows can be grouped back to their parents.
  const withKeys = target.columns.filter((c) => columns.includes(c) || to.includes(c));
  return batched(scope, id, to, request.key, (keys) => batchSql(target, to, withKeys, keys, args));
}

/**
 * Aggregates of `target`'s rows per parent key (an array relation's `_aggregate`): one
 * `GROUP BY` statement for the whole level. `terms` read a subquery `"s"` keyed by field names.
 */
export function loadAggregates(
  scope: RequestScope,
  request: {
    name: string;
    target: TableModel;
    to: readonly ColumnModel[];
    where: BoolExp | null | undefined;
    terms: readonly { sql: string; columns: readonly ColumnModel[] }[];
    key: readonly unknown[];
  },
): Promise<Row[]> {
  const { target, to, terms, where } = request;
  const id = `aggregate|${request.name}|${JSON.stringify(where ?? null)}|${terms.map((t) => t.sql).join(',')}`;
  const used = target.columns.filter((c) => to.includes(c) || terms.some((t) => t.columns.includes(c)));
  return batched(scope, id, to, request.key, (keys) => {
    const params = new SqlParams();
    const alias = params.alias();
    const inner = `SELECT ${selectList(used, alias)} FROM ${target.sql} AS ${alias} WHERE ${keyCondition(to, alias, keys, params)} AND ${compileWhere(target, alias, where, params)}`;
    const groupBy = to.map((c) => `"s".${quoteIdent(c.field)}`);
    const list = [...groupBy.map((g, i) => `${g} AS ${quoteIdent(to[i]!.field)}`), ...terms.map((t, i) => `${t.sql} AS ${quoteIdent(`__a${i}`)}`)];
    return { sql: `SELECT ${list.join(', ')} FROM (${inner}) AS "s" GROUP BY ${groupBy.join(', ')}`, params: params.values };
  });
}

/** The parent key of a relation on a row; null when a join column is NULL (no related rows). */
export function relationKey(relation: RelationModel, row: Row): unknown[] | null {
  const key = relation.from.map((c) => row[c.field]);
  return key.some((v) => v === null || v === undefined) ? null : key;
}
