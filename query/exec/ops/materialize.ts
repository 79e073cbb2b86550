import type { QType, QValue } from '../../types/contract.js';
import { LIMITS } from '../../limits.js';
import { checkContinue, limitExceeded, type Batch, type ExecContext, type Row } from '../context.js';

/** Reads a whole input into memory (bounded by ctx.materializedRowsMax). */
export async function materialize(input: AsyncIterable<Batch>, ctx: ExecContext, what: string): Promise<Row[]> {
  const rows: Row[] = [];
  for await (const batch of input) {
    checkContinue(ctx);
    for (const row of batch) rows.push(row);
    if (rows.length > ctx.materializedRowsMax) throw limitExceeded(what, ctx.materializedRowsMax);
  }
  return rows;
}

/** Hash key of several values of known types (equal per SQL = gives equal keys). */
export function rowHasher(ctx: ExecContext, types: readonly QType[]): (values: readonly QValue[]) => string {
  const hashers = types.map((t) => ctx.types.hashKey(t));
  if (hashers.length === 1) {
    const h = hashers[0]!;
    return (values) => (values[0] === null ? '\u0000null' : `v${h(values[0]!)}`);
  }
  return (values) => JSON.stringify(values.map((v, i) => (v === null ? null : hashers[i]!(v))));
}

/** Splits an array into batches. */
export function* batches(rows: readonly Row[]): Iterable<Batch> {
  for (let i = 0; i < rows.length; i += LIMITS.batchRows) yield rows.slice(i, i + LIMITS.batchRows);
}
