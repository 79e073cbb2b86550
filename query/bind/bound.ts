import type { AstNode } from '../parse/index.js';
import type { Plan } from '../plan/nodes.js';
import type { BindContext } from './context.js';
import type { ExprEnv } from './expr.js';
import type { Scope } from './scope.js';

/** A bound query: its plan and its output column names (not yet made unique). */
export interface BoundQuery {
  readonly plan: Plan;
  readonly names: readonly string[];
}

/** What set operations need from the SELECT binder (an interface, so the two files do not import each other). */
export interface SelectBinder {
  readonly ctx: BindContext;
  env(scope: Scope, clause: string, aggregates: boolean): ExprEnv;
  bindSelect(ast: AstNode, scope: Scope, withTail: boolean): BoundQuery;
  bindQuery(ast: AstNode, scope: Scope): BoundQuery;
  applyLimit(plan: Plan, limit: AstNode | null | undefined): Plan;
}
