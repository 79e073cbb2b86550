import type { TableDef } from '../../core/catalog.js';
import type { TxnOp } from '../../core/log-records.js';
import { invalid } from '../bind/index.js';
import type { CreateTableStatement, QueryExpr } from '../parse/index.js';
import { emptyResult, type QueryResult } from '../result.js';
import { alreadyExists, catalogRecord, IdAllocator, namesInSchema, nowMicros, tableRef } from './common.js';
import { submitDdl, type DdlDeps } from './deps.js';
import { queryColumns, rowOps } from './matview.js';

/**
 * CREATE TABLE t [(cols)] AS query [WITH [NO] DATA]: ONE record holding the new table (columns typed
 * and named by the query, nullable, no keys or defaults, as PostgreSQL makes them) and the query's
 * rows as inserts under hidden row ids, so the table and its rows appear together or not at all.
 */
export async function createTableAs(ast: CreateTableStatement, query: QueryExpr, deps: DdlDeps): Promise<QueryResult> {
  const { schema, name } = tableRef(ast.table);
  if (ast.temporary) throw invalid('temporary tables are not supported', { reason: 'unsupported' });
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
      kind: 'table',
      columns: queryColumns(ctx, query, ast.asColumns, name),
      primaryKey: [],
      indexes: [],
      constraints: [],
      viewSql: null,
      createdAtMicros: now,
      updatedAtMicros: now,
    };
    const ops: TxnOp[] = [{ kind: 'put_table', table: def }];
    if (ast.withData) ops.push(...(await rowOps(deps, view, ctx, def, query)));
    inserted = ast.withData ? ops.length - 1 : null;
    return { record: catalogRecord(tenant, ops), result: null };
  });
  // PostgreSQL's command tags: SELECT n when the query ran, CREATE TABLE AS for WITH NO DATA.
  return inserted === null ? emptyResult('CREATE TABLE AS') : emptyResult('SELECT', inserted);
}
