import { SvcError } from '../../../core/errors.js';
import type { QValue } from '../../types/contract.js';
import type { WindowCall } from '../../plan/expr.js';
import { compile } from '../compile.js';
import { checkContinue, type Batch, type ExecContext, type Row } from '../context.js';
import { batches, materialize, rowHasher } from './materialize.js';
import { frameSpans, type FrameSpans, type RangeKeys } from './window-frame.js';
import { decorate, keyComparator } from './sort.js';

/** Window functions: each call adds one column, computed per partition in its ORDER BY. */
export async function* windowOp(input: AsyncIterable<Batch>, ctx: ExecContext, calls: readonly WindowCall[]): AsyncIterable<Batch> {
  const rows = await materialize(input, ctx, 'window');
  const width = rows[0]?.length ?? 0;
  const results = await Promise.all(calls.map((call) => computeCall(rows, call, ctx)));
  const out = rows.map((row, r) => {
    const next = row.slice(0, width);
    for (const values of results) next.push(values[r]!);
    return next;
  });
  yield* batches(out);
}

async function computeCall(rows: readonly Row[], call: WindowCall, ctx: ExecContext): Promise<QValue[]> {
  const result = new Array<QValue>(rows.length).fill(null);
  const partKeys = call.partitionBy.map((p) => compile(p, ctx).eval);
  const hash = rowHasher(
    ctx,
    call.partitionBy.map((p) => p.type),
  );
  const partitions = new Map<string, number[]>();
  rows.forEach((row, i) => {
    const key = call.partitionBy.length === 0 ? '' : hash(partKeys.map((f) => f(row)));
    const list = partitions.get(key);
    if (list) list.push(i);
    else partitions.set(key, [i]);
  });
  const cmp = keyComparator(ctx, call.orderBy);
  for (const indexes of partitions.values()) {
    const decorated = await decorate(
      indexes.map((i) => rows[i]!),
      call.orderBy,
      ctx,
    );
    const order = indexes.map((rowIndex, j) => ({ rowIndex, key: decorated[j]!.key }));
    order.sort((a, b) => cmp(a.key, b.key));
    computePartition(order, rows, call, ctx, cmp, result);
  }
  return result;
}

type Sorted = { rowIndex: number; key: QValue[] }[];

function peerEnds(order: Sorted, cmp: (a: QValue[], b: QValue[]) => number): number[] {
  // For each position, the index one past the last peer (rows equal in ORDER BY).
  const ends = new Array<number>(order.length);
  let start = 0;
  for (let i = 1; i <= order.length; i++) {
    if (i === order.length || cmp(order[i - 1]!.key, order[i]!.key) !== 0) {
      for (let j = start; j < i; j++) ends[j] = i;
      start = i;
    }
  }
  return ends;
}

function computePartition(
  order: Sorted,
  rows: readonly Row[],
  call: WindowCall,
  ctx: ExecContext,
  cmp: (a: QValue[], b: QValue[]) => number,
  out: QValue[],
): void {
  const args = call.args.map((a) => compile(a, ctx).eval);
  const ends = peerEnds(order, cmp);
  const spans = (): FrameSpans => frameSpans(call.frame, ends, rangeKeys(order, rows, call, ctx));
  const within = frameRows(call.frame, ends);
  const n = order.length;
  const set = (i: number, v: QValue): void => {
    out[order[i]!.rowIndex] = v;
  };
  switch (call.fn) {
    case 'row_number':
      for (let i = 0; i < n; i++) set(i, BigInt(i + 1));
      return;
    case 'rank':
    case 'dense_rank':
    case 'percent_rank':
    case 'cume_dist': {
      let rank = 1;
      let dense = 1;
      for (let i = 0; i < n; i++) {
        if (i > 0 && ends[i - 1] === i) {
          rank = i + 1;
          dense += 1;
        }
        if (call.fn === 'rank') set(i, BigInt(rank));
        else if (call.fn === 'dense_rank') set(i, BigInt(dense));
        else if (call.fn === 'percent_rank') set(i, n > 1 ? (rank - 1) / (n - 1) : 0);
        else set(i, ends[i]! / n);
      }
      return;
    }
    case 'ntile': {
      const buckets = Number(args[0]!(rows[order[0]!.rowIndex]!));
      const base = Math.floor(n / buckets);
      const extra = n % buckets;
      let i = 0;
      for (let b = 1; b <= buckets && i < n; b++) {
        const size = base + (b <= extra ? 1 : 0);
        for (let j = 0; j < size && i < n; j++, i++) set(i, b);
      }
      return;
    }
    case 'lag':
    case 'lead': {
      for (let i = 0; i < n; i++) {
        const row = rows[order[i]!.rowIndex]!;
        const offset = Number(args[1]!(row));
        const j = call.fn === 'lag' ? i - offset : i + offset;
        set(i, j >= 0 && j < n ? args[0]!(rows[order[j]!.rowIndex]!) : args[2]!(row));
      }
      return;
    }
    case 'first_value':
    case 'last_value':
    case 'nth_value': {
      const span = spans();
      for (let i = 0; i < n; i++) {
        const [start, end] = span(i);
        const frame = call.frame.exclude ? within(i, [start, end]) : null;
        const size = frame ? frame.length : Math.max(0, end - start);
        const nth = call.fn === 'first_value' ? 1 : call.fn === 'last_value' ? size : args[1]!(rows[order[i]!.rowIndex]!);
        if (nth !== null && Number(nth) <= 0 && call.fn === 'nth_value') {
          throw new SvcError('INVALID_QUERY', 'argument of nth_value must be greater than zero', {});
        }
        const k = Number(nth) - 1;
        const j = nth === null || k < 0 || k >= size ? undefined : frame ? frame[k] : start + k;
        set(i, j === undefined ? null : args[0]!(rows[order[j]!.rowIndex]!));
      }
      return;
    }
    case 'aggregate':
      return call.frame.exclude
        ? aggregateExcluding(order, rows, call, ctx, framesOf(spans(), within), set)
        : aggregateOverFrame(order, rows, call, ctx, spans(), set);
  }
}

/**
 * An aggregate over each row's frame. While the frame keeps its start and only grows (the default
 * frame, ROWS/RANGE UNBOUNDED PRECEDING, a whole partition) the state steps on; a frame whose
 * start moves (n PRECEDING, CURRENT ROW AND ...) is aggregated afresh, since states cannot remove
 * rows: up to partition size x frame size steps.
 */
function aggregateOverFrame(
  order: Sorted,
  rows: readonly Row[],
  call: WindowCall,
  ctx: ExecContext,
  span: FrameSpans,
  set: (i: number, v: QValue) => void,
): void {
  const agg = call.agg!;
  const args = agg.args.map((a) => compile(a, ctx).eval);
  const filter = agg.filter ? compile(agg.filter, ctx).eval : null;
  const distinct = agg.distinct ? rowHasher(ctx, agg.argTypes) : null;
  let state = agg.agg.newState();
  const seen = new Set<string>();
  const stepRow = (i: number): void => {
    const row = rows[order[i]!.rowIndex]!;
    if (filter && filter(row) !== true) return;
    const values = args.map((f) => f(row));
    if (agg.agg.strict && values.some((v) => v === null)) return;
    if (distinct) {
      const key = distinct(values);
      if (seen.has(key)) return;
      seen.add(key);
    }
    state.step(values);
  };
  const n = order.length;
  let from = 0;
  let stepped = 0;
  let last: { start: number; end: number; value: QValue } | null = null;
  for (let i = 0; i < n; i++) {
    const [start, end] = span(i);
    if (last && last.start === start && last.end === end) {
      set(i, last.value);
      continue;
    }
    if (start !== from || end < stepped) {
      checkContinue(ctx);
      state = agg.agg.newState();
      seen.clear();
      from = start;
      stepped = start;
    }
    while (stepped < end) stepRow(stepped++);
    last = { start, end, value: state.result() };
    set(i, last.value);
  }
}

/** The key a RANGE offset frame measures (its one ORDER BY expression) at each sorted position, or null. */
function rangeKeys(order: Sorted, rows: readonly Row[], call: WindowCall, ctx: ExecContext): RangeKeys | null {
  const { mode, start, end } = call.frame;
  if (mode !== 'range' || ![start, end].some((b) => b.kind === 'preceding' || b.kind === 'following')) return null;
  const key = compile(call.orderBy[0]!.expr, ctx).eval;
  return { values: order.map((o) => key(rows[o.rowIndex]!)), descending: call.orderBy[0]!.descending };
}

/** The positions of a frame [start, end) left after its EXCLUDE clause (the current row, its peer group, or its peers). */
function frameRows(frame: WindowCall['frame'], ends: readonly number[]): (i: number, span: readonly [number, number]) => number[] {
  const peerStart = (i: number): number => {
    let s = i;
    while (s > 0 && ends[s - 1] === ends[i]) s--;
    return s;
  };
  return (i, [start, end]) => {
    const out: number[] = [];
    const [from, to] = frame.exclude === 'current_row' ? [i, i + 1] : frame.exclude ? [peerStart(i), ends[i]!] : [0, 0];
    for (let j = start; j < end; j++) if (j < from || j >= to || (frame.exclude === 'ties' && j === i)) out.push(j);
    return out;
  };
}

function framesOf(span: FrameSpans, within: (i: number, span: readonly [number, number]) => number[]): (i: number) => number[] {
  return (i) => within(i, span(i));
}

/** An aggregate over frames with EXCLUDE: each row's frame is aggregated afresh (they are not contiguous). */
function aggregateExcluding(
  order: Sorted,
  rows: readonly Row[],
  call: WindowCall,
  ctx: ExecContext,
  frameOf: (i: number) => number[],
  set: (i: number, v: QValue) => void,
): void {
  const agg = call.agg!;
  const args = agg.args.map((a) => compile(a, ctx).eval);
  const filter = agg.filter ? compile(agg.filter, ctx).eval : null;
  const distinct = agg.distinct ? rowHasher(ctx, agg.argTypes) : null;
  for (let i = 0; i < order.length; i++) {
    checkContinue(ctx);
    const state = agg.agg.newState();
    const seen = new Set<string>();
    for (const j of frameOf(i)) {
      const row = rows[order[j]!.rowIndex]!;
      if (filter && filter(row) !== true) continue;
      const values = args.map((f) => f(row));
      if (agg.agg.strict && values.some((v) => v === null)) continue;
      if (distinct) {
        const key = distinct(values);
        if (seen.has(key)) continue;
        seen.add(key);
      }
      state.step(values);
    }
    set(i, state.result());
  }
}
