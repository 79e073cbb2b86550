import { BOOL, type Expr, type SubqueryMode } from '../plan/expr.js';
import type { QueryExpr, SqlExpr, Sublink } from '../parse/ast/index.js';
import { callByName, unify } from './coerce.js';
import { invalid } from './context.js';
import type { BindFn, ExprEnv } from './env.js';
import { rowItems } from './row-compare.js';
import { Scope } from './scope.js';

/** A subquery used as an expression: scalar, EXISTS, IN, op ANY/ALL, ARRAY(SELECT ...). */
export function bindSublink(node: Sublink, env: ExprEnv, bind: BindFn): Expr {
  const op = node.mode === 'in' ? '=' : node.op === '!=' ? '<>' : node.op;
  const rowTest = node.test === null ? null : rowItems(node.test);
  if (rowTest !== null) {
    if (node.mode !== 'in' && !(node.mode === 'any' && op === '=')) {
      throw invalid('row comparisons with a subquery other than IN / = ANY are not supported', { reason: 'unsupported' });
    }
    return bindTupleIn(node.query, rowTest, env, bind);
  }
  if (node.mode === 'in' || node.mode === 'any' || node.mode === 'all') {
    if (node.test === null || op === null) throw invalid(`${node.mode.toUpperCase()} subquery needs a left operand`);
    return bindSubqueryExpr(node.query, env, bind, node.mode, { left: node.test, op });
  }
  return bindSubqueryExpr(node.query, env, bind, node.mode, null);
}

function bindSubqueryExpr(query: QueryExpr, env: ExprEnv, bind: BindFn, mode: SubqueryMode, test: { left: SqlExpr; op: string } | null): Expr {
  const child = new Scope(env.scope);
  const { plan, types } = env.bindSubquery(query, child);
  const correlated = child.usedOuter;
  const id = env.ctx.subqueryId();
  if (mode === 'exists') return { kind: 'subquery', type: BOOL, id, mode, plan, test: null, correlated };
  if (types.length !== 1) throw invalid(mode === 'scalar' || mode === 'array' ? 'subquery must return only one column' : 'subquery has too many columns');
  const column = types[0]!;
  if (mode === 'scalar') return { kind: 'subquery', type: column, id, mode, plan, test: null, correlated };
  if (mode === 'array') {
    const element = column.name === 'unknown' ? { name: 'text' as const } : column;
    if (element.name === 'array') throw invalid('ARRAY(SELECT ...) of an array column is not supported', { reason: 'unsupported' });
    return { kind: 'subquery', type: { name: 'array', element }, id, mode, plan, test: null, correlated };
  }
  const left = bind(test!.left);
  const right: Expr = { kind: 'column', type: column, index: 0, name: '?column?' };
  const unified = unify(env.ctx, [left, right], mode === 'in' ? 'IN' : 'ANY/ALL');
  const call = callByName(env.ctx, test!.op, [unified.exprs[0]!, unified.exprs[1]!], true);
  if (call.kind !== 'call') throw invalid('unsupported subquery comparison');
  const r = unified.exprs[1]!;
  const rightCast = r.kind === 'cast' ? r.cast : null;
  return { kind: 'subquery', type: BOOL, id, mode, plan, test: { left: unified.exprs[0]!, op: call.fn, rightCast }, correlated };
}

/** (a, b) IN (SELECT x, y ...): per-column equality, PostgreSQL's row comparison (3VL). */
function bindTupleIn(query: QueryExpr, lefts: readonly SqlExpr[], env: ExprEnv, bind: BindFn): Expr {
  const child = new Scope(env.scope);
  const { plan, types } = env.bindSubquery(query, child);
  if (types.length !== lefts.length) throw invalid(types.length > lefts.length ? 'subquery has too many columns' : 'subquery has too few columns');
  const tuple = lefts.map((l, i) => {
    const left = bind(l);
    const right: Expr = { kind: 'column', type: types[i]!, index: i, name: '?column?' };
    const unified = unify(env.ctx, [left, right], 'IN');
    const call = callByName(env.ctx, '=', [unified.exprs[0]!, unified.exprs[1]!], true);
    if (call.kind !== 'call') throw invalid('unsupported subquery comparison');
    const r = unified.exprs[1]!;
    return { left: unified.exprs[0]!, op: call.fn, rightCast: r.kind === 'cast' ? r.cast : null };
  });
  return { kind: 'subquery', type: BOOL, id: env.ctx.subqueryId(), mode: 'in', plan, test: null, tuple, correlated: child.usedOuter };
}
