import type { ColumnDef, TableDef } from '../../core/catalog.js';
import { columnNotFound, SvcError, tableNotFound } from '../../core/errors.js';
import { decodeRowInto } from '../../core/row-codec.js';
import type { SqlValue } from '../../core/values.js';
import type { WriteView } from '../../projections/index.js';
import { bindCheck, bindDefault, invalid, relationLabel, type BindContext } from '../bind/index.js';
import { compile } from '../exec/index.js';
import type { AlterTableAction, AlterTableStatement, ColumnDef as ColumnSyntax, TableConstraint } from '../parse/index.js';
import { parseExpression, renameIdentifier } from '../parse/index.js';
import { emptyResult, type QueryResult } from '../result.js';
import { execContext } from '../run-query.js';
import { WriteViewSource } from '../exec/index.js';
import type { QValue } from '../types/contract.js';
import { ForeignKeys } from '../dml/foreign-keys.js';
import { StatementWriter } from '../dml/statement-writer.js';
import { columnByName, IdAllocator, namesInSchema, nowMicros, tableRef, catalogRecord } from './common.js';
import { columnFromAst } from './columns.js';
import { assertUnique } from './create-index.js';
import { submitDdl, type DdlDeps } from './deps.js';
import { ConstraintBuilder } from './table-builder.js';

/** ALTER TABLE t ADD COLUMN | DROP COLUMN | ADD CONSTRAINT | RENAME COLUMN ..., applied in order as one put_table. */
export async function alterTable(ast: AlterTableStatement, deps: DdlDeps): Promise<QueryResult> {
  const { schema, name } = tableRef(ast.table);
  const tenant = deps.env.tenant;
  await submitDdl(deps, async (view) => {
    const entry = view.catalog.tableByName(tenant, schema, name);
    if (!entry || entry.def.kind !== 'table') {
      if (ast.ifExists) return null;
      throw tableNotFound(relationLabel(ast.table.schema, name));
    }
    const ctx = deps.bindContext(view.catalog);
    const ids = new IdAllocator(view.catalog);
    let def = entry.def;
    for (const action of ast.actions) def = await applyAction(def, action, { ctx, ids, view, deps });
    def = { ...def, updatedAtMicros: nowMicros() };
    return { record: catalogRecord(tenant, [{ kind: 'put_table', table: def }]), result: null };
  });
  return emptyResult('ALTER TABLE');
}

interface AlterEnv {
  readonly ctx: BindContext;
  readonly ids: IdAllocator;
  readonly view: WriteView;
  readonly deps: DdlDeps;
}

async function applyAction(def: TableDef, action: AlterTableAction, env: AlterEnv): Promise<TableDef> {
  switch (action.kind) {
    case 'add_column':
      return addColumn(def, action.column, action.ifNotExists, env);
    case 'drop_column':
      return dropColumn(def, action.column, action.ifExists);
    case 'add_constraint':
      return addConstraint(def, action.constraint, env);
    case 'rename_column':
      return renameColumnIn(def, action.from, action.to);
    default:
      throw invalid(`ALTER TABLE ${action.kind.replaceAll('_', ' ').toUpperCase()} is not supported`, { action: action.kind, reason: 'unsupported' });
  }
}

async function addColumn(def: TableDef, action: ColumnSyntax, ifNotExists: boolean, env: AlterEnv): Promise<TableDef> {
  const taken = namesInSchema(env.view.catalog, def.tenant, def.schema);
  const constraints = new ConstraintBuilder(env.ctx, env.view.catalog, taken);
  const column = columnFromAst(env.ctx, action, def, env.ids.nextColumn(def), constraints);
  if (def.columns.some((c) => c.name === column.name)) {
    if (ifNotExists) return def;
    throw new SvcError('CONSTRAINT_VIOLATION', `column "${column.name}" of relation "${def.name}" already exists`, {
      column: column.name,
      reason: 'already_exists',
    });
  }
  const hasRows = await tableHasRows(env.view, def);
  let missingValue: SqlValue = null;
  if (column.defaultExpr !== null && !column.sequence) {
    const expr = bindDefault(env.ctx, def, parseExpression(column.defaultExpr), column.type);
    missingValue = compile(expr, checkContext(env)).eval([]) as SqlValue;
  }
  if (column.sequence && hasRows) throw invalid('adding a SERIAL column to a table with rows is not supported');
  if (!column.nullable && missingValue === null && hasRows) {
    throw new SvcError('CONSTRAINT_VIOLATION', `column "${column.name}" of relation "${def.name}" contains null values`, {
      column: column.name,
      table: def.name,
    });
  }
  const withColumn: TableDef = { ...def, columns: [...def.columns, { ...column, missingValue }] };
  const built = constraints.build(withColumn, env.ids);
  const next: TableDef = {
    ...withColumn,
    primaryKey: built.primaryKey,
    indexes: [...def.indexes, ...built.indexes],
    constraints: [...def.constraints, ...built.constraints],
  };
  if (built.primaryKey.join() !== def.primaryKey.join()) throw invalid('adding a PRIMARY KEY to an existing table is not supported');
  await validateNew(def, next, env);
  return next;
}

function dropColumn(def: TableDef, name: string, ifExists: boolean): TableDef {
  const column = def.columns.find((c) => c.name === name);
  if (!column) {
    if (ifExists) return def;
    throw columnNotFound(name, { relation: def.name });
  }
  if (def.primaryKey.includes(column.id)) throw invalid(`cannot drop column ${name} of table ${def.name}: it is part of the primary key`);
  if (def.columns.length === 1) throw invalid(`cannot drop the only column of table ${def.name}`);
  return {
    ...def,
    columns: def.columns.filter((c) => c.id !== column.id),
    indexes: def.indexes.filter((i) => !i.columnIds.includes(column.id)),
    constraints: def.constraints.filter((c) => !c.columnIds.includes(column.id)),
  };
}

async function addConstraint(def: TableDef, node: TableConstraint, env: AlterEnv): Promise<TableDef> {
  const taken = namesInSchema(env.view.catalog, def.tenant, def.schema);
  const constraints = new ConstraintBuilder(env.ctx, env.view.catalog, taken);
  constraints.addTableConstraint(node);
  if (constraints.primaryKey) throw invalid('adding a PRIMARY KEY to an existing table is not supported');
  const built = constraints.build(def, env.ids);
  const next: TableDef = { ...def, indexes: [...def.indexes, ...built.indexes], constraints: [...def.constraints, ...built.constraints] };
  await validateNew(def, next, env);
  return next;
}

/** Existing rows must satisfy new CHECK, UNIQUE and FOREIGN KEY constraints. */
async function validateNew(before: TableDef, after: TableDef, env: AlterEnv): Promise<void> {
  const added = after.constraints.filter((c) => !before.constraints.some((b) => b.name === c.name));
  if (added.length === 0 || !(await tableHasRows(env.view, before))) return;
  for (const index of after.indexes.filter((i) => !before.indexes.some((b) => b.id === i.id) && i.unique)) await assertUnique(env.view, after, index, env.deps);
  const checks = added
    .filter((c) => c.kind === 'check')
    .map((c) => ({ name: c.name, eval: compile(bindCheck(env.ctx, after, parseExpression(c.definition)), checkContext(env)).eval }));
  const fks = added.filter((c) => c.kind === 'foreign_key');
  const writer = new StatementWriter(env.view, env.deps.types, () => [], env.deps.env.limits.dmlRowsMax);
  const fkChecker = new ForeignKeys(writer);
  const onlyNew: TableDef = { ...after, constraints: fks };
  const ids = after.columns.map((c) => c.id);
  const missing = after.columns.map((c) => c.missingValue);
  for await (const batch of env.view.rows(before.id)) {
    for (const [, image] of batch) {
      const values = decodeRowInto(image, ids, missing) as QValue[];
      for (const check of checks) {
        if (check.eval(values) === false) {
          throw new SvcError('CONSTRAINT_VIOLATION', `check constraint "${check.name}" of relation "${after.name}" is violated by some row`, {
            table: after.name,
            constraint: check.name,
          });
        }
      }
      if (fks.length > 0) await fkChecker.checkChild(onlyNew, values);
    }
  }
}

function checkContext(env: AlterEnv) {
  return execContext({
    types: env.deps.types,
    source: new WriteViewSource(env.view),
    params: [],
    deadlineMs: env.deps.env.deadlineMs,
    signal: env.deps.env.signal,
    stats: null,
    materializedRowsMax: env.deps.env.limits.materializedRowsMax,
  });
}

async function tableHasRows(view: WriteView, def: TableDef): Promise<boolean> {
  for await (const batch of view.rows(def.id)) if (batch.length > 0) return true;
  return false;
}

/** ALTER TABLE t RENAME [COLUMN] a TO b: CHECK texts are rewritten to the new name. */
function renameColumnIn(def: TableDef, from: string, to: string): TableDef {
  const column = columnByName(def, from);
  if (def.columns.some((c) => c.name === to))
    throw new SvcError('CONSTRAINT_VIOLATION', `column "${to}" of relation "${def.name}" already exists`, { column: to, reason: 'already_exists' });
  const columns: ColumnDef[] = def.columns.map((c) => (c.id === column.id ? { ...c, name: to } : c));
  const constraints = def.constraints.map((c) => {
    if (!c.columnIds.includes(column.id)) return c;
    return { ...c, definition: renameIdentifier(c.definition, from, to) };
  });
  return { ...def, columns, constraints };
}
