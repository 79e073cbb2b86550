import type { Expr } from '../plan/expr.js';
import { andAll, columnsOf, conjuncts, hasCorrelatedSubquery, shiftColumns, someExpr } from '../plan/expr-util.js';
import type { JoinNode, Plan } from '../plan/nodes.js';

const isVolatile = (e: Expr): boolean => someExpr(e, (n) => n.kind === 'call' && !n.fn.immutable);

/** Where a conjunct may go: it reads only columns in [from, to). */
function within(e: Expr, from: number, to: number): boolean {
  for (const c of columnsOf(e)) if (c < from || c >= to) return false;
  return true;
}

/**
 * Pushes filter conjuncts as far down as they stay correct: into scans, into the preserved side
 * of outer joins, and cross-side conjuncts of inner joins into the join condition (so a comma
 * join with an equality becomes a hash join). Conjuncts with correlated subqueries stay put:
 * their subqueries read the row of the node that evaluates them.
 */
export function pushdown(plan: Plan): Plan {
  switch (plan.kind) {
    case 'filter': {
      const input = pushdown(plan.input);
      return pushInto(input, conjuncts(plan.predicate));
    }
    case 'join': {
      const left = pushdown(plan.left);
      const right = pushdown(plan.right);
      return pushJoinCondition({ ...plan, left, right });
    }
    case 'scan':
    case 'values':
    case 'one_row':
    case 'function_scan':
    case 'rows_from':
    case 'worktable_scan':
      return plan;
    case 'setop':
    case 'recursive_union':
      return { ...plan, left: pushdown(plan.left), right: pushdown(plan.right) };
    default:
      return { ...plan, input: pushdown(plan.input) } as Plan;
  }
}

function filterOf(input: Plan, preds: readonly Expr[]): Plan {
  const predicate = andAll(preds);
  return predicate ? { kind: 'filter', input, predicate, columns: input.columns } : input;
}

/** Places conjuncts over `input` (already pushed down itself). */
function pushInto(input: Plan, preds: readonly Expr[]): Plan {
  if (preds.length === 0) return input;
  const fixed = preds.filter((p) => hasCorrelatedSubquery(p) || isVolatile(p));
  const movable = preds.filter((p) => !fixed.includes(p));
  let placed: Plan;
  if (input.kind === 'scan') {
    placed = { ...input, filter: andAll([...conjuncts(input.filter), ...movable]) };
  } else if (input.kind === 'join') {
    placed = pushIntoJoin(input, movable);
  } else if (input.kind === 'filter') {
    placed = pushInto(input.input, [...conjuncts(input.predicate), ...movable]);
  } else placed = filterOf(input, movable);
  return filterOf(placed, fixed);
}

function pushIntoJoin(join: JoinNode, preds: readonly Expr[]): Plan {
  const lw = join.left.columns.length;
  const width = lw + join.right.columns.length;
  const toLeft: Expr[] = [];
  const toRight: Expr[] = [];
  const toJoin: Expr[] = [];
  const stay: Expr[] = [];
  const t = join.joinType;
  for (const p of preds) {
    if (within(p, 0, lw) && (t === 'inner' || t === 'cross' || t === 'left')) toLeft.push(p);
    else if (within(p, lw, width) && (t === 'inner' || t === 'cross' || t === 'right')) toRight.push(shiftColumns(p, -lw));
    else if (t === 'inner' || t === 'cross') toJoin.push(p);
    else stay.push(p);
  }
  const left = pushInto(join.left, toLeft);
  const right = pushInto(join.right, toRight);
  const on = andAll([...conjuncts(join.on), ...toJoin]);
  const joined = pushJoinCondition({ ...join, joinType: t === 'cross' && on ? 'inner' : t, left, right, on });
  return filterOf(joined, stay);
}

/** ON conjuncts of one side: inner joins push either side, outer joins only the nullable side's. */
function pushJoinCondition(join: JoinNode): Plan {
  if (!join.on) return join;
  const lw = join.left.columns.length;
  const width = lw + join.right.columns.length;
  const t = join.joinType;
  const toLeft: Expr[] = [];
  const toRight: Expr[] = [];
  const keep: Expr[] = [];
  for (const p of conjuncts(join.on)) {
    const movable = !hasCorrelatedSubquery(p) && !isVolatile(p) && columnsOf(p).size > 0;
    if (movable && within(p, 0, lw) && (t === 'inner' || t === 'right')) toLeft.push(p);
    else if (movable && within(p, lw, width) && (t === 'inner' || t === 'left')) toRight.push(shiftColumns(p, -lw));
    else keep.push(p);
  }
  if (toLeft.length === 0 && toRight.length === 0) return join;
  return { ...join, left: pushInto(join.left, toLeft), right: pushInto(join.right, toRight), on: andAll(keep) };
}
