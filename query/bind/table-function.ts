import type { AstNode } from '../parse/index.js';
import { INT4, INT8, type Expr } from '../plan/expr.js';
import type { Plan } from '../plan/nodes.js';
import { someExpr } from '../plan/expr-util.js';
import { coerce, unify } from './coerce.js';
import { invalid, mismatch } from './context.js';
import { bindExpr, type ExprEnv } from './expr.js';
import { functionName } from './names.js';
import type { Scope } from './scope.js';

/** The set-returning functions svcdb has (only in FROM, or alone in a select list). */
export function isSetReturningCall(node: AstNode | null | undefined): boolean {
  return node?.type === 'function' && functionName(node).name === 'generate_series' && functionName(node).schema === null;
}

/**
 * generate_series(start, stop[, step]) over integers as a plan of one column named `name`.
 * `env` is over the FROM scope: the arguments may use parameters and enclosing queries' columns,
 * not FROM items (that is LATERAL, which needs a join re-running the function per row).
 */
export function bindSeries(node: AstNode, env: ExprEnv, name: string): Plan {
  const args: AstNode[] = node.args?.value ?? [];
  // Bound in the FROM scope itself: a column of this query's row is a reference to a FROM item.
  const bound = args.map((a) => bindExpr(a, env));
  if (bound.some((e) => someExpr(e, (x) => x.kind === 'column'))) {
    throw invalid('generate_series arguments that reference FROM items (LATERAL) are not supported', { reason: 'unsupported' });
  }
  const shown = (): string => bound.map((e) => env.ctx.types.typeText(e.type).toLowerCase()).join(', ');
  if (bound.length < 2 || bound.length > 3) throw mismatch(`function generate_series(${shown()}) does not exist`);
  const { type } = unify(env.ctx, bound, 'generate_series');
  const target = type.name === 'int8' ? INT8 : type.name === 'int4' || type.name === 'int2' || type.name === 'unknown' ? INT4 : null;
  if (!target) throw mismatch(`generate_series(${shown()}) is not supported: svcdb's generate_series takes integers`, { reason: 'unsupported' });
  const exprs: Expr[] = bound.map((e) => coerce(env.ctx, e, target, 'implicit'));
  return { kind: 'function_scan', fn: 'generate_series', args: exprs, columns: [{ name, type: target, nullable: false }] };
}

const SRF_ALIAS = '__svc_srf';

/**
 * A select list calling generate_series (PostgreSQL's ProjectSet): with one such call, each input
 * row is repeated once per value, the same as crossing the input with the series. The call is
 * replaced by a reference to the crossed column. Several calls (PostgreSQL zips them) and calls
 * whose arguments read the row (LATERAL) are refused.
 */
export function bindSelectListSeries(items: readonly AstNode[], scope: Scope, env: ExprEnv, input: Plan): { plan: Plan; items: AstNode[] } | null {
  const calls: AstNode[] = [];
  const replaced = items.map((item) => replaceCalls(item, calls));
  if (calls.length === 0) return null;
  if (calls.length > 1) throw invalid('more than one set-returning function in a select list is not supported', { reason: 'unsupported' });
  const series = bindSeries(calls[0]!, env, 'generate_series');
  scope.add(
    SRF_ALIAS,
    series.columns.map((c) => ({ ...c, hidden: true })),
  );
  const plan: Plan = { kind: 'join', joinType: 'cross', left: input, right: series, on: null, hash: null, columns: [...input.columns, ...series.columns] };
  return { plan, items: replaced as AstNode[] };
}

/** A copy of `node` with each set-returning call (outside subqueries) replaced by the crossed column. */
function replaceCalls(node: unknown, calls: AstNode[]): unknown {
  if (Array.isArray(node)) return node.map((n) => replaceCalls(n, calls));
  if (node === null || typeof node !== 'object') return node;
  const n = node as AstNode;
  if (isSetReturningCall(n)) {
    calls.push(n);
    return { type: 'column_ref', table: SRF_ALIAS, column: 'generate_series' };
  }
  if (n.ast) return node;
  return Object.fromEntries(Object.entries(n).map(([k, v]) => [k, replaceCalls(v, calls)]));
}
