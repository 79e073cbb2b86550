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

/**
 * Types whose values are equal under SQL exactly when a JavaScript Map (SameValueZero) says so:
 * the value itself can be the key (-0 and 0 are one key in both, and so are NaN and NaN).
 */
const SELF_KEYED: ReadonlySet<string> = new Set(['bool', 'int2', 'int4', 'date', 'float4', 'float8', 'text', 'varchar', 'uuid', 'unknown']);

/** A Map key for a non-NULL value of `type`: equal keys exactly for SQL-equal values. */
export function valueKeyer(ctx: ExecContext, type: QType): (value: QValue) => unknown {
  return SELF_KEYED.has(type.name) ? (value) => value : ctx.types.hashKey(type);
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
