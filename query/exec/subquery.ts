import { SvcError } from '../../core/errors.js';
import type { QValue } from '../types/contract.js';
import type { SubqueryExpr } from '../plan/expr.js';
import type { Compiled } from './compile.js';
import { childContext, type ExecContext, type Row, type SubResult } from './context.js';

/** Runs the subqueries an expression needs for `row` (uncorrelated ones once per statement). */
export async function prepare(compiled: readonly Compiled[], row: Row, ctx: ExecContext): Promise<void> {
  for (const c of compiled) {
    for (const sq of c.subqueries) {
      if (!sq.correlated) {
        if (!ctx.statementCache.has(sq.id)) ctx.statementCache.set(sq.id, await runSubquery(sq, null, ctx));
      } else ctx.subResults.set(sq.id, await runSubquery(sq, row, ctx));
    }
  }
}

export const needsPrepare = (compiled: readonly Compiled[]): boolean => compiled.some((c) => c.subqueries.length > 0);

async function runSubquery(sq: SubqueryExpr, row: Row | null, ctx: ExecContext): Promise<SubResult> {
  const child = childContext(ctx, sq.correlated ? row : null);
  const rows = ctx.run(sq.plan, child);
  if (sq.mode === 'exists') {
    for await (const batch of rows) if (batch.length > 0) return { kind: 'value', value: true };
    return { kind: 'value', value: false };
  }
  if (sq.mode === 'scalar') {
    let value: QValue = null;
    let seen = 0;
    for await (const batch of rows) {
      for (const r of batch) {
        seen += 1;
        if (seen > 1) throw new SvcError('INVALID_QUERY', 'more than one row returned by a subquery used as an expression', {});
        value = r[0] as QValue;
      }
    }
    return { kind: 'value', value };
  }
  if (sq.tuple) {
    const casts = sq.tuple.map((t) => t.rightCast);
    const tuples: QValue[] = [];
    for await (const batch of rows) {
      for (const r of batch) tuples.push(r.map((v, i) => (v === null || !casts[i] ? (v as QValue) : casts[i]!(v as QValue))));
    }
    return { kind: 'set', values: tuples, keys: null, hasNull: false };
  }
  const cast = sq.test?.rightCast ?? null;
  const values: QValue[] = [];
  let hasNull = false;
  for await (const batch of rows) {
    for (const r of batch) {
      const raw = r[0] as QValue;
      const v = raw === null ? null : cast ? cast(raw) : raw;
      if (v === null) hasNull = true;
      values.push(v);
    }
  }
  let keys: Set<string> | null = null;
  if (sq.mode === 'in') {
    const hash = ctx.types.hashKey(sq.test!.op.argTypes[1] ?? sq.test!.op.argTypes[0]!);
    keys = new Set(values.filter((v) => v !== null).map((v) => hash(v)));
  }
  return { kind: 'set', values, keys, hasNull };
}
