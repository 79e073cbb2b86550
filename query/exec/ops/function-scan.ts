import { SvcError } from '../../../core/errors.js';
import type { QType, QValue } from '../../types/contract.js';
import type { Expr } from '../../plan/expr.js';
import { compile } from '../compile.js';
import { checkContinue, shouldYield, yieldNow, type Batch, type ExecContext } from '../context.js';
import { prepare } from '../subquery.js';
import { LIMITS } from '../../limits.js';

/**
 * generate_series(start, stop[, step]) over int4 (numbers) or int8 (bigints): rows are produced
 * a batch at a time, so LIMIT stops it early. A NULL argument gives no rows, as in PostgreSQL.
 */
export async function* generateSeriesOp(ctx: ExecContext, args: readonly Expr[]): AsyncIterable<Batch> {
  const compiled = args.map((e) => compile(e, ctx));
  await prepare(compiled, [], ctx);
  const values = compiled.map((c) => c.eval([]));
  if (values.some((v) => v === null)) return;
  const wide = typeof values[0] === 'bigint';
  const [start, stop, step] = [values[0], values[1], values[2] ?? 1].map((v) => BigInt(v as number | bigint));
  if (step === 0n) throw new SvcError('INVALID_QUERY', 'step size cannot equal zero', {});
  yield* inBatches(ctx, series(start!, stop!, step!, wide));
}

function* series(start: bigint, stop: bigint, step: bigint, wide: boolean): Iterable<QValue> {
  for (let v = start; step > 0n ? v <= stop : v >= stop; v += step) yield wide ? v : Number(v);
}

/** One-column rows of `values`, a batch at a time, yielding the event loop and checking the deadline between batches. */
async function* inBatches(ctx: ExecContext, values: Iterable<QValue>): AsyncIterable<Batch> {
  let batch: Batch = [];
  for (const value of values) {
    batch.push([value]);
    if (batch.length >= LIMITS.batchRows) {
      yield batch;
      batch = [];
      if (shouldYield(ctx)) await yieldNow(ctx);
      checkContinue(ctx);
    }
  }
  if (batch.length > 0) yield batch;
}

/**
 * unnest(array): its elements in storage order, a multi-dimensional array flattened as PostgreSQL
 * does (nested JS arrays), except where an element is itself a JS array value (jsonb).
 * A NULL array gives no rows.
 */
export async function* unnestOp(ctx: ExecContext, arg: Expr, elementType: QType): AsyncIterable<Batch> {
  const compiled = compile(arg, ctx);
  await prepare([compiled], [], ctx);
  const value = compiled.eval([]);
  if (value === null) return;
  const deep = elementType.name !== 'jsonb';
  const elements = deep ? (value as unknown[]).flat(Infinity) : (value as unknown[]);
  yield* inBatches(ctx, elements as QValue[]);
}
