import type { AggregateState, QValue } from '../../types/contract.js';
import type { AggCall, Expr, Plan, ScanNode } from '../../plan/nodes.js';
import { conjuncts, someExpr } from '../../plan/expr-util.js';
import { compile, type Evaluator } from '../compile.js';
import { checkContinue, shouldYield, waitWithin, yieldNow, type Batch, type ExecContext, type Row } from '../context.js';
import type { Chunk, TableRows } from '../table-rows.js';
import { narrow, rangeOf, rangeStats, selectWhere, type CompareOp, type NumberTest, type Range } from './column-kernels.js';
import { cacheLookup, type CacheLookup } from './scan.js';

type AggregateNode = Extract<Plan, { kind: 'aggregate' }>;

/** Column types whose values are JS numbers that are never NaN and compare with `<` (Chunk.numbers). */
const NUMBER_COLUMNS = new Set(['int2', 'int4', 'date']);

/** One conjunct of a WHERE a chunk's number column answers: `column op value`. */
interface ColumnTest {
  readonly column: number;
  readonly op: CompareOp;
  readonly value: Expr;
}

/** What a plan's shape allows, worked out once per plan node. */
interface Shape {
  readonly scan: ScanNode;
  /** The WHERE as tests on number columns (all must hold), or null: the compiled predicate, row by row. */
  readonly tests: readonly ColumnTest[] | null;
  /** Per aggregate: the number column it reads when it is count(col), min(col) or max(col) of one; else -1. */
  readonly columnOf: readonly number[];
}

const shapes = new WeakMap<AggregateNode, Shape | null>();

/**
 * An aggregate without GROUP BY straight over a whole-table scan, answered from the scan cache's
 * chunks when it holds the table: one loop per chunk over its rows (or its number columns), no
 * batches, generators or filter operator between the rows and the aggregates. Gives the same rows
 * as the general path (hashAggregateOp over scanOp), which runs whenever the table is not cached.
 * null: the plan is not of that shape.
 */
export function aggregateScanOp(
  node: AggregateNode,
  ctx: ExecContext,
  general: (lookup: CacheLookup | null) => AsyncIterable<Batch>,
): AsyncIterable<Batch> | null {
  if (ctx.scanCache === null || ctx.stats !== null) return null;
  let shape = shapes.get(node);
  if (shape === undefined) shapes.set(node, (shape = shapeOf(node)));
  return shape === null ? null : cachedAggregate(node, shape, ctx, general);
}

function shapeOf(node: AggregateNode): Shape | null {
  const scan = node.input;
  if (node.groupBy.length > 0 || scan.kind !== 'scan' || scan.access.kind !== 'seq' || scan.withKey) return null;
  if (!node.aggs.every((a) => !a.distinct && a.filter === null && a.orderBy.length === 0 && a.args.every(plainExpr))) return null;
  if (scan.filter !== null && !plainExpr(scan.filter)) return null;
  return { scan, tests: scan.filter === null ? [] : columnTests(scan.filter), columnOf: node.aggs.map(numberColumnOf) };
}

async function* cachedAggregate(
  node: AggregateNode,
  shape: Shape,
  ctx: ExecContext,
  general: (lookup: CacheLookup | null) => AsyncIterable<Batch>,
): AsyncIterable<Batch> {
  const lookup = await cachedRows(shape.scan, ctx);
  if (lookup?.rows == null) {
    try {
      yield* general(lookup);
    } finally {
      if (lookup?.fill) ctx.scanCache!.abandonFill(lookup.fill); // never begun or stopped early (a no-op once filled)
    }
    return;
  }
  checkContinue(ctx);
  ctx.scanCache!.counts.aggregates += 1;
  yield [aggregateChunks(lookup.rows, node.aggs, shape, ctx) ?? (await aggregateYielding(lookup.rows, node.aggs, shape, ctx))];
}

/**
 * The scan cache's lookup for the scan. When the table is not cached, either another aggregate is
 * filling the entry, and this one waits for that fill (concurrent aggregates read the table once,
 * not each), or this one begins the fill (in the same turn as the check, so the next one sees it):
 * a steady one, as this aggregate reads every row and waits on nothing else.
 */
async function cachedRows(scan: ScanNode, ctx: ExecContext): Promise<CacheLookup | null> {
  const cache = ctx.scanCache!;
  const lookup = await cacheLookup(scan, ctx);
  if (lookup === null || lookup.rows !== null) return lookup;
  const filling = cache.fillDone(scan.table, lookup.version);
  if (filling === null) return { ...lookup, fill: cache.admits(scan.est?.rows ?? 0) ? cache.beginFill(scan.table, lookup.version, true) : null };
  await waitWithin(filling, ctx);
  return { version: lookup.version, rows: cache.get(scan.table, lookup.version) };
}

/** The aggregates' row over a cached table, or null when it would hold the event loop too long (then aggregateYielding). */
function aggregateChunks(rows: TableRows, calls: readonly AggCall[], shape: Shape, ctx: ExecContext): Row | null {
  if (rows.count > YIELD_CHECK_ROWS) return null;
  const run = new AggregateRun(calls, shape, ctx);
  for (const chunk of rows.chunkList) run.add(chunk);
  return run.result();
}

/** As aggregateChunks, letting the event loop run every few ms (a large cached table). */
async function aggregateYielding(rows: TableRows, calls: readonly AggCall[], shape: Shape, ctx: ExecContext): Promise<Row> {
  const run = new AggregateRun(calls, shape, ctx);
  for (const chunk of rows.chunkList) {
    if (shouldYield(ctx)) await yieldNow(ctx);
    checkContinue(ctx);
    run.add(chunk);
  }
  return run.result();
}

/** Tables up to this many rows are aggregated without looking at the clock (well under a millisecond). */
const YIELD_CHECK_ROWS = 50_000;

/** The aggregates of one execution: chunks in, one row out. */
class AggregateRun {
  private readonly states: AggregateState[];
  /** Rows the WHERE kept (count(*)), and per count(col)/min/max of a number column: its count, or its best value so far. */
  private readonly counts: number[];
  /** min/max of a number column: the best value so far (meaningful once its count is above 0). */
  private readonly best: number[];
  private readonly args: (Evaluator[] | null)[];
  private readonly predicate: Evaluator | null;
  /** The tests with their constants, evaluated at the first row (as the general path would: never over an empty table). */
  private tests: NumberTest[] | null = null;
  /** false: some test compares with NULL, no row qualifies. */
  private anyRow = true;
  /** The tests as one range of one column that every aggregate reads (or counts), or null. */
  private range: Range | null = null;
  /** rangeStats' answer for one chunk: [count, min, max]. */
  private readonly stats = new Float64Array(3);
  private selected = new Uint32Array(64);
  private readonly scratch: QValue[] = [];

  constructor(
    private readonly calls: readonly AggCall[],
    private readonly shape: Shape,
    private readonly ctx: ExecContext,
  ) {
    this.states = calls.map((c) => c.agg.newState());
    this.counts = calls.map(() => 0);
    this.best = calls.map((c) => (c.agg.name === 'min' ? Infinity : -Infinity));
    this.args = calls.map((c, i) => (c.star || shape.columnOf[i]! >= 0 ? null : c.args.map((a) => compile(a, ctx).eval)));
    const filter = shape.scan.filter;
    this.predicate = shape.tests === null && filter !== null ? compile(filter, ctx).eval : null;
  }

  add(chunk: Chunk): void {
    if (chunk.count === 0) return;
    if (this.tests === null && this.shape.tests !== null) this.evaluateTests(this.shape.tests);
    if (!this.anyRow) return;
    if (this.range !== null) return this.addRange(chunk, this.range);
    // The chunk's rows, made once here when the WHERE or an aggregate reads them as rows.
    const rows = this.predicate !== null || this.args.some((x) => x !== null) ? chunk.rows() : null;
    const n = this.select(chunk, rows);
    if (n === 0) return;
    // Every row kept: `selected` is 0..n-1, so loops read positions directly.
    const all = n === chunk.count;
    for (let a = 0; a < this.calls.length; a++) {
      const column = this.shape.columnOf[a]!;
      if (this.calls[a]!.star) this.counts[a]! += n;
      else if (column >= 0) this.numberAggregate(a, chunk.numbers(column), n, all);
    }
    if (rows !== null) this.stepRows(rows, n, all);
  }

  private evaluateTests(tests: readonly ColumnTest[]): void {
    const values = tests.map((t) => compile(t.value, this.ctx).eval([]));
    this.anyRow = values.every((v) => v !== null);
    this.tests = tests.map((t, i) => ({ column: t.column, op: t.op, value: values[i] as number }));
    // One range when every aggregate is count(*) or count/min/max of the tested column.
    const range = this.anyRow ? rangeOf(this.tests) : null;
    this.range = range !== null && this.calls.every((c, a) => c.star || this.shape.columnOf[a] === range.column) ? range : null;
  }

  /** One chunk through rangeStats: every aggregate is count(*) or count/min/max of the tested column. */
  private addRange(chunk: Chunk, range: Range): void {
    const stats = this.stats;
    rangeStats(chunk.numbers(range.column), range.lo, range.hi, stats);
    const n = stats[0]!;
    if (n === 0) return;
    for (let a = 0; a < this.calls.length; a++) {
      this.counts[a]! += n;
      const name = this.calls[a]!.agg.name;
      if (name === 'max') this.best[a] = Math.max(this.best[a]!, stats[2]!);
      else if (name === 'min') this.best[a] = Math.min(this.best[a]!, stats[1]!);
    }
  }

  /** Row positions of the chunk the WHERE keeps, into this.selected; returns how many. `rows`: the chunk's rows when the WHERE is a predicate. */
  private select(chunk: Chunk, rows: readonly Row[] | null): number {
    const length = chunk.count;
    if (this.selected.length < length) this.selected = new Uint32Array(Math.max(length, this.selected.length * 2));
    const sel = this.selected;
    if (this.predicate !== null) {
      const test = this.predicate;
      let n = 0;
      for (let i = 0; i < length; i++) if (test(rows![i]!) === true) sel[n++] = i;
      return n;
    }
    const tests = this.tests!;
    if (tests.length === 0) return length;
    let n = length;
    for (let t = 0; t < tests.length; t++) {
      const { column, op, value } = tests[t]!;
      n = t === 0 ? selectWhere(chunk.numbers(column), op, value, sel, length) : narrow(chunk.numbers(column), op, value, sel, n);
    }
    return n;
  }

  /** count(col), min(col) or max(col) over a number column: NaN (NULL) skipped. */
  private numberAggregate(a: number, values: Float64Array, n: number, all: boolean): void {
    const sel = this.selected;
    const name = this.calls[a]!.agg.name;
    let count = 0;
    let best = this.best[a]!;
    for (let k = 0; k < n; k++) {
      const v = values[all ? k : sel[k]!]!;
      if (v !== v) continue; // NULL
      count++;
      if (name === 'max' ? v > best : v < best) best = v;
    }
    this.counts[a]! += count;
    this.best[a] = best;
  }

  /** The other aggregates, row by row in key order (as the general path steps them). */
  private stepRows(rows: readonly Row[], n: number, all: boolean): void {
    const sel = this.selected;
    const args = this.args;
    if (args.every((x) => x === null)) return;
    const scratch = this.scratch;
    for (let k = 0; k < n; k++) {
      const row = rows[all ? k : sel[k]!]!;
      for (let a = 0; a < args.length; a++) {
        const evals = args[a];
        if (evals === null || evals === undefined) continue;
        const agg = this.calls[a]!.agg;
        scratch.length = evals.length;
        let skip = false;
        for (let j = 0; j < evals.length; j++) {
          const v = evals[j]!(row);
          if (v === null && agg.strict) skip = true;
          scratch[j] = v;
        }
        if (!skip) this.states[a]!.step(scratch);
      }
    }
  }

  result(): Row {
    return this.calls.map((call, a) => {
      if (call.star || (this.shape.columnOf[a]! >= 0 && call.agg.name === 'count')) return BigInt(this.counts[a]!);
      // min/max: the best value through the aggregate's own state (its result type; NULL over no rows).
      if (this.shape.columnOf[a]! >= 0 && this.counts[a]! > 0) this.states[a]!.step([this.best[a]!]);
      return this.states[a]!.result();
    });
  }
}

/** No subquery (nor an aggregate or window call left over): evaluable over cached rows as they are. */
function plainExpr(expr: Expr): boolean {
  return !someExpr(expr, (e) => e.kind === 'subquery' || e.kind === 'agg' || e.kind === 'window');
}

const FLIPPED = { '=': '=', '<>': '<>', '!=': '<>', '<': '>', '<=': '>=', '>': '<', '>=': '<=' } as const;
type Op = keyof typeof FLIPPED;

/** The WHERE as an AND of `number column op constant` tests, or null when any part is something else. */
function columnTests(filter: Expr): ColumnTest[] | null {
  const out: ColumnTest[] = [];
  for (const c of conjuncts(filter)) {
    if (c.kind !== 'call' || c.args.length !== 2 || !c.fn.strict || !(c.fn.name in FLIPPED)) return null;
    const [t0, t1] = c.fn.argTypes;
    if (!t0 || !t1 || t0.name !== t1.name || !NUMBER_COLUMNS.has(t0.name)) return null;
    const [left, right] = c.args as [Expr, Expr];
    const op = c.fn.name as Op;
    if (left.kind === 'column' && constant(right)) out.push({ column: left.index, op: op === '!=' ? '<>' : op, value: right });
    else if (right.kind === 'column' && constant(left)) out.push({ column: right.index, op: FLIPPED[op], value: left });
    else return null;
  }
  return out;
}

/** A value fixed for the execution: a literal or a parameter (possibly cast). */
function constant(expr: Expr): boolean {
  return expr.kind === 'const' || expr.kind === 'param' || (expr.kind === 'cast' && constant(expr.arg));
}

/** The number column count(col), min(col) or max(col) reads, else -1. */
function numberColumnOf(call: AggCall): number {
  const arg = call.args[0];
  if (call.star || call.args.length !== 1 || arg?.kind !== 'column' || !NUMBER_COLUMNS.has(arg.type.name)) return -1;
  return call.agg.name === 'count' || call.agg.name === 'min' || call.agg.name === 'max' ? arg.index : -1;
}
