import type { QValue } from '../../types/contract.js';
import type { SortKey } from '../../plan/expr.js';
import type { TopN } from '../../plan/ir.js';
import { compile } from '../compile.js';
import { checkContinue, type Batch, type ExecContext, type Row } from '../context.js';
import { needsPrepare, prepare } from '../subquery.js';
import { rowCountOf } from './basic.js';
import { batches, materialize } from './materialize.js';

/** A comparator of key tuples honouring ASC/DESC and NULLS FIRST/LAST. */
export function keyComparator(ctx: ExecContext, keys: readonly SortKey[]): (a: readonly QValue[], b: readonly QValue[]) => number {
  const cmps = keys.map((k) => ctx.types.comparator(k.expr.type));
  return (a, b) => {
    for (let i = 0; i < keys.length; i++) {
      const x = a[i]!;
      const y = b[i]!;
      const k = keys[i]!;
      if (x === null || y === null) {
        if (x === y) continue;
        return (x === null) === k.nullsFirst ? -1 : 1;
      }
      const c = cmps[i]!(x, y);
      if (c !== 0) return k.descending ? -c : c;
    }
    return 0;
  };
}

/** Evaluates sort keys for rows: [keys, row] pairs. */
export async function decorate(rows: readonly Row[], keys: readonly SortKey[], ctx: ExecContext): Promise<{ key: QValue[]; row: Row }[]> {
  const compiled = keys.map((k) => compile(k.expr, ctx));
  const slow = needsPrepare(compiled);
  const out: { key: QValue[]; row: Row }[] = [];
  for (const row of rows) {
    if (slow) await prepare(compiled, row, ctx);
    out.push({ key: compiled.map((c) => c.eval(row)), row });
  }
  return out;
}

/** ORDER BY: a stable sort of the whole input, or of the first `topN` rows under a LIMIT. */
export async function* sortOp(input: AsyncIterable<Batch>, ctx: ExecContext, keys: readonly SortKey[], topN?: TopN): AsyncIterable<Batch> {
  const keep = topN ? await rowsToKeep(topN, ctx) : null;
  if (keep !== null) {
    yield* batches(await topRows(input, ctx, keys, keep));
    return;
  }
  const rows = await materialize(input, ctx, 'sort');
  const decorated = await decorate(rows, keys, ctx);
  const cmp = keyComparator(ctx, keys);
  decorated.sort((a, b) => cmp(a.key, b.key));
  yield* batches(decorated.map((d) => d.row));
}

/**
 * limit + offset, or null for a full sort: no limit (LIMIT NULL/ALL), or more rows than a sort may
 * hold (the full sort then fails with LIMIT_EXCEEDED if the input really is that large).
 */
async function rowsToKeep(topN: TopN, ctx: ExecContext): Promise<number | null> {
  const limit = await rowCountOf(topN.limit, ctx, 'LIMIT');
  if (limit === null) return null;
  const n = limit + ((await rowCountOf(topN.offset, ctx, 'OFFSET')) ?? 0);
  return Number.isSafeInteger(n) && n <= ctx.materializedRowsMax ? n : null;
}

/**
 * The first `keep` rows in sort order without sorting (or holding) the whole input: rows are
 * buffered, and each time the buffer reaches 2 x keep it is sorted and cut back to `keep`. After
 * the first cut, a row that does not sort before the last kept one can never be emitted and is
 * dropped with one comparison. Stable: among equal keys the earlier row wins, as in sortOp.
 */
async function topRows(input: AsyncIterable<Batch>, ctx: ExecContext, keys: readonly SortKey[], keep: number): Promise<Row[]> {
  if (keep === 0) return [];
  const cmp = keyComparator(ctx, keys);
  const compiled = keys.map((k) => compile(k.expr, ctx));
  const slow = needsPrepare(compiled);
  // Cut back at 2 x keep (amortized O(n log keep)), never above what a sort may hold.
  const capacity = Math.max(keep + 1, Math.min(Math.max(2 * keep, 64), ctx.materializedRowsMax));
  let buffer: { key: QValue[]; row: Row }[] = [];
  let worst: QValue[] | null = null;
  const cut = (): void => {
    buffer.sort((a, b) => cmp(a.key, b.key));
    if (buffer.length > keep) buffer = buffer.slice(0, keep);
    if (buffer.length === keep) worst = buffer[keep - 1]!.key;
  };
  for await (const batch of input) {
    checkContinue(ctx);
    for (const row of batch) {
      if (slow) await prepare(compiled, row, ctx);
      const key = compiled.map((c) => c.eval(row));
      if (worst !== null && cmp(key, worst) >= 0) continue;
      buffer.push({ key, row });
      if (buffer.length >= capacity) cut();
    }
  }
  cut();
  return buffer.map((d) => d.row);
}
