import { INT4, type AggCall, type Expr, type WindowCall } from '../plan/expr.js';
import { aggKey, exprKey, mapExpr, walkExpr } from '../plan/expr-util.js';
import type { OutputColumn, Plan } from '../plan/nodes.js';
import { invalid } from './context.js';
import { isGroupingCall } from './grouping-sets.js';

/** Aggregate calls found in expressions, de-duplicated. */
export function collectAggregates(exprs: readonly Expr[]): AggCall[] {
  const seen = new Map<string, AggCall>();
  for (const e of exprs) {
    walkExpr(e, (n) => {
      if (n.kind === 'agg' && !seen.has(aggKey(n.call))) seen.set(aggKey(n.call), n.call);
    });
  }
  return [...seen.values()];
}

export function hasAggregate(exprs: readonly Expr[]): boolean {
  return collectAggregates(exprs).length > 0;
}

/** The ordered-set aggregates with a direct argument: percentile_cont(fraction) WITHIN GROUP (ORDER BY x) is bound as (x, fraction). */
const DIRECT_ARGUMENT_AGGREGATES = new Set(['percentile_cont', 'percentile_disc']);

/**
 * Rewrites an expression over the FROM row into one over the Aggregate node's output
 * (group keys, then aggregate results, then GROUPING calls' values). A column outside both is
 * PostgreSQL's grouping error; columns from `keptFrom` on are left as they are.
 */
export function rewriteOverAggregate(
  expr: Expr,
  groupKeys: readonly string[],
  aggs: readonly AggCall[],
  names: (index: number) => string,
  groupingCalls: readonly string[] = [],
  keptFrom = Infinity,
): Expr {
  const aggIndex = new Map(aggs.map((a, i) => [aggKey(a), i]));
  return mapExpr(expr, (e) => {
    const g = groupKeys.indexOf(exprKey(e));
    if (g >= 0 && e.kind !== 'const') return { kind: 'column', type: e.type, index: g, name: names(g) };
    if (e.kind === 'agg') {
      // PostgreSQL evaluates an ordered-set aggregate's direct argument (the fraction) once per
      // group, outside the aggregate: like the select list, it may read only grouped columns. The
      // executor takes it from the rows stepped, which is right only for such a value.
      if (DIRECT_ARGUMENT_AGGREGATES.has(e.call.name) && e.call.args[1] !== undefined) rewriteOverAggregate(e.call.args[1], groupKeys, aggs, names);
      const i = aggIndex.get(aggKey(e.call))!;
      return { kind: 'column', type: e.type, index: groupKeys.length + i, name: e.call.name };
    }
    if (isGroupingCall(e)) {
      const i = groupingCalls.indexOf(exprKey(e));
      if (i < 0) throw invalid('arguments to GROUPING must be grouping expressions of the associated query level');
      return { kind: 'column', type: e.type, index: groupKeys.length + aggs.length + i, name: 'grouping' };
    }
    if (e.kind === 'column' && e.index >= keptFrom) return e; // a select-list function's value, crossed after grouping
    if (e.kind === 'column') {
      throw invalid(`column "${e.name}" must appear in the GROUP BY clause or be used in an aggregate function`, { column: e.name });
    }
    return undefined;
  });
}

/** The Aggregate node; `sets` and `grouping` as in its plan type (grouping-sets.ts). */
export function aggregateNode(
  input: Plan,
  groupBy: readonly Expr[],
  aggs: readonly AggCall[],
  groupNames: readonly string[],
  sets: readonly (readonly number[])[] | null = null,
  grouping: readonly (readonly number[])[] = [],
): Plan {
  const columns: OutputColumn[] = [
    ...groupBy.map((g, i) => ({ name: groupNames[i] ?? `group${i + 1}`, type: g.type, nullable: true })),
    ...aggs.map((a) => ({ name: a.name, type: a.agg.returnType, nullable: true })),
    ...grouping.map(() => ({ name: 'grouping', type: INT4, nullable: false })),
  ];
  if (sets === null && grouping.length === 0) return { kind: 'aggregate', input, groupBy, aggs, columns };
  // GROUPING with a plain GROUP BY is 0: one set of every key.
  return { kind: 'aggregate', input, groupBy, aggs, sets: sets ?? [groupBy.map((_g, i) => i)], grouping, columns };
}

/** Window calls found in expressions, de-duplicated by structure. */
export function collectWindows(exprs: readonly Expr[]): { calls: WindowCall[]; keys: string[]; nodes: Expr[] } {
  const keys: string[] = [];
  const calls: WindowCall[] = [];
  const nodes: Expr[] = [];
  for (const e of exprs) {
    walkExpr(e, (n) => {
      if (n.kind !== 'window') return;
      const key = exprKey(n);
      if (!keys.includes(key)) {
        keys.push(key);
        calls.push(n.call);
        nodes.push(n);
      }
    });
  }
  return { calls, keys, nodes };
}

/** Replaces window calls by the columns the Window node appends after its input's. */
export function rewriteOverWindow(expr: Expr, keys: readonly string[], inputWidth: number): Expr {
  return mapExpr(expr, (e) => {
    if (e.kind !== 'window') return undefined;
    const i = keys.indexOf(exprKey(e));
    return { kind: 'column', type: e.type, index: inputWidth + i, name: e.call.fn };
  });
}

export function windowNode(input: Plan, calls: readonly WindowCall[], types: readonly Expr[]): Plan {
  const columns: OutputColumn[] = [...input.columns, ...calls.map((c, i) => ({ name: c.fn, type: types[i]!.type, nullable: true }))];
  return { kind: 'window', input, calls, columns };
}
