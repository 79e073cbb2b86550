import { isPopulated, matviewQuery, UNPOPULATED_MARK, type TableDef } from '../../core/catalog.js';
import { SvcError, tableNotFound } from '../../core/errors.js';
import type { TxnOp } from '../../core/log-records.js';
import { invalid, relationLabel } from '../bind/index.js';
import { parseSql, type CreateViewStatement, type RefreshMatviewStatement } from '../parse/index.js';
import { emptyResult, type QueryResult } from '../result.js';
import { catalogRecord, nowMicros, tableRef } from './common.js';
import { submitDdl, type DdlDeps } from './deps.js';
import { createFromQuery, rowOps } from './from-query.js';

/**
 * CREATE MATERIALIZED VIEW [IF NOT EXISTS] v [(cols)] AS query [WITH [NO] DATA]: ONE record holding
 * the relation (kind materialized_view, its query text in viewSql) and the query's rows as inserts,
 * so restart and replay rebuild it from the log without running the query again.
 */
export function createMatview(ast: CreateViewStatement, deps: DdlDeps): Promise<QueryResult> {
  return createFromQuery(
    {
      name: ast.view,
      ifNotExists: ast.ifNotExists,
      query: ast.query,
      columns: ast.columns ?? null,
      withData: ast.withData,
      kind: 'materialized_view',
      viewSql: (ast.withData ? '' : UNPOPULATED_MARK) + ast.queryText,
      tag: 'CREATE MATERIALIZED VIEW',
    },
    deps,
  );
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
