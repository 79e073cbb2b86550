import type { ColumnDef, TableDef } from '../../core/catalog.js';
import type { TxnOp } from '../../core/log-records.js';
import { invalid } from '../bind/index.js';
import type { CreateTableStatement } from '../parse/index.js';
import { emptyResult, type QueryResult } from '../result.js';
import { alreadyExists, IdAllocator, namesInSchema, nowMicros, tableRef, catalogRecord } from './common.js';
import { columnFromAst } from './columns.js';
import { submitDdl, type DdlDeps } from './deps.js';
import { createTableAs } from './create-table-as.js';
import { ConstraintBuilder } from './table-builder.js';

/** CREATE TABLE [IF NOT EXISTS]: one put_table record (plus sequence resets for SERIAL columns). */
export async function createTable(ast: CreateTableStatement, deps: DdlDeps): Promise<QueryResult> {
  const { schema, name } = tableRef(ast.table);
  if (ast.asQuery) return createTableAs(ast, ast.asQuery, deps);
  if (ast.temporary) throw invalid('temporary tables are not supported', { reason: 'unsupported' });
  const tenant = deps.env.tenant;
  await submitDdl(deps, async (view) => {
    if (view.catalog.tableByName(tenant, schema, name)) {
      if (ast.ifNotExists) return null;
      throw alreadyExists('relation', name);
    }
    const ctx = deps.bindContext(view.catalog);
    const ids = new IdAllocator(view.catalog);
    const taken = namesInSchema(view.catalog, tenant, schema);
    if (taken.has(name)) throw alreadyExists('relation', name);
    taken.add(name);
    const constraints = new ConstraintBuilder(ctx, view.catalog, taken);
    const shell = { tenant, schema, name };
    const columns: ColumnDef[] = [];
    for (const item of ast.columns) {
      const column = columnFromAst(ctx, item, shell, columns.length + 1, constraints);
      if (columns.some((c) => c.name === column.name)) throw invalid(`column "${column.name}" specified more than once`, { column: column.name });
      columns.push(column);
    }
    for (const item of ast.constraints) constraints.addTableConstraint(item);
    const now = nowMicros();
    const base: TableDef = {
      id: ids.nextTable(),
      tenant,
      schema,
      name,
      kind: 'table',
      columns,
      primaryKey: [],
      indexes: [],
      constraints: [],
      viewSql: null,
      createdAtMicros: now,
      updatedAtMicros: now,
    };
    const built = constraints.build(base, ids);
    const pkIds = new Set(built.primaryKey);
    const def: TableDef = {
      ...base,
      columns: columns.map((c) => (pkIds.has(c.id) ? { ...c, nullable: false } : c)),
      primaryKey: built.primaryKey,
      indexes: built.indexes,
      constraints: built.constraints,
    };
    const ops: TxnOp[] = [{ kind: 'put_table', table: def }];
    for (const c of def.columns) if (c.sequence) ops.push({ kind: 'sequence', name: c.sequence, lastValue: 0n });
    return { record: catalogRecord(tenant, ops), result: null };
  });
  return emptyResult('CREATE TABLE');
}
