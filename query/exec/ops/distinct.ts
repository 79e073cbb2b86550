import type { Expr } from '../../plan/expr.js';
import type { OutputColumn } from '../../plan/nodes.js';
import { compile } from '../compile.js';
import { checkContinue, limitExceeded, type Batch, type ExecContext, type Row } from '../context.js';
import { materialize, rowHasher } from './materialize.js';

/** DISTINCT: the first row of each distinct value, streamed. */
export async function* distinctOp(input: AsyncIterable<Batch>, ctx: ExecContext, columns: readonly OutputColumn[]): AsyncIterable<Batch> {
  const hash = rowHasher(
    ctx,
    columns.map((c) => c.type),
  );
  const seen = new Set<string>();
  for await (const batch of input) {
    checkContinue(ctx);
    const out: Batch = [];
    for (const row of batch) {
      const key = hash(row);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(row);
    }
    if (seen.size > ctx.materializedRowsMax) throw limitExceeded('DISTINCT', ctx.materializedRowsMax);
    if (out.length > 0) yield out;
  }
}

/** DISTINCT ON (keys) over input sorted by the keys: the first row of each run. */
export async function* distinctOnOp(input: AsyncIterable<Batch>, ctx: ExecContext, on: readonly Expr[]): AsyncIterable<Batch> {
  const evals = on.map((e) => compile(e, ctx).eval);
  const hash = rowHasher(
    ctx,
    on.map((e) => e.type),
  );
  let last: string | null = null;
  for await (const batch of input) {
    const out: Batch = [];
    for (const row of batch) {
      const key = hash(evals.map((f) => f(row)));
      if (key === last) continue;
      last = key;
      out.push(row);
    }
    if (out.length > 0) yield out;
  }
}

/** UNION / INTERSECT / EXCEPT [ALL]. */
export async function* setOp(
  left: AsyncIterable<Batch>,
  right: AsyncIterable<Batch>,
  ctx: ExecContext,
  op: 'union' | 'intersect' | 'except',
  all: boolean,
  columns: readonly OutputColumn[],
): AsyncIterable<Batch> {
  if (op === 'union') {
    const both = (async function* () {
      yield* left;
      yield* right;
    })();
    yield* all ? both : distinctOp(both, ctx, columns);
    return;
  }
  const hash = rowHasher(
    ctx,
    columns.map((c) => c.type),
  );
  const counts = new Map<string, number>();
  for (const row of await materialize(right, ctx, op.toUpperCase())) {
    const key = hash(row);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const emitted = new Set<string>();
  for await (const batch of left) {
    checkContinue(ctx);
    const out: Row[] = [];
    for (const row of batch) {
      const key = hash(row);
      const n = counts.get(key) ?? 0;
      if (op === 'intersect') {
        if (n === 0) continue;
        if (all) counts.set(key, n - 1);
        else if (emitted.has(key)) continue;
        else emitted.add(key);
        out.push(row);
      } else if (all) {
        if (n > 0) counts.set(key, n - 1);
        else out.push(row);
      } else if (n === 0 && !emitted.has(key)) {
        emitted.add(key);
        out.push(row);
      }
    }
    if (out.length > 0) yield out;
  }
}
