import type { ColumnDef, TableDef } from '../../core/catalog.js';
import type { SqlType } from '../../core/values.js';
import { bindDefault, bindTypeName, invalid, type BindContext } from '../bind/index.js';
import { exprSql, type ColumnDef as ColumnSyntax } from '../parse/index.js';
import type { QType } from '../types/contract.js';
import { elementType } from '../types/index.js';
import { sequenceName } from './common.js';
import type { ConstraintBuilder } from './table-builder.js';

/** SqlType of a column (run-time types that are not storable, like interval, are refused; arrays of storable types are kept). */
export function storableType(type: QType, column: string): SqlType {
  if (type.name === 'array') {
    const element = elementType(type);
    if (element.name === 'interval' || element.name === 'unknown') {
      throw invalid(`column "${column}" has type ${element.name}[], which svcdb cannot store in a table`, { column });
    }
    return { name: 'array', element: element as SqlType };
  }
  if (type.name === 'interval' || type.name === 'unknown') {
    throw invalid(`column "${column}" has type ${type.name}, which svcdb cannot store in a table`, { column });
  }
  return type as SqlType;
}

/** One column definition of CREATE TABLE / ADD COLUMN; its inline constraints go to `constraints`. */
export function columnFromAst(
  ctx: BindContext,
  node: ColumnSyntax,
  table: Pick<TableDef, 'tenant' | 'schema' | 'name'>,
  id: number,
  constraints: ConstraintBuilder,
): ColumnDef {
  const { name, serial } = node;
  const type = storableType(bindTypeName(ctx, node.type), name);
  let nullable = true;
  let defaultExpr: string | null = null;
  let sequence: string | null = null;
  if (serial) {
    sequence = sequenceName(table.tenant, table.schema, table.name, name);
    defaultExpr = `nextval('${table.name}_${name}_seq'::regclass)`;
    nullable = false;
  }
  for (const c of node.constraints) {
    switch (c.kind) {
      case 'not_null':
        nullable = false;
        break;
      case 'null':
        break;
      case 'default':
        if (serial) throw invalid(`multiple default values specified for column "${name}" of table "${table.name}"`, { column: name });
        bindDefault(ctx, table as TableDef, c.expr, type);
        defaultExpr = exprSql(c.expr);
        break;
      case 'primary_key':
        constraints.setPrimaryKey([name]);
        nullable = false;
        break;
      case 'unique':
        constraints.uniques.push({ name: c.name, columns: [name] });
        break;
      case 'check':
        constraints.checks.push({ name: c.name, expr: c.expr, column: name });
        break;
      case 'references':
        constraints.foreignKeys.push({ name: c.name, columns: [name], ref: c.ref });
        break;
      case 'identity':
      case 'generated':
        throw invalid(`${c.kind === 'identity' ? 'identity' : 'generated'} columns are not supported; use SERIAL or a DEFAULT`, {
          column: name,
          reason: 'unsupported',
        });
    }
  }
  return { id, name, type, nullable, defaultExpr, missingValue: null, sequence };
}
