import type { IndexDef } from '../../core/catalog.js';
import { metricOf, type VectorMetric } from '../../projections/index.js';
import { exprText } from '../plan/expr-text.js';
import { andAll, conjuncts, isStable } from '../plan/expr-util.js';
import type { Expr, KeyAccess, TopN } from '../plan/ir.js';
import type { Plan, ScanNode } from '../plan/nodes.js';
import type { OptimizerDeps } from './deps.js';

/** pgvector's distance operators and the index metric (opclass) that ranks by each. */
const OPERATOR_METRIC: Readonly<Record<string, VectorMetric>> = { '<->': 'l2', '<=>': 'cosine', '<#>': 'inner_product' };

/** k when LIMIT is not a constant (a parameter): the spec's top_k default. */
const K_UNKNOWN = 10;
/** Candidates a graph search reads at the least: pgvector's default hnsw.ef_search. */
const EF_TYPICAL = 40;

/**
 * Whether the hnsw index beats an exact top-k over a key range of `rangeRows` (estimated) rows of
 * `tableRows`: a filtered graph search reads about k / selectivity candidates (at least ef), the
 * exact scan reads every row of the range. A wrong guess costs little either way: a search whose
 * filter starves falls back to the exact scan of the same range (exec/ops/vector-scan.ts).
 */
function indexBeatsRange(rangeRows: number, tableRows: number, topN: TopN): boolean {
  const k = topN.limit.kind === 'const' && typeof topN.limit.value === 'number' ? topN.limit.value : K_UNKNOWN;
  const candidates = Math.max(EF_TYPICAL, (k * tableRows) / Math.max(1, rangeRows));
  return candidates < rangeRows;
}

/**
 * ORDER BY col <-> | <=> | <#> q LIMIT k over [project over] sort over [project over] a scan:
 * when an hnsw index on col has the operator's metric, the scan searches it and yields rows in
 * distance order, and the sort goes. A scan whose btree range is selective keeps it (an exact
 * top-k over few rows beats a filtered graph search); a wider one (e.g. `namespace = $1`, the
 * leading primary-key column of a vector-protocol index, often the whole table) goes back into
 * the filter, and is what the exact fallback scans.
 */
export function vectorOrderedInput(plan: Plan, topN: TopN, rowCount: OptimizerDeps['rowCount']): Plan | null {
  if (plan.kind === 'project') {
    const inner = vectorOrderedInput(plan.input, topN, rowCount);
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
  if (range !== null && !indexBeatsRange(below.est?.rows ?? 0, rowCount(below.table.id), topN)) return null;
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
  const orderText = exprText(distance, scan.table.columns.map((c) => c.name));
  return { kind: 'vector', index, distance, query, topN, reverse: false, orderText, exact };
}
