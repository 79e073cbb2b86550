import type { IndexDef } from '../../core/catalog.js';
import { metricOf, type VectorMetric } from '../../projections/index.js';
import { exprText } from '../plan/expr-text.js';
import { isStable } from '../plan/expr-util.js';
import type { Expr, TopN } from '../plan/ir.js';
import type { Plan, ScanNode } from '../plan/nodes.js';

/** pgvector's distance operators and the index metric (opclass) that ranks by each. */
const OPERATOR_METRIC: Readonly<Record<string, VectorMetric>> = { '<->': 'l2', '<=>': 'cosine', '<#>': 'inner_product' };

/**
 * ORDER BY col <-> | <=> | <#> q LIMIT k over [project over] sort over [project over] a seq scan:
 * when an hnsw index on col has the operator's metric, the scan searches it and yields rows in
 * distance order, and the sort goes. A scan that already uses a btree range (a selective WHERE)
 * keeps it: an exact top-k over few rows beats a filtered graph search.
 */
export function vectorOrderedInput(plan: Plan, topN: TopN): Plan | null {
  if (plan.kind === 'project') {
    const inner = vectorOrderedInput(plan.input, topN);
    return inner ? { ...plan, input: inner } : null;
  }
  if (plan.kind !== 'sort' || plan.keys.length !== 1) return null;
  const key = plan.keys[0]!;
  if (key.descending || key.nullsFirst) return null;
  const project = plan.input.kind === 'project' ? plan.input : null;
  const below = project ? project.input : plan.input;
  const expr = project ? (key.expr.kind === 'column' ? project.exprs[key.expr.index] : undefined) : key.expr;
  if (!expr || below.kind !== 'scan' || below.access.kind !== 'seq' || below.withKey) return null;
  const access = vectorAccess(below, expr, topN);
  if (!access) return null;
  const scan: ScanNode = { ...below, access, est: { rows: Math.max(1, Math.min(below.est?.rows ?? 1, 10)), cost: 10 } };
  return project ? { ...project, input: scan } : scan;
}

function vectorAccess(scan: ScanNode, distance: Expr, topN: TopN): ScanNode['access'] | null {
  if (distance.kind !== 'call' || distance.args.length !== 2) return null;
  const metric = OPERATOR_METRIC[distance.fn.name];
  if (!metric) return null;
  const [a, b] = distance.args as [Expr, Expr];
  const [column, query] = a.kind === 'column' && isStable(b) ? [a, b] : b.kind === 'column' && isStable(a) ? [b, a] : [null, null];
  if (column === null || column.kind !== 'column' || query === null || column.type.name !== 'vector') return null;
  const columnId = scan.table.columns[column.index]?.id;
  const index = scan.table.indexes.find((i: IndexDef) => i.kind === 'hnsw' && i.columnIds[0] === columnId && metricOf(i) === metric);
  if (!index) return null;
  const orderText = exprText(distance, scan.table.columns.map((c) => c.name));
  return { kind: 'vector', index, distance, query, topN, reverse: false, orderText };
}
