import type { NodeStats } from '../exec/index.js';
import { exprText } from '../plan/expr-text.js';
import { conjuncts } from '../plan/expr-util.js';
import type { Plan, PlanKind } from '../plan/nodes.js';

/** The spec's plan object: one node of the tree, children in `plans`. */
export interface PlanNode {
  node_type: string;
  relation?: string;
  alias?: string;
  index_name?: string;
  index_cond?: string;
  /** An index scan in distance order (hnsw): the ORDER BY it serves, as pgvector's "Order By". */
  order_by?: string;
  join_type?: string;
  hash_cond?: string;
  join_filter?: string;
  filter?: string;
  sort_key?: string[];
  group_key?: string[];
  /** GROUPING SETS / ROLLUP / CUBE: one entry per hashed set (a "Hash Key" line each, as PostgreSQL prints them). */
  hash_keys?: string[];
  estimated_rows: number;
  estimated_cost: number;
  actual_rows: number | null;
  actual_time_ms: number | null;
  actual_loops?: number;
  plans: PlanNode[];
}

type Describer<K extends PlanKind> = (
  node: Extract<Plan, { kind: K }>,
  describe: (p: Plan) => PlanNode,
) => Omit<PlanNode, 'estimated_rows' | 'estimated_cost' | 'actual_rows' | 'actual_time_ms'>;

const names = (plan: Plan): string[] => plan.columns.map((c) => c.name);

const DESCRIBERS: { [K in PlanKind]: Describer<K> } = {
  scan: (node) => {
    const out: ReturnType<Describer<'scan'>> = { node_type: 'Seq Scan', relation: node.table.name, alias: node.alias, plans: [] };
    const cols = names(node);
    if (node.access.kind !== 'seq') {
      out.node_type = node.access.reverse ? 'Index Scan Backward' : 'Index Scan';
      out.index_name = node.access.index.name;
      if (node.access.kind === 'vector') out.order_by = node.access.orderText;
      else if (node.access.condText !== '') out.index_cond = node.access.condText;
    }
    if (node.filter)
      out.filter = conjuncts(node.filter)
        .map((c) => exprText(c, cols))
        .join(' AND ');
    return out;
  },
  values: () => ({ node_type: 'Values Scan', plans: [] }),
  one_row: () => ({ node_type: 'Result', plans: [] }),
  function_scan: (node) => ({ node_type: 'Function Scan', relation: node.fn, plans: [] }),
  rows_from: (node) => ({ node_type: 'Function Scan', relation: node.functions[0]!.fn, plans: [] }),
  filter: (node, d) => ({ ...d(node.input), filter: exprText(node.predicate, names(node.input)) }),
  project: (node, d) => d(node.input),
  join: (node, d) => {
    const cols = [...names(node.left), ...names(node.right)];
    const out: ReturnType<Describer<'join'>> = {
      node_type: node.hash ? 'Hash Join' : 'Nested Loop',
      join_type: node.joinType === 'cross' ? 'Inner' : node.joinType[0]!.toUpperCase() + node.joinType.slice(1),
      plans: [d(node.left), d(node.right)],
    };
    if (node.hash) {
      out.hash_cond = node.hash.leftKeys
        .map((k, i) => `(${exprText(k, names(node.left))} = ${exprText(node.hash!.rightKeys[i]!, names(node.right))})`)
        .join(' AND ');
      if (node.hash.residual) out.join_filter = exprText(node.hash.residual, cols);
    } else if (node.on) out.join_filter = exprText(node.on, cols);
    return out;
  },
  aggregate: (node, d) => {
    if (node.sets) return groupingSetsNode(node, d);
    return {
      node_type: node.groupBy.length > 0 ? 'HashAggregate' : 'Aggregate',
      ...(node.groupBy.length > 0 ? { group_key: node.groupBy.map((g) => exprText(g, names(node.input))) } : {}),
      plans: [d(node.input)],
    };
  },
  window: (node, d) => ({ node_type: 'WindowAgg', plans: [d(node.input)] }),
  sort: (node, d) => ({
    node_type: 'Sort',
    sort_key: node.keys.map(
      (k) =>
        `${exprText(k.expr, names(node.input))}${k.descending ? ' DESC' : ''}${k.nullsFirst !== k.descending ? (k.nullsFirst ? ' NULLS FIRST' : ' NULLS LAST') : ''}`,
    ),
    plans: [d(node.input)],
  }),
  limit: (node, d) => ({ node_type: 'Limit', plans: [d(node.input)] }),
  distinct: (node, d) => ({ node_type: node.on ? 'Unique' : 'HashAggregate', plans: [d(node.input)] }),
  setop: (node, d) => ({
    node_type: node.op === 'union' ? (node.all ? 'Append' : 'Union') : `HashSetOp ${node.op === 'intersect' ? 'Intersect' : 'Except'}${node.all ? ' All' : ''}`,
    plans: [d(node.left), d(node.right)],
  }),
  recursive_union: (node, d) => ({ node_type: 'Recursive Union', plans: [d(node.left), d(node.right)] }),
  worktable_scan: (node) => ({ node_type: 'WorkTable Scan', relation: node.name, plans: [] }),
};

/**
 * An Aggregate over grouping sets, worded as PostgreSQL's: a "Hash Key" per non-empty set (largest
 * first), "Group Key: ()" for the empty set; MixedAggregate when it has both, HashAggregate with
 * hashed sets only, Aggregate with the empty set only.
 */
function groupingSetsNode(node: Extract<Plan, { kind: 'aggregate' }>, d: (p: Plan) => PlanNode): ReturnType<Describer<'aggregate'>> {
  const sets = [...node.sets!].sort((a, b) => b.length - a.length);
  const hashed = sets.filter((s) => s.length > 0).map((s) => s.map((i) => exprText(node.groupBy[i]!, names(node.input))).join(', '));
  const empty = sets.length > hashed.length;
  return {
    node_type: hashed.length === 0 ? 'Aggregate' : empty ? 'MixedAggregate' : 'HashAggregate',
    ...(hashed.length > 0 ? { hash_keys: hashed } : {}),
    ...(empty ? { group_key: ['()'] } : {}),
    plans: [d(node.input)],
  };
}

/** The plan object tree of a physical plan (with actual values when `stats` came from ANALYZE). */
export function describePlan(plan: Plan, stats: Map<Plan, NodeStats> | null): PlanNode {
  const describe = (p: Plan): PlanNode => {
    const body = (DESCRIBERS[p.kind] as Describer<PlanKind>)(p as never, describe);
    if (p.kind === 'project' || p.kind === 'filter') {
      // Folded into the child's node: keep the child's numbers unless this node has its own.
      const own = stats?.get(p);
      const child = body as PlanNode;
      if (p.kind === 'filter') {
        child.estimated_rows = p.est?.rows ?? child.estimated_rows;
        if (own) child.actual_rows = own.rows;
      }
      return child;
    }
    const s = stats?.get(p);
    return {
      ...body,
      estimated_rows: p.est?.rows ?? 0,
      estimated_cost: p.est?.cost ?? 0,
      actual_rows: s ? s.rows : null,
      actual_time_ms: s ? Math.round(s.timeMs * 1000) / 1000 : null,
      ...(s ? { actual_loops: s.loops } : {}),
    };
  };
  return describe(plan);
}
