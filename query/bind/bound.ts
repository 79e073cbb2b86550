import type { QueryExpr, SqlExpr } from '../parse/index.js';
import type { Plan } from '../plan/nodes.js';
import type { BindContext } from './context.js';
import type { ExprEnv } from './expr.js';
import type { Scope } from './scope.js';

/** A bound query: its plan and its output column names (not yet made unique). */
export interface BoundQuery {
  readonly plan: Plan;
  readonly names: readonly string[];
}

/** What set operations and recursive CTEs need from the query binder (an interface, so the files do not import each other). */
export interface SelectBinder {
  readonly ctx: BindContext;
  env(scope: Scope, clause: string, aggregates: boolean): ExprEnv;
  /** `operand`: a set operation's member, whose untyped outputs (NULL, 'x') take the operation's type. */
  bindQuery(query: QueryExpr, scope: Scope, operand?: boolean): BoundQuery;
  applyLimit(plan: Plan, limit: SqlExpr | null, offset: SqlExpr | null): Plan;
}
