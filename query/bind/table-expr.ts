import type { TableDef } from '../../core/catalog.js';
import type { SqlExpr } from '../parse/index.js';
import type { Expr } from '../plan/expr.js';
import { asCondition, coerce } from './coerce.js';
import type { BindContext } from './context.js';
import { bindExpr, type ExprEnv } from './expr.js';
import { bindFunction } from './functions.js';
import { invalid } from './context.js';
import { Scope } from './scope.js';

/** A scope holding one table's columns in table order (CHECK and DEFAULT expressions, DML rows). */
export function tableScope(table: TableDef, alias?: string): Scope {
  const scope = new Scope(null);
  scope.add(
    alias ?? table.name,
    table.columns.map((c) => ({ name: c.name, type: c.type, nullable: c.nullable })),
    table.name,
  );
  return scope;
}

function env(ctx: BindContext, scope: Scope, clause: string): ExprEnv {
  return {
    ctx,
    scope,
    clause,
    allowAggregates: false,
    allowWindows: false,
    bindSubquery: () => {
      throw invalid(`cannot use subquery in ${clause}`);
    },
    bindFunction,
  };
}

/** A CHECK constraint over a row of `table` (columns by table position). */
export function bindCheck(ctx: BindContext, table: TableDef, expr: SqlExpr): Expr {
  return asCondition(ctx, bindExpr(expr, env(ctx, tableScope(table), 'check constraints')), 'CHECK');
}

/** A DEFAULT expression (no column references), converted to the column type. */
export function bindDefault(ctx: BindContext, table: TableDef, expr: SqlExpr, columnType: Expr['type']): Expr {
  const bound = bindExpr(expr, env(ctx, new Scope(null), 'DEFAULT expressions'));
  return coerce(ctx, bound, columnType, 'assignment');
}
