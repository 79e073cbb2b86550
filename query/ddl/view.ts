import type { TableDef } from '../../core/catalog.js';
import { invalid, QueryBinder, Scope, uniqueNames } from '../bind/index.js';
import type { CreateViewStatement } from '../parse/index.js';
import { emptyResult, type QueryResult } from '../result.js';
import { storableType } from './columns.js';
import { createMatview } from './matview.js';
import { alreadyExists, IdAllocator, namesInSchema, nowMicros, catalogRecord } from './common.js';
import { submitDdl, type DdlDeps } from './deps.js';

/** CREATE [OR REPLACE] VIEW v [(cols)] AS query: the query text is stored and expanded when v is read. */
export async function createView(ast: CreateViewStatement, deps: DdlDeps): Promise<QueryResult> {
  if (ast.materialized) return createMatview(ast, deps);
  if (ast.temporary) throw invalid('temporary views are not supported', { reason: 'unsupported' });
  const schema = ast.view.schema ?? 'public';
  const { name } = ast.view;
  const tenant = deps.env.tenant;
  const sql = ast.queryText;
  await submitDdl(deps, async (view) => {
    const existing = view.catalog.tableByName(tenant, schema, name);
    if (existing && !(ast.orReplace && existing.def.kind === 'view')) throw alreadyExists('relation', name);
    if (!existing && namesInSchema(view.catalog, tenant, schema).has(name)) throw alreadyExists('relation', name);
    const ctx = deps.bindContext(view.catalog);
    const bound = new QueryBinder(ctx).bindQuery(ast.query, new Scope(null));
    const explicit = ast.columns ?? [];
    const names = uniqueNames(bound.names.map((n, i) => explicit[i] ?? n));
    const now = nowMicros();
    const def: TableDef = {
      id: existing?.def.id ?? new IdAllocator(view.catalog).nextTable(),
      tenant,
      schema,
      name,
      kind: 'view',
      columns: bound.plan.columns.map((c, i) => ({
        id: i + 1,
        name: names[i]!,
        type: storableType(c.type.name === 'unknown' ? { name: 'text' } : c.type, names[i]!),
        nullable: true,
        defaultExpr: null,
        missingValue: null,
        sequence: null,
      })),
      primaryKey: [],
      indexes: [],
      constraints: [],
      viewSql: sql,
      createdAtMicros: existing?.def.createdAtMicros ?? now,
      updatedAtMicros: now,
    };
    return { record: catalogRecord(tenant, [{ kind: 'put_table', table: def }]), result: null };
  });
  return emptyResult('CREATE VIEW');
}
