import { invalid } from '../bind/index.js';
import type { CreateTableStatement, QueryExpr } from '../parse/index.js';
import type { QueryResult } from '../result.js';
import type { DdlDeps } from './deps.js';
import { createFromQuery } from './from-query.js';

/**
 * CREATE TABLE t [(cols)] AS query [WITH [NO] DATA]: the table (columns typed and named by the
 * query, nullable, no keys or defaults, as PostgreSQL makes them) and the query's rows in ONE
 * record, so the table appears with its rows or not at all.
 */
export function createTableAs(ast: CreateTableStatement, query: QueryExpr, deps: DdlDeps): Promise<QueryResult> {
  if (ast.temporary) throw invalid('temporary tables are not supported', { reason: 'unsupported' });
  return createFromQuery(
    {
      name: ast.table,
      ifNotExists: ast.ifNotExists,
      query,
      columns: ast.asColumns,
      withData: ast.withData,
      kind: 'table',
      viewSql: null,
      tag: 'CREATE TABLE AS',
    },
    deps,
  );
}
