import type { QValue } from '../../types/contract.js';
import type { SortKey } from '../../plan/expr.js';
import { compile } from '../compile.js';
import type { Batch, ExecContext, Row } from '../context.js';
import { needsPrepare, prepare } from '../subquery.js';
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

/** ORDER BY: a stable sort of the whole input. */
export async function* sortOp(input: AsyncIterable<Batch>, ctx: ExecContext, keys: readonly SortKey[]): AsyncIterable<Batch> {
  const rows = await materialize(input, ctx, 'sort');
  const decorated = await decorate(rows, keys, ctx);
  const cmp = keyComparator(ctx, keys);
  decorated.sort((a, b) => cmp(a.key, b.key));
  yield* batches(decorated.map((d) => d.row));
}
