import { isPopulated, matviewQuery, UNPOPULATED_MARK, type ColumnDef, type TableDef } from '../../core/catalog.js';
import { SvcError, tableNotFound } from '../../core/errors.js';
import { encodeKey } from '../../core/key-encoding.js';
import type { TxnOp } from '../../core/log-records.js';
import { encodeRow } from '../../core/row-codec.js';
import type { SqlValue } from '../../core/values.js';
import type { WriteView } from '../../projections/index.js';
import { coerce, invalid, QueryBinder, relationLabel, Scope, type BindContext } from '../bind/index.js';
import { compile, WriteViewSource } from '../exec/index.js';
import { limitExceededRows } from '../dml/limits.js';
import { optimize } from '../optimize/index.js';
import { parseSql, type CreateViewStatement, type QueryExpr, type RefreshMatviewStatement } from '../parse/index.js';
import { emptyResult, type QueryResult } from '../result.js';
import { execContext, pullRows } from '../run-query.js';
import { storableType } from './columns.js';
import { alreadyExists, catalogRecord, IdAllocator, namesInSchema, nowMicros, tableRef } from './common.js';
import { submitDdl, type DdlDeps } from './deps.js';

const ROW_ID_TYPES = [{ name: 'int8' }] as const;

/**
 * CREATE MATERIALIZED VIEW [IF NOT EXISTS] v [(cols)] AS query [WITH [NO] DATA]: ONE record holding
 * the relation (kind materialized_view, its query text in viewSql) and the query's rows as inserts,
 * so restart and replay rebuild it from the log without running the query again.
 */
export async function createMatview(ast: CreateViewStatement, deps: DdlDeps): Promise<QueryResult> {
  const { schema, name } = tableRef(ast.view);
  const tenant = deps.env.tenant;
  let inserted: number | null = null;
  await submitDdl(deps, async (view) => {
    if (namesInSchema(view.catalog, tenant, schema).has(name)) {
      if (ast.ifNotExists) return null;
      throw alreadyExists('relation', name);
    }
    const ctx = deps.bindContext(view.catalog);
    const now = nowMicros();
    const def: TableDef = {
      id: new IdAllocator(view.catalog).nextTable(),
      tenant,
      schema,
      name,
      kind: 'materialized_view',
      columns: queryColumns(ctx, ast.query, ast.columns, name),
      primaryKey: [],
      indexes: [],
      constraints: [],
      viewSql: (ast.withData ? '' : UNPOPULATED_MARK) + ast.queryText,
      createdAtMicros: now,
      updatedAtMicros: now,
    };
    const ops: TxnOp[] = [{ kind: 'put_table', table: def }];
    if (ast.withData) ops.push(...(await rowOps(deps, view, ctx, def, ast.query)));
    inserted = ast.withData ? ops.length - 1 : null;
    return { record: catalogRecord(tenant, ops), result: null };
  });
  // PostgreSQL's command tags: SELECT n when rows were stored, else CREATE MATERIALIZED VIEW.
  return inserted === null ? emptyResult('CREATE MATERIALIZED VIEW') : emptyResult('SELECT', inserted);
}

/**
 * REFRESH MATERIALIZED VIEW v [WITH [NO] DATA]: ONE record that truncates v and inserts the
 * query's current rows (or only marks v unpopulated). CONCURRENTLY is refused by name: it needs
 * a unique index and a diff, while the one-record swap already never shows a half-refreshed view.
 */
export async function refreshMatview(ast: RefreshMatviewStatement, deps: DdlDeps): Promise<QueryResult> {
  if (ast.concurrently)
    throw invalid('REFRESH MATERIALIZED VIEW CONCURRENTLY is not supported', { statement: 'REFRESH MATERIALIZED VIEW CONCURRENTLY', reason: 'unsupported' });
  const { schema, name } = tableRef(ast.view);
  const tenant = deps.env.tenant;
  await submitDdl(deps, async (view) => {
    const entry = view.catalog.tableByName(tenant, schema, name);
    if (!entry) throw tableNotFound(relationLabel(ast.view.schema, name));
    if (entry.def.kind !== 'materialized_view') throw wrongKind(name, 'a materialized view');
    const query = matviewQuery(entry.def);
    const def: TableDef = { ...entry.def, viewSql: (ast.withData ? '' : UNPOPULATED_MARK) + query, updatedAtMicros: nowMicros() };
    const ops: TxnOp[] = [{ kind: 'truncate', tableIds: [def.id] }];
    if (isPopulated(def) !== isPopulated(entry.def)) ops.unshift({ kind: 'put_table', table: def });
    if (ast.withData) {
      const body = parseSql(query)[0]?.body;
      if (body?.kind !== 'query') throw invalid(`materialized view "${name}" has no query to refresh from`, { view: name });
      ops.push(...(await rowOps(deps, view, deps.bindContext(view.catalog), def, body.query)));
    }
    return { record: catalogRecord(tenant, ops), result: null };
  });
  return emptyResult('REFRESH MATERIALIZED VIEW');
}

/** PostgreSQL's 42809: a statement named one relation kind and found another. */
export function wrongKind(name: string, wanted: string): SvcError {
  return new SvcError('INVALID_QUERY', `"${name}" is not ${wanted}`, { name, sqlstate: '42809' });
}

/**
 * The columns of a relation made from a query (CREATE MATERIALIZED VIEW, CREATE TABLE AS): the
 * query's output types (an unknown literal becomes text, as in PostgreSQL), named by `explicit`
 * first, then by the query's output names; a name given twice is PostgreSQL's error, not renamed.
 */
export function queryColumns(ctx: BindContext, query: QueryExpr, explicit: readonly string[] | null, relation: string): ColumnDef[] {
  const bound = new QueryBinder(ctx).bindQuery(query, new Scope(null));
  const given = explicit ?? [];
  if (given.length > bound.names.length) throw invalid('too many column names were specified', { relation });
  const names = bound.names.map((n, i) => given[i] ?? n);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) throw invalid(`column "${twice}" specified more than once`, { column: twice });
  return bound.plan.columns.map((c, i) => column(i, names[i]!, c.type.name === 'unknown' ? { name: 'text' } : c.type));
}

function column(i: number, name: string, type: Parameters<typeof storableType>[0]): ColumnDef {
  return { id: i + 1, name, type: storableType(type, name), nullable: true, defaultExpr: null, missingValue: null, sequence: null };
}

/** The query's rows as inserts into `def` under hidden row ids 1, 2, ... (bounded like one DML statement). */
export async function rowOps(deps: DdlDeps, view: WriteView, ctx: BindContext, def: TableDef, query: QueryExpr): Promise<TxnOp[]> {
  const bound = new QueryBinder(ctx).bindQuery(query, new Scope(null));
  const columns = bound.plan.columns;
  if (columns.length !== def.columns.length) throw invalid(`materialized view "${def.name}" no longer matches its query's columns`, { view: def.name });
  const casts = columns.map((c, i) => coerce(ctx, { kind: 'column', type: c.type, index: i, name: c.name }, def.columns[i]!.type, 'assignment'));
  const plan = optimize(bound.plan, { types: ctx.types, rowCount: (id) => view.catalog.table(id)?.stats.rowCount ?? 0 });
  const exec = execContext({
    types: deps.types,
    source: new WriteViewSource(view),
    params: [],
    deadlineMs: deps.env.deadlineMs,
    signal: deps.env.signal,
    stats: null,
    materializedRowsMax: deps.env.limits.materializedRowsMax,
  });
  const evals = casts.map((c) => compile(c, exec).eval);
  const rowsMax = deps.env.limits.dmlRowsMax;
  const ops: TxnOp[] = [];
  await pullRows(plan, exec, (row) => {
    if (ops.length >= rowsMax) throw limitExceededRows(rowsMax);
    const key = encodeKey(ROW_ID_TYPES, [BigInt(ops.length + 1)]);
    ops.push({ kind: 'row', tableId: def.id, op: 'insert', key, before: null, after: encodeRow(def.columns, evals.map((f) => f(row)) as SqlValue[]) });
    return true;
  });
  return ops;
}
