import { BOOL, constant, type Expr } from '../plan/expr.js';
import type { Between, BoolTest, DistinctFrom, InList, LikeExpr, NullTest, OperatorExpr, QuantifiedArray, SqlExpr } from '../parse/ast/index.js';
import { asCondition, callByName, coerce, unify } from './coerce.js';
import { invalid, mismatch } from './context.js';
import type { BindFn, ExprEnv } from './env.js';
import { similarPattern } from './patterns.js';
import { bindRowComparison, bindRowDistinct, bindRowIn, bindRowIsNull, rowItems, type RowEnv } from './row-compare.js';

const COMPARISON = new Set(['=', '<>', '<', '>', '<=', '>=']);

/**
 * A binary or prefix operator, resolved by name through the TypeSystem (PostgreSQL's
 * "operator does not exist" when none fits); comparisons of row constructors compare field by field.
 */
export function bindOperator(node: OperatorExpr, env: ExprEnv, bind: BindFn): Expr {
  const op = node.op === '!=' ? '<>' : node.op;
  if (node.left === null) {
    const arg = bind(node.right);
    return op === '+' ? arg : callByName(env.ctx, op, [arg], true);
  }
  if (COMPARISON.has(op) && (rowItems(node.left) || rowItems(node.right))) return bindRowComparison(op, node.left, node.right, rowEnv(env, bind));
  return callByName(env.ctx, op, [bind(node.left), bind(node.right)], true);
}

/** AND / OR over conditions, flattened. */
export function bindAndOr(kind: 'and' | 'or', operands: readonly SqlExpr[], env: ExprEnv, bind: BindFn): Expr {
  const clause = kind.toUpperCase();
  const args = operands.map((a) => asCondition(env.ctx, bind(a), clause));
  return { kind, type: BOOL, args: args.flatMap((a) => (a.kind === kind ? a.args : [a])) };
}

export function bindNot(arg: SqlExpr, env: ExprEnv, bind: BindFn): Expr {
  return negate(asCondition(env.ctx, bind(arg), 'NOT'));
}

export function bindNullTest(node: NullTest, env: ExprEnv, bind: BindFn): Expr {
  if (rowItems(node.arg)) return bindRowIsNull(node.arg, node.negated, rowEnv(env, bind));
  return { kind: 'is_null', type: BOOL, arg: bind(node.arg), negated: node.negated };
}

export function bindBoolTest(node: BoolTest, env: ExprEnv, bind: BindFn): Expr {
  const arg = asCondition(env.ctx, bind(node.arg), 'IS');
  return { kind: 'is_bool', type: BOOL, arg, value: node.value, negated: node.negated };
}

export function bindDistinctFrom(node: DistinctFrom, env: ExprEnv, bind: BindFn): Expr {
  if (rowItems(node.left) || rowItems(node.right)) return bindRowDistinct(node.left, node.right, node.negated, rowEnv(env, bind));
  return distinctFrom(env, bind(node.left), bind(node.right), node.negated);
}

/** a IS [NOT] DISTINCT FROM b over scalars: both sides unified, compared with their `=`; never NULL. */
export function distinctFrom(env: ExprEnv, left: Expr, right: Expr, negated: boolean): Expr {
  const unified = unify(env.ctx, [left, right], 'IS DISTINCT FROM');
  const call = callByName(env.ctx, '=', unified.exprs, true);
  const fn = call.kind === 'call' ? call.fn : env.ctx.types.resolveFunction('=', [unified.type, unified.type]);
  if (!fn) throw mismatch(`operator does not exist: ${unified.type.name} = ${unified.type.name}`);
  return { kind: 'distinct_from', type: BOOL, left: unified.exprs[0]!, right: unified.exprs[1]!, eq: fn, negated };
}

/** x [NOT] BETWEEN [SYMMETRIC] a AND b: the comparisons PostgreSQL expands it to. */
export function bindBetween(node: Between, env: ExprEnv, bind: BindFn): Expr {
  const arg = bind(node.arg);
  const low = bind(node.low);
  const high = bind(node.high);
  const range = (lo: Expr, hi: Expr): Expr =>
    node.negated
      ? { kind: 'or', type: BOOL, args: [callByName(env.ctx, '<', [arg, lo], true), callByName(env.ctx, '>', [arg, hi], true)] }
      : { kind: 'and', type: BOOL, args: [callByName(env.ctx, '>=', [arg, lo], true), callByName(env.ctx, '<=', [arg, hi], true)] };
  if (!node.symmetric) return range(low, high);
  // SYMMETRIC: either order of the bounds (NOT: neither order).
  return { kind: node.negated ? 'and' : 'or', type: BOOL, args: [range(low, high), range(high, low)] };
}

/** x [NOT] IN (a, b, ...): one comparison per element, each with its own resolved `=`. */
export function bindInList(node: InList, env: ExprEnv, bind: BindFn): Expr {
  if (rowItems(node.arg)) return bindRowIn(node.arg, node.list, node.negated, rowEnv(env, bind));
  const arg = bind(node.arg);
  const list = node.list.map((item) => bind(item));
  const unified = unify(env.ctx, [arg, ...list], 'IN');
  const [left, ...rest] = unified.exprs;
  const eq = rest.map((item) => {
    const call = callByName(env.ctx, '=', [left!, item], true);
    if (call.kind !== 'call') return env.ctx.types.resolveFunction('=', [unified.type, unified.type])!;
    return call.fn;
  });
  return { kind: 'in_list', type: BOOL, arg: left!, list: rest, eq, negated: node.negated };
}

/** [NOT] LIKE / ILIKE [ESCAPE e] as ~~ and friends; SIMILAR TO as a regular expression match (~). */
export function bindLike(node: LikeExpr, env: ExprEnv, bind: BindFn): Expr {
  const arg = bind(node.arg);
  const pattern = bind(node.pattern);
  const escape = node.escape === null ? null : bind(node.escape);
  if (node.similar) return callByName(env.ctx, node.negated ? '!~' : '~', [arg, similarPattern(pattern, escape)], true);
  const op = `${node.negated ? '!' : ''}~~${node.caseInsensitive ? '*' : ''}`;
  // PostgreSQL's own rewrite: x LIKE p ESCAPE e is x ~~ like_escape(p, e).
  const escaped = escape === null ? pattern : callByName(env.ctx, 'like_escape', [pattern, escape], false);
  return callByName(env.ctx, op, [arg, escaped], true);
}

/** x op ANY|ALL (array expression). */
export function bindQuantified(node: QuantifiedArray, env: ExprEnv, bind: BindFn): Expr {
  const op = node.op === '!=' ? '<>' : node.op;
  if (rowItems(node.arg)) throw invalid('row constructors with ANY/ALL (array) are not supported', { reason: 'unsupported' });
  const arg = bind(node.arg);
  let array = bind(node.array);
  if (array.type.name === 'unknown') {
    array = coerce(env.ctx, array, { name: 'array', element: arg.type.name === 'unknown' ? { name: 'text' } : arg.type }, 'implicit');
  }
  if (array.type.name !== 'array' || !array.type.element) throw mismatch('op ANY/ALL (array) requires array on right side');
  const element = array.type.element;
  const fn = env.ctx.types.resolveFunction(op, [arg.type, element]);
  if (!fn) throw mismatch(`operator does not exist: ${env.ctx.types.typeText(arg.type).toLowerCase()} ${op} ${env.ctx.types.typeText(element).toLowerCase()}`);
  if (fn.returnType.name !== 'bool') throw mismatch(`op ANY/ALL (array) requires operator to yield boolean`);
  return { kind: 'quantified', type: BOOL, arg: coerce(env.ctx, arg, fn.argTypes[0]!, 'implicit'), array, op: fn, all: node.all };
}

/** What row-compare.ts needs to bind the fields of row constructors. */
export function rowEnv(env: ExprEnv, bind: BindFn): RowEnv {
  return { ctx: env.ctx, bind, distinct: (l, r, negated) => distinctFrom(env, l, r, negated) };
}

/** NOT over a condition; a constant is folded. */
export function negate(expr: Expr): Expr {
  if (expr.kind === 'const') return constant(BOOL, expr.value === null ? null : !expr.value);
  return { kind: 'not', type: BOOL, arg: expr };
}
