import type { IndexDef } from '../../core/catalog.js';
import { metricOf, type VectorMetric } from '../../projections/index.js';
import { exprText } from '../plan/expr-text.js';
import { andAll, conjuncts, isStable } from '../plan/expr-util.js';
import type { Expr, KeyAccess, TopN } from '../plan/ir.js';
import type { Plan, ScanNode } from '../plan/nodes.js';

/** pgvector's distance operators and the index metric (opclass) that ranks by each. */
const OPERATOR_METRIC: Readonly<Record<string, VectorMetric>> = { '<->': 'l2', '<=>': 'cosine', '<#>': 'inner_product' };

/** k when LIMIT is not a constant (a parameter): the spec's top_k default. */
const K_UNKNOWN = 10;

/**
 * Whether a key range is small enough to rank exactly: estimated at most 2k rows (a few ids, a
 * unique key), about what one graph search reads. Anything wider goes through the index, with the
 * range as its filter: range estimates are guesses (`namespace = $1` is 5% of the table to the
 * planner, often 100% in truth), and the index scan corrects a wrong one at run time, switching to
 * an exact scan of the range once its filter shows the range is small (exec/ops/vector-scan.ts).
 */
function rangeIsTiny(rangeRows: number, topN: TopN): boolean {
  const k = topN.limit.kind === 'const' && typeof topN.limit.value === 'number' ? topN.limit.value : K_UNKNOWN;
  return rangeRows <= 2 * k;
}

/**
 * ORDER BY col <-> | <=> | <#> q LIMIT k over [project over] sort over [project over] a scan:
 * when an hnsw index on col has the operator's metric, the scan searches it and yields rows in
 * distance order, and the sort goes. A scan whose btree range is tiny keeps it; a wider one (e.g.
 * `namespace = $1`, the leading primary-key column of a vector-protocol index) goes back into the
 * filter, and is what the exact fallback scans.
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
  if (!expr || below.kind !== 'scan' || below.access.kind === 'vector' || below.withKey) return null;
  const range = below.access.kind === 'seq' ? null : below.access;
  if (range !== null && rangeIsTiny(below.est?.rows ?? 0, topN)) return null;
  const access = vectorAccess(below, expr, topN, range);
  if (!access) return null;
  const filter = range === null ? below.filter : andAll([...(range.consumed ?? []), ...conjuncts(below.filter)]);
  const scan: ScanNode = { ...below, filter, access, est: { rows: Math.max(1, Math.min(below.est?.rows ?? 1, 10)), cost: 10 } };
  return project ? { ...project, input: scan } : scan;
}

function vectorAccess(scan: ScanNode, distance: Expr, topN: TopN, exact: KeyAccess | null): ScanNode['access'] | null {
  if (distance.kind !== 'call' || distance.args.length !== 2) return null;
  const metric = OPERATOR_METRIC[distance.fn.name];
  if (!metric) return null;
  const [a, b] = distance.args as [Expr, Expr];
  const [column, query] = a.kind === 'column' && isStable(b) ? [a, b] : b.kind === 'column' && isStable(a) ? [b, a] : [null, null];
  if (column === null || column.kind !== 'column' || query === null || column.type.name !== 'vector') return null;
  const columnId = scan.table.columns[column.index]?.id;
  const index = scan.table.indexes.find((i: IndexDef) => i.kind === 'hnsw' && i.columnIds[0] === columnId && metricOf(i) === metric);
  if (!index) return null;
  const orderText = exprText(
    distance,
    scan.table.columns.map((c) => c.name),
  );
  return { kind: 'vector', index, distance, query, topN, reverse: false, orderText, exact };
}
