import { isPopulated } from '../../core/catalog.js';
import { SvcError } from '../../core/errors.js';
import type { FunctionScanNode, Plan, PlanKind, ScanNode } from '../plan/nodes.js';
import { childContext, type Batch, type ExecContext, type NodeStats } from './context.js';
import { filterOp, limitOp, oneRowOp, projectOp, valuesOp } from './ops/basic.js';
import { hashAggregateOp } from './ops/aggregate.js';
import { aggregateScanOp } from './ops/aggregate-scan.js';
import { groupingSetsOp } from './ops/grouping-sets.js';
import { distinctOnOp, distinctOp, setOp } from './ops/distinct.js';
import { hashJoinOp, lateralJoinOp, nestedLoopJoinOp } from './ops/join.js';
import { scanOp } from './ops/scan.js';
import { sortOp } from './ops/sort.js';
import { windowOp } from './ops/window.js';
import { generateSeriesOp, jsonbSetOp, jsonbToRecordOp, regexpSetOp, rowsFromOp, unnestOp } from './ops/function-scan.js';
import { recursiveUnionOp, worktableScanOp } from './ops/recursive-union.js';

type Builder<K extends PlanKind> = (node: Extract<Plan, { kind: K }>, ctx: ExecContext) => AsyncIterable<Batch>;

/** One builder per plan kind: a new kind without an operator is a compile error. */
const BUILDERS: { [K in PlanKind]: Builder<K> } = {
  scan: (node, ctx) => (isPopulated(node.table) ? scanOp(node, ctx) : notPopulated(node.table.name)),
  values: (node, ctx) => valuesOp(ctx, node.rows),
  one_row: () => oneRowOp(),
  function_scan: (node, ctx) => functionScan(node, ctx),
  rows_from: (node, ctx) =>
    rowsFromOp(
      ctx,
      node.functions.map((f) => run(f, ctx)),
      node.functions.map((f) => f.columns.length),
    ),
  filter: (node, ctx) => filterOp(run(node.input, ctx), ctx, node.predicate),
  project: (node, ctx) => projectOp(run(node.input, ctx), ctx, node.exprs),
  join: (node, ctx) =>
    node.lateral !== undefined
      ? lateralJoinOp(run(node.left, ctx), (row) => run(node.right, childContext(ctx, row)), ctx, node)
      : node.hash
        ? hashJoinOp(run(node.left, ctx), run(node.right, ctx), ctx, node)
        : nestedLoopJoinOp(run(node.left, ctx), run(node.right, ctx), ctx, node),
  aggregate: (node, ctx) =>
    (node.input.kind === 'scan' && !isPopulated(node.input.table) ? notPopulated(node.input.table.name) : null) ??
    (node.sets ? groupingSetsOp(run(node.input, ctx), ctx, node.groupBy, node.aggs, node.sets, node.grouping ?? []) : null) ??
    aggregateScanOp(node, ctx, (lookup) => hashAggregateOp(scanOp(node.input as ScanNode, ctx, lookup), ctx, node.groupBy, node.aggs)) ??
    hashAggregateOp(run(node.input, ctx), ctx, node.groupBy, node.aggs),
  window: (node, ctx) => windowOp(run(node.input, ctx), ctx, node.calls),
  sort: (node, ctx) => sortOp(run(node.input, ctx), ctx, node.keys, node.topN),
  limit: (node, ctx) => limitOp(run(node.input, ctx), ctx, node.limit, node.offset),
  distinct: (node, ctx) => (node.on ? distinctOnOp(run(node.input, ctx), ctx, node.on) : distinctOp(run(node.input, ctx), ctx, node.columns)),
  setop: (node, ctx) => setOp(run(node.left, ctx), run(node.right, ctx), ctx, node.op, node.all, node.columns),
  recursive_union: (node, ctx) => recursiveUnionOp(node, ctx),
  worktable_scan: (node, ctx) => worktableScanOp(ctx, node.id),
};

/** The operator of one set-returning function. */
function functionScan(node: FunctionScanNode, ctx: ExecContext): AsyncIterable<Batch> {
  switch (node.fn) {
    case 'unnest':
      return unnestOp(ctx, node.args[0]!, node.columns[0]!.type);
    case 'generate_series':
      return generateSeriesOp(ctx, node.args);
    case 'regexp_matches':
    case 'regexp_split_to_table':
      return regexpSetOp(ctx, node.fn, node.args);
    case 'jsonb_to_record':
    case 'jsonb_to_recordset':
      return jsonbToRecordOp(ctx, node.fn, node.args[0]!, node.columns);
    default:
      return jsonbSetOp(ctx, node.fn, node.args[0]!, node.record === true);
  }
}

/**
 * PostgreSQL's 55000 for reading a materialized view made or refreshed WITH NO DATA: raised when its
 * rows are read, not when a query naming it is bound (a view over it can be created; EXPLAIN works).
 */
// eslint-disable-next-line require-yield -- it only throws, when first read
async function* notPopulated(name: string): AsyncIterable<Batch> {
  throw new SvcError('INVALID_STATE', `materialized view "${name}" has not been populated`, {
    table: name,
    sqlstate: '55000',
    hint: 'Use the REFRESH MATERIALIZED VIEW command.',
  });
}

/** The operator tree of a plan (instrumented when EXPLAIN ANALYZE collects statistics). */
export function run(plan: Plan, ctx: ExecContext): AsyncIterable<Batch> {
  const build = BUILDERS[plan.kind] as Builder<PlanKind>;
  const iterable = build(plan as never, ctx);
  return ctx.stats ? instrument(plan, iterable, ctx.stats) : iterable;
}

async function* instrument(plan: Plan, input: AsyncIterable<Batch>, stats: Map<Plan, NodeStats>): AsyncIterable<Batch> {
  let entry = stats.get(plan);
  if (!entry) stats.set(plan, (entry = { rows: 0, timeMs: 0, loops: 0 }));
  entry.loops += 1;
  const iterator = input[Symbol.asyncIterator]();
  try {
    for (;;) {
      const started = performance.now();
      const next = await iterator.next();
      entry.timeMs += performance.now() - started;
      if (next.done) return;
      entry.rows += next.value.length;
      yield next.value;
    }
  } finally {
    await iterator.return?.();
  }
}
