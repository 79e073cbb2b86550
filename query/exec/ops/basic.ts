import { SvcError } from '../../../core/errors.js';
import type { QValue } from '../../types/contract.js';
import type { Expr } from '../../plan/expr.js';
import { compile } from '../compile.js';
import { checkContinue, type Batch, type ExecContext, type Row } from '../context.js';
import { needsPrepare, prepare } from '../subquery.js';
import { LIMITS } from '../../limits.js';

/** WHERE / HAVING: keeps rows whose predicate is true. */
export async function* filterOp(input: AsyncIterable<Batch>, ctx: ExecContext, predicate: Expr): AsyncIterable<Batch> {
  const compiled = compile(predicate, ctx);
  const slow = needsPrepare([compiled]);
  const test = compiled.eval;
  for await (const batch of input) {
    checkContinue(ctx);
    const out: Batch = [];
    for (const row of batch) {
      if (slow) await prepare([compiled], row, ctx);
      if (test(row) === true) out.push(row);
    }
    if (out.length > 0) yield out;
  }
}

/** Computes the output expressions of each row. */
export async function* projectOp(input: AsyncIterable<Batch>, ctx: ExecContext, exprs: readonly Expr[]): AsyncIterable<Batch> {
  const compiled = exprs.map((e) => compile(e, ctx));
  const evals = compiled.map((c) => c.eval);
  const slow = needsPrepare(compiled);
  const passthrough = exprs.map((e) => (e.kind === 'column' ? e.index : -1));
  for await (const batch of input) {
    checkContinue(ctx);
    const out: Batch = new Array(batch.length);
    for (let r = 0; r < batch.length; r++) {
      const row = batch[r]!;
      if (slow) await prepare(compiled, row, ctx);
      const next: Row = new Array(evals.length);
      for (let i = 0; i < evals.length; i++) {
        const p = passthrough[i]!;
        next[i] = p >= 0 ? (row[p] as QValue) : evals[i]!(row);
      }
      out[r] = next;
    }
    yield out;
  }
}

/** The row count of a LIMIT or OFFSET expression (null: none, as LIMIT NULL / ALL). */
export async function rowCountOf(e: Expr | null, ctx: ExecContext, what: 'LIMIT' | 'OFFSET'): Promise<number | null> {
  if (!e) return null;
  const compiled = compile(e, ctx);
  if (needsPrepare([compiled])) await prepare([compiled], [], ctx); // LIMIT (SELECT ...)
  const v = compiled.eval([]);
  if (v === null) return null;
  const n = Number(v);
  if (n < 0) throw new SvcError('INVALID_QUERY', `${what} must not be negative`, {});
  return n;
}

/** LIMIT / OFFSET: stops pulling its input once the limit is reached. */
export async function* limitOp(input: AsyncIterable<Batch>, ctx: ExecContext, limit: Expr | null, offset: Expr | null): AsyncIterable<Batch> {
  const max = await rowCountOf(limit, ctx, 'LIMIT');
  let skip = (await rowCountOf(offset, ctx, 'OFFSET')) ?? 0;
  if (max === 0) return;
  let emitted = 0;
  for await (const batch of input) {
    let rows = batch;
    if (skip > 0) {
      const dropped = Math.min(skip, rows.length);
      rows = rows.slice(dropped);
      skip -= dropped;
    }
    if (rows.length === 0) continue;
    if (max !== null && emitted + rows.length >= max) {
      yield rows.slice(0, max - emitted);
      return;
    }
    emitted += rows.length;
    yield rows;
  }
}

/** VALUES lists, and the single empty row of SELECT without FROM. */
export async function* valuesOp(ctx: ExecContext, rows: readonly (readonly Expr[])[]): AsyncIterable<Batch> {
  let out: Batch = [];
  for (const exprs of rows) {
    const compiled = exprs.map((e) => compile(e, ctx));
    await prepare(compiled, [], ctx);
    out.push(compiled.map((c) => c.eval([])));
    if (out.length >= LIMITS.batchRows) {
      yield out;
      out = [];
    }
  }
  if (out.length > 0) yield out;
}

export async function* oneRowOp(): AsyncIterable<Batch> {
  yield [[]];
}
