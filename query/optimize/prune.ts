import type { AggCall, Expr, WindowCall } from '../plan/expr.js';
import { columnsOf, hasCorrelatedSubquery } from '../plan/expr-util.js';
import type { Plan } from '../plan/nodes.js';

/** Column positions a node needs from its input; null: all of them. */
type Need = Set<number> | null;

function colsOf(exprs: readonly (Expr | null | undefined)[], into: Set<number> = new Set()): Need {
  for (const e of exprs) {
    if (!e) continue;
    // A correlated subquery reads the evaluating row through outer references columnsOf cannot see.
    if (hasCorrelatedSubquery(e)) return null;
    for (const c of columnsOf(e)) into.add(c);
  }
  return into;
}

const union = (a: Need, b: Need): Need => (a === null || b === null ? null : new Set([...a, ...b]));

function aggExprs(a: AggCall): Expr[] {
  return [...a.args, ...(a.filter ? [a.filter] : []), ...a.orderBy.map((k) => k.expr)];
}

function windowExprs(w: WindowCall): Expr[] {
  return [...w.args, ...w.partitionBy, ...w.orderBy.map((k) => k.expr), ...(w.agg ? aggExprs(w.agg) : [])];
}

/**
 * Marks on each scan the columns anything above reads, so rows decode only those (a NUMERIC or
 * JSONB column nobody asked for costs nothing). Conservative: unknown needs mean all columns.
 */
export function pruneColumns(plan: Plan, need: Need = null): Plan {
  switch (plan.kind) {
    case 'scan': {
      if (need === null || plan.withKey) return plan;
      // A vector scan measures each candidate's distance itself: its vector column is read too.
      const all = union(need, colsOf([plan.filter, ...(plan.access.kind === 'vector' ? [plan.access.distance] : [])]));
      if (all === null || all.size >= plan.table.columns.length) return plan;
      return { ...plan, needed: [...all].filter((c) => c < plan.table.columns.length).sort((a, b) => a - b) };
    }
    case 'values':
    case 'one_row':
    case 'function_scan':
    case 'rows_from':
    case 'worktable_scan':
      return plan;
    case 'filter':
      return { ...plan, input: pruneColumns(plan.input, union(need, colsOf([plan.predicate]))) };
    case 'project':
      return { ...plan, input: pruneColumns(plan.input, colsOf(plan.exprs)) };
    case 'join': {
      const lw = plan.left.columns.length;
      const rightKeys = plan.hash ? colsOf(plan.hash.rightKeys) : new Set<number>();
      const combined = union(
        union(need, colsOf([plan.on, plan.hash?.residual, ...(plan.hash?.leftKeys ?? [])])),
        rightKeys === null ? null : new Set([...rightKeys].map((c) => c + lw)),
      );
      // A LATERAL right side reads the whole left row (outer references columnsOf cannot see).
      const left = combined === null || plan.lateral !== undefined ? null : new Set([...combined].filter((c) => c < lw));
      const right = combined === null ? null : new Set([...combined].filter((c) => c >= lw).map((c) => c - lw));
      return { ...plan, left: pruneColumns(plan.left, left), right: pruneColumns(plan.right, right) };
    }
    case 'aggregate':
      return { ...plan, input: pruneColumns(plan.input, colsOf([...plan.groupBy, ...plan.aggs.flatMap(aggExprs)])) };
    case 'window': {
      const width = plan.input.columns.length;
      const own = need === null ? null : new Set([...need].filter((c) => c < width));
      return { ...plan, input: pruneColumns(plan.input, union(own, colsOf(plan.calls.flatMap(windowExprs)))) };
    }
    case 'sort':
      return { ...plan, input: pruneColumns(plan.input, union(need, colsOf(plan.keys.map((k) => k.expr)))) };
    case 'limit':
      return { ...plan, input: pruneColumns(plan.input, need) };
    case 'distinct':
      return { ...plan, input: pruneColumns(plan.input, plan.on === null ? null : union(need, colsOf(plan.on))) };
    case 'setop':
    case 'recursive_union':
      return { ...plan, left: pruneColumns(plan.left, null), right: pruneColumns(plan.right, null) };
  }
}
