import type { QType } from '../types/contract.js';
import type { Expr } from '../plan/expr.js';
import type { Plan } from '../plan/nodes.js';
import type { FuncCall, QueryExpr, SqlExpr } from '../parse/ast/index.js';
import type { BindContext } from './context.js';
import type { Scope } from './scope.js';

/** What an expression is bound in. */
export interface ExprEnv {
  readonly ctx: BindContext;
  readonly scope: Scope;
  /** Clause name for messages ("WHERE", "JOIN conditions", ...); aggregates/windows allowed only where set. */
  readonly clause: string;
  readonly allowAggregates: boolean;
  readonly allowWindows: boolean;
  /** Binds a subquery in a child scope of `scope` (injected: select.ts imports this file). */
  readonly bindSubquery: (query: QueryExpr, scope: Scope) => { plan: Plan; types: readonly QType[] };
  /** Binds a function call: aggregates, windows and scalar functions (injected from functions.ts). */
  readonly bindFunction: (node: FuncCall, env: ExprEnv) => Expr;
}

/** Binds a sub-expression in the caller's environment (passed down so expr.ts's helpers need not import it). */
export type BindFn = (node: SqlExpr) => Expr;
