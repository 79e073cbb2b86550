import type { SqlExpr } from '../parse/ast/index.js';
import { BOOL, constant, type Expr } from '../plan/expr.js';
import { callByName } from './coerce.js';
import { invalid, mismatch, type BindContext } from './context.js';

/**
 * Row-wise comparisons, PostgreSQL's "row constructor comparison": (a, b) op (c, d) and
 * (a, b) [NOT] IN ((c, d), ...), each pair's operator resolved on its own types. Built from
 * the scalar comparisons, so NULLs follow from three-valued logic: = is the AND of the pairs,
 * <> their OR, and < <= > >= compare left to right, decided by the first pair that is not
 * equal, NULL when that pair (or one before it) has a NULL.
 */
export interface RowEnv {
  readonly ctx: BindContext;
  readonly bind: (node: SqlExpr) => Expr;
  /** IS [NOT] DISTINCT FROM of two scalars. */
  readonly distinct: (left: Expr, right: Expr, negated: boolean) => Expr;
}

/** The elements of a row constructor `(a, b, ...)` (two or more) or `ROW(...)`; null for anything else. */
export function rowItems(node: SqlExpr | null): readonly SqlExpr[] | null {
  return node?.kind === 'row' ? node.items : null;
}

/** left op right where at least one side is a row constructor. */
export function bindRowComparison(op: string, left: SqlExpr, right: SqlExpr, env: RowEnv): Expr {
  const [ls, rs] = pairs(left, right, op, env);
  if (op === '=') return all(ls.map((l, i) => callByName(env.ctx, '=', [l, rs[i]!], true)));
  if (op === '<>') return any(ls.map((l, i) => callByName(env.ctx, '<>', [l, rs[i]!], true)));
  const n = ls.length;
  // The last pair decides alone once all before it are equal: CASE WHEN eq IS NULL THEN NULL
  // WHEN eq THEN <the rest> ELSE l op r END for each earlier pair, from the end.
  let result = callByName(env.ctx, op, [ls[n - 1]!, rs[n - 1]!], true);
  for (let i = n - 2; i >= 0; i--) {
    const eq = callByName(env.ctx, '=', [ls[i]!, rs[i]!], true);
    result = {
      kind: 'case',
      type: BOOL,
      whens: [
        { cond: { kind: 'is_null', type: BOOL, arg: eq, negated: false }, result: constant(BOOL, null) },
        { cond: eq, result },
      ],
      otherwise: callByName(env.ctx, op, [ls[i]!, rs[i]!], true),
    };
  }
  return result;
}

/** left IS [NOT] DISTINCT FROM right over rows: distinct when any pair is. */
export function bindRowDistinct(left: SqlExpr, right: SqlExpr, negated: boolean, env: RowEnv): Expr {
  const [ls, rs] = pairs(left, right, 'IS DISTINCT FROM', env);
  const each = ls.map((l, i) => env.distinct(l, rs[i]!, false));
  const distinct = any(each);
  return negated ? { kind: 'not', type: BOOL, arg: distinct } : distinct;
}

/** row IS NULL: every field is; row IS NOT NULL: no field is (so neither holds for (1, NULL)). */
export function bindRowIsNull(row: SqlExpr, negated: boolean, env: RowEnv): Expr {
  return all(rowItems(row)!.map((item) => ({ kind: 'is_null', type: BOOL, arg: env.bind(item), negated })));
}

/** (a, b) [NOT] IN ((1, 2), (3, 4)): the OR of the rows' equalities. */
export function bindRowIn(left: SqlExpr, list: readonly SqlExpr[], negated: boolean, env: RowEnv): Expr {
  const found = any(list.map((item) => bindRowComparison('=', left, item, env)));
  return negated ? { kind: 'not', type: BOOL, arg: found } : found;
}

function pairs(left: SqlExpr, right: SqlExpr, op: string, env: RowEnv): [Expr[], Expr[]] {
  const l = rowItems(left);
  const r = rowItems(right);
  if (isSubquery(left) || isSubquery(right)) throw invalid('comparing a row with a subquery is not supported', { reason: 'unsupported' });
  if (!l || !r) {
    const other = env.bind(l ? right : left);
    const typeText = env.ctx.types.typeText(other.type).toLowerCase();
    throw mismatch(l ? `operator does not exist: record ${op} ${typeText}` : `operator does not exist: ${typeText} ${op} record`);
  }
  if (l.length !== r.length) throw invalid('unequal number of entries in row expressions');
  if (l.length === 0) throw invalid('cannot compare rows of zero length');
  return [l.map((n) => env.bind(n)), r.map((n) => env.bind(n))];
}

function isSubquery(node: SqlExpr): boolean {
  return node.kind === 'sublink';
}

const all = (args: Expr[]): Expr => (args.length === 1 ? args[0]! : { kind: 'and', type: BOOL, args });
const any = (args: Expr[]): Expr => (args.length === 1 ? args[0]! : { kind: 'or', type: BOOL, args });
