import type { AggregateState, QValue } from '../../types/contract.js';
import type { AggCall, Expr } from '../../plan/expr.js';
import { compile, type Evaluator } from '../compile.js';
import { checkContinue, limitExceeded, type Batch, type ExecContext, type Row } from '../context.js';
import { needsPrepare, prepare } from '../subquery.js';
import { batches, rowHasher, valueKeyer } from './materialize.js';
import { keyComparator } from './sort.js';

export interface AggRuntime {
  readonly call: AggCall;
  readonly args: Evaluator[];
  /** Reused argument array for aggregates that only step (states never keep the array). */
  readonly scratch: QValue[];
  /** No FILTER, DISTINCT or ORDER BY: each row is one step() call. */
  readonly plain: boolean;
  readonly filter: Evaluator | null;
  readonly order: Evaluator[];
  readonly hashArgs: ((values: readonly QValue[]) => string) | null;
}

export interface Group {
  readonly keys: QValue[];
  readonly states: AggregateState[];
  readonly seen: (Set<string> | null)[];
  /** Aggregates with ORDER BY: buffered [order keys, args] until the end. */
  readonly buffered: ({ key: QValue[]; args: QValue[] }[] | null)[];
}

export function runtime(call: AggCall, ctx: ExecContext): AggRuntime {
  return {
    call,
    args: call.args.map((a) => compile(a, ctx).eval),
    scratch: call.args.map(() => null),
    plain: !call.filter && !call.distinct && call.orderBy.length === 0,
    filter: call.filter ? compile(call.filter, ctx).eval : null,
    order: call.orderBy.map((k) => compile(k.expr, ctx).eval),
    hashArgs: call.distinct ? rowHasher(ctx, call.argTypes) : null,
  };
}

export function newGroup(keys: QValue[], aggs: readonly AggRuntime[]): Group {
  return {
    keys,
    states: aggs.map((a) => a.call.agg.newState()),
    seen: aggs.map((a) => (a.hashArgs ? new Set<string>() : null)),
    buffered: aggs.map((a) => (a.order.length > 0 ? [] : null)),
  };
}

export function step(group: Group, aggs: readonly AggRuntime[], row: Row): void {
  for (let i = 0; i < aggs.length; i++) {
    const a = aggs[i]!;
    if (a.plain) {
      const args = a.scratch;
      let skip = false;
      for (let j = 0; j < args.length; j++) {
        const v = a.args[j]!(row);
        if (v === null && a.call.agg.strict) skip = true;
        args[j] = v;
      }
      if (!skip) group.states[i]!.step(args);
      continue;
    }
    if (a.filter && a.filter(row) !== true) continue;
    const args = a.args.map((f) => f(row));
    if (a.call.agg.strict && args.some((v) => v === null)) continue;
    const seen = group.seen[i];
    if (seen) {
      const key = a.hashArgs!(args);
      if (seen.has(key)) continue;
      seen.add(key);
    }
    const buffer = group.buffered[i];
    if (buffer) buffer.push({ key: a.order.map((f) => f(row)), args });
    else group.states[i]!.step(args);
  }
}

export function finish(group: Group, aggs: readonly AggRuntime[], ctx: ExecContext): Row {
  const values = aggs.map((a, i) => {
    const buffer = group.buffered[i];
    if (buffer) {
      const cmp = keyComparator(ctx, a.call.orderBy);
      buffer.sort((x, y) => cmp(x.key, y.key));
      for (const b of buffer) group.states[i]!.step(b.args);
    }
    return group.states[i]!.result();
  });
  return [...group.keys, ...values];
}

/** GROUP BY with aggregates: one hash table of groups (no GROUP BY: exactly one group). */
export async function* hashAggregateOp(
  input: AsyncIterable<Batch>,
  ctx: ExecContext,
  groupBy: readonly Expr[],
  calls: readonly AggCall[],
): AsyncIterable<Batch> {
  const keyEvals = groupBy.map((g) => compile(g, ctx));
  const slow = needsPrepare(keyEvals);
  const hash = rowHasher(
    ctx,
    groupBy.map((g) => g.type),
  );
  const aggs = calls.map((c) => runtime(c, ctx));
  const groups = new Map<string, Group>();
  if (groupBy.length === 1 && !slow) {
    yield* batches(await groupBySingleKey(input, ctx, keyEvals[0]!.eval, valueKeyer(ctx, groupBy[0]!.type), aggs));
    return;
  }
  if (groupBy.length === 0) {
    yield [await oneGroup(input, ctx, aggs)];
    return;
  }
  for await (const batch of input) {
    checkContinue(ctx);
    for (const row of batch) {
      if (slow) await prepare(keyEvals, row, ctx);
      const keys = keyEvals.map((k) => k.eval(row));
      const key = groupBy.length === 0 ? '' : hash(keys);
      let group = groups.get(key);
      if (!group) {
        group = newGroup(keys, aggs);
        groups.set(key, group);
        if (groups.size > ctx.materializedRowsMax) throw limitExceeded('hash aggregate', ctx.materializedRowsMax);
      }
      step(group, aggs, row);
    }
  }
  if (groupBy.length === 0 && groups.size === 0) groups.set('', newGroup([], aggs));
  const out: Row[] = [];
  for (const group of groups.values()) out.push(finish(group, aggs, ctx));
  yield* batches(out);
}

/** Aggregates without GROUP BY: one group, even over no rows (no key to compute or look up per row). */
async function oneGroup(input: AsyncIterable<Batch>, ctx: ExecContext, aggs: readonly AggRuntime[]): Promise<Row> {
  const group = newGroup([], aggs);
  for await (const batch of input) {
    checkContinue(ctx);
    for (let r = 0; r < batch.length; r++) step(group, aggs, batch[r]!);
  }
  return finish(group, aggs, ctx);
}

/** The common GROUP BY of one expression: groups keyed by the value (or its hash key), NULL apart. */
async function groupBySingleKey(
  input: AsyncIterable<Batch>,
  ctx: ExecContext,
  keyOf: Evaluator,
  mapKey: (v: QValue) => unknown,
  aggs: readonly AggRuntime[],
): Promise<Row[]> {
  const groups = new Map<unknown, Group>();
  let nullGroup: Group | null = null;
  for await (const batch of input) {
    checkContinue(ctx);
    for (const row of batch) {
      const value = keyOf(row);
      let group: Group | undefined;
      if (value === null) group = nullGroup ??= newGroup([null], aggs);
      else {
        const key = mapKey(value);
        group = groups.get(key);
        if (!group) {
          group = newGroup([value], aggs);
          groups.set(key, group);
          if (groups.size > ctx.materializedRowsMax) throw limitExceeded('hash aggregate', ctx.materializedRowsMax);
        }
      }
      step(group, aggs, row);
    }
  }
  const out: Row[] = [];
  for (const group of groups.values()) out.push(finish(group, aggs, ctx));
  if (nullGroup) out.push(finish(nullGroup, aggs, ctx));
  return out;
}
