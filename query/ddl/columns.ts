import type { ColumnDef, TableDef } from '../../core/catalog.js';
import type { SqlType } from '../../core/values.js';
import { bindDefault, bindTypeName, identName, invalid, type BindContext } from '../bind/index.js';
import { exprSql, type AstNode } from '../parse/index.js';
import type { QType } from '../types/contract.js';
import { sequenceName } from './common.js';
import type { ConstraintBuilder } from './table-builder.js';

const SERIALS = new Set(['serial', 'serial4', 'bigserial', 'serial8', 'smallserial', 'serial2']);

/** SqlType of a column (run-time types that are not storable, like interval or arrays, are refused). */
export function storableType(type: QType, column: string): SqlType {
  if (type.name === 'interval' || type.name === 'array' || type.name === 'unknown') {
    throw invalid(`column "${column}" has type ${type.name}, which svcdb cannot store in a table`, { column });
  }
  return type as SqlType;
}

/** One column definition of CREATE TABLE / ADD COLUMN; its inline constraints go to `constraints`. */
export function columnFromAst(
  ctx: BindContext,
  node: AstNode,
  table: Pick<TableDef, 'tenant' | 'schema' | 'name'>,
  id: number,
  constraints: ConstraintBuilder,
): ColumnDef {
  const name = identName(node.column?.column ?? node.column);
  const dataType = String(node.definition?.dataType ?? '').toLowerCase();
  const serial = SERIALS.has(dataType);
  const type = storableType(bindTypeName(ctx, node.definition ?? {}), name);
  let nullable = String(node.nullable?.type ?? '').toLowerCase() !== 'not null';
  let defaultExpr: string | null = null;
  let sequence: string | null = null;
  if (serial) {
    sequence = sequenceName(table.tenant, table.schema, table.name, name);
    defaultExpr = `nextval('${table.name}_${name}_seq'::regclass)`;
    nullable = false;
  }
  const defaultNode = node.default_val?.value;
  if (defaultNode && !serial) {
    bindDefault(ctx, table as TableDef, defaultNode, type);
    defaultExpr = exprSql(defaultNode);
  }
  const constraintName = node.constraint?.constraint ? identName(node.constraint.constraint) : null;
  if (node.primary_key) {
    constraints.setPrimaryKey([name]);
    nullable = false;
  }
  if (node.unique) constraints.uniques.push({ name: node.primary_key ? null : constraintName, columns: [name] });
  if (node.check)
    constraints.checks.push({ name: node.check.constraint ? identName(node.check.constraint) : constraintName, ast: node.check.definition[0], column: name });
  if (node.reference_definition) constraints.foreignKeys.push({ name: constraintName, columns: [name], ref: node.reference_definition });
  return { id, name, type, nullable, defaultExpr, missingValue: null, sequence };
}
