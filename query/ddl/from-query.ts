import type { ColumnDef, TableDef } from '../../core/catalog.js';
import { encodeKey } from '../../core/key-encoding.js';
import type { TxnOp } from '../../core/log-records.js';
import { encodeRow } from '../../core/row-codec.js';
import type { SqlValue } from '../../core/values.js';
import type { WriteView } from '../../projections/index.js';
import { coerce, invalid, QueryBinder, Scope, type BindContext } from '../bind/index.js';
import { compile, WriteViewSource } from '../exec/index.js';
import { limitExceededRows } from '../dml/limits.js';
import { optimize } from '../optimize/index.js';
import type { QualifiedName, QueryExpr } from '../parse/index.js';
import { emptyResult, type QueryResult } from '../result.js';
import { execContext, pullRows } from '../run-query.js';
import { storableType } from './columns.js';
import { alreadyExists, catalogRecord, IdAllocator, namesInSchema, nowMicros, tableRef } from './common.js';
import { submitDdl, type DdlDeps } from './deps.js';

const ROW_ID_TYPES = [{ name: 'int8' }] as const;

/** A relation made from a query: CREATE TABLE ... AS or CREATE MATERIALIZED VIEW. */
export interface FromQuery {
  readonly name: QualifiedName;
  readonly ifNotExists: boolean;
  readonly query: QueryExpr;
  /** The column names written in the statement (the query's own names for the rest), or null. */
  readonly columns: readonly string[] | null;
  /** false for WITH NO DATA: the relation without the rows. */
  readonly withData: boolean;
  readonly kind: TableDef['kind'];
  readonly viewSql: string | null;
  /** The command tag when no query ran (WITH NO DATA, or IF NOT EXISTS found the name taken). */
  readonly tag: string;
}

/**
 * ONE record holding the new relation (columns typed and named by the query, nullable, no keys or
 * defaults) and the query's rows as inserts, so restart and replay rebuild it from the log without
 * running the query again. PostgreSQL's command tag: SELECT n when the query ran, else `tag`.
 */
export async function createFromQuery(spec: FromQuery, deps: DdlDeps): Promise<QueryResult> {
  const { schema, name } = tableRef(spec.name);
  const tenant = deps.env.tenant;
  let inserted: number | null = null;
  await submitDdl(deps, async (view) => {
    if (namesInSchema(view.catalog, tenant, schema).has(name)) {
      if (spec.ifNotExists) return null;
      throw alreadyExists('relation', name);
    }
    const ctx = deps.bindContext(view.catalog);
    const now = nowMicros();
    const def: TableDef = {
      id: new IdAllocator(view.catalog).nextTable(),
      tenant,
      schema,
      name,
      kind: spec.kind,
      columns: queryColumns(ctx, spec.query, spec.columns, name),
      primaryKey: [],
      indexes: [],
      constraints: [],
      viewSql: spec.viewSql,
      createdAtMicros: now,
      updatedAtMicros: now,
    };
    const ops: TxnOp[] = [{ kind: 'put_table', table: def }];
    if (spec.withData) ops.push(...(await rowOps(deps, view, ctx, def, spec.query)));
    inserted = spec.withData ? ops.length - 1 : null;
    return { record: catalogRecord(tenant, ops), result: null };
  });
  return inserted === null ? emptyResult(spec.tag) : emptyResult('SELECT', inserted);
}

/**
 * The columns of a relation made from a query (CREATE MATERIALIZED VIEW, CREATE TABLE AS): the
 * query's output types (an unknown literal becomes text, as in PostgreSQL), named by `explicit`
 * first, then by the query's output names; a name given twice is PostgreSQL's error, not renamed.
 */
function queryColumns(ctx: BindContext, query: QueryExpr, explicit: readonly string[] | null, relation: string): ColumnDef[] {
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
