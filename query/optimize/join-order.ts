import type { Expr } from '../plan/expr.js';
import { andAll, columnsOf, conjuncts, mapExpr } from '../plan/expr-util.js';
import type { JoinNode, OutputColumn, Plan } from '../plan/nodes.js';
import type { OptimizerDeps } from './deps.js';

interface Leaf {
  readonly plan: Plan;
  /** First column of the leaf in the original (FROM order) row. */
  readonly offset: number;
  readonly width: number;
  readonly rows: number;
}

// A LATERAL join is a leaf: its right side reads its left row, so the two stay together.
const isInner = (p: Plan): p is JoinNode => p.kind === 'join' && (p.joinType === 'inner' || p.joinType === 'cross') && p.lateral === undefined;

/**
 * Greedy join order for a tree of inner/cross joins: start from the smallest input, then add
 * the smallest input connected to the joined set by a condition (a cross join only when none
 * is). Conditions go to the lowest join covering their columns; a projection restores the
 * original column order. Outer joins are left as written.
 */
export function reorderJoins(plan: Plan, deps: OptimizerDeps): Plan {
  if (isInner(plan)) {
    const leaves: Leaf[] = [];
    const conds: Expr[] = [];
    flatten(plan, 0, leaves, conds, deps);
    if (leaves.length > 2) return reorder(plan, leaves, conds);
  }
  switch (plan.kind) {
    case 'scan':
    case 'values':
    case 'one_row':
    case 'function_scan':
    case 'rows_from':
    case 'worktable_scan':
      return plan;
    case 'join':
    case 'setop':
    case 'recursive_union':
      return { ...plan, left: reorderJoins(plan.left, deps), right: reorderJoins(plan.right, deps) };
    default:
      return { ...plan, input: reorderJoins(plan.input, deps) } as Plan;
  }
}

function estimateRows(plan: Plan, deps: OptimizerDeps): number {
  if (plan.kind === 'scan') return Math.max(1, deps.rowCount(plan.table.id) * Math.pow(0.2, conjuncts(plan.filter).length));
  if (plan.kind === 'filter') return Math.max(1, estimateRows(plan.input, deps) * 0.3);
  if (plan.kind === 'values') return plan.rows.length;
  if (plan.kind === 'one_row') return 1;
  return 1000;
}

function flatten(plan: Plan, offset: number, leaves: Leaf[], conds: Expr[], deps: OptimizerDeps): void {
  if (isInner(plan)) {
    flatten(plan.left, offset, leaves, conds, deps);
    flatten(plan.right, offset + plan.left.columns.length, leaves, conds, deps);
    for (const c of conjuncts(plan.on)) conds.push(offset === 0 ? c : mapExpr(c, (e) => (e.kind === 'column' ? { ...e, index: e.index + offset } : undefined)));
    return;
  }
  leaves.push({ plan, offset, width: plan.columns.length, rows: estimateRows(plan, { ...deps }) });
}

function reorder(original: Plan, leaves: Leaf[], conds: Expr[]): Plan {
  const owner = (col: number): number => leaves.findIndex((l) => col >= l.offset && col < l.offset + l.width);
  const needs = conds.map((c) => new Set([...columnsOf(c)].map(owner)));
  const remaining = new Set(leaves.map((_l, i) => i));
  const order: number[] = [];
  const pickSmallest = (candidates: number[]): number => candidates.reduce((a, b) => (leaves[b]!.rows < leaves[a]!.rows ? b : a));
  order.push(pickSmallest([...remaining]));
  remaining.delete(order[0]!);
  while (remaining.size > 0) {
    const inSet = new Set(order);
    const connected = [...remaining].filter((i) => needs.some((n) => n.has(i) && [...n].every((x) => x === i || inSet.has(x)) && n.size > 1));
    const next = pickSmallest(connected.length > 0 ? connected : [...remaining]);
    order.push(next);
    remaining.delete(next);
  }
  // New position of every original column.
  const newIndex = new Map<number, number>();
  let pos = 0;
  for (const i of order) {
    const l = leaves[i]!;
    for (let c = 0; c < l.width; c++) newIndex.set(l.offset + c, pos++);
  }
  const remap = (e: Expr): Expr => mapExpr(e, (n) => (n.kind === 'column' ? { ...n, index: newIndex.get(n.index)! } : undefined));
  const used = new Array<boolean>(conds.length).fill(false);
  let plan: Plan = leaves[order[0]!]!.plan;
  const joined = new Set([order[0]!]);
  for (const i of order.slice(1)) {
    joined.add(i);
    const on: Expr[] = [];
    conds.forEach((c, k) => {
      if (!used[k] && [...needs[k]!].every((x) => x === -1 || joined.has(x))) {
        used[k] = true;
        on.push(remap(c));
      }
    });
    const right = leaves[i]!.plan;
    const cond = andAll(on);
    const columns: OutputColumn[] = [...plan.columns, ...right.columns];
    plan = { kind: 'join', joinType: cond ? 'inner' : 'cross', left: plan, right, on: cond, hash: null, columns };
  }
  const exprs: Expr[] = original.columns.map((c, i) => ({ kind: 'column', type: c.type, index: newIndex.get(i)!, name: c.name }));
  if (exprs.every((e, i) => (e as { index: number }).index === i)) return plan;
  return { kind: 'project', input: plan, exprs, columns: original.columns };
}
