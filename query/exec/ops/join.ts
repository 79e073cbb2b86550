import type { QValue } from '../../types/contract.js';
import type { Expr } from '../../plan/expr.js';
import type { JoinNode } from '../../plan/nodes.js';
import { compile, type Compiled } from '../compile.js';
import { checkContinue, shouldYield, yieldNow, type Batch, type ExecContext, type Row } from '../context.js';
import { needsPrepare, prepare } from '../subquery.js';
import { LIMITS } from '../../limits.js';
import { batches, materialize, rowHasher, valueKeyer } from './materialize.js';

interface Matcher {
  readonly compiled: Compiled[];
  readonly slow: boolean;
  test(row: Row): boolean;
}

function matcher(cond: Expr | null, ctx: ExecContext): Matcher {
  if (!cond) return { compiled: [], slow: false, test: () => true };
  const c = compile(cond, ctx);
  return { compiled: [c], slow: needsPrepare([c]), test: (row) => c.eval(row) === true };
}

async function matches(m: Matcher, row: Row, ctx: ExecContext): Promise<boolean> {
  if (m.slow) await prepare(m.compiled, row, ctx);
  return m.test(row);
}

const nulls = (n: number): QValue[] => new Array<QValue>(n).fill(null);

/** A left row followed by a right row (a plain loop: Array.prototype.concat is slower for short rows). */
function combine(l: Row, r: Row): Row {
  const out = new Array<QValue>(l.length + r.length);
  for (let i = 0; i < l.length; i++) out[i] = l[i]!;
  for (let i = 0; i < r.length; i++) out[l.length + i] = r[i]!;
  return out;
}

/** Right rows that may match a left row (their indexes), or undefined: none. */
type Candidates = (left: Row) => readonly number[] | undefined;

/** Hash join: builds a table of the right input on its keys, probes it with the left rows. */
export async function* hashJoinOp(left: AsyncIterable<Batch>, right: AsyncIterable<Batch>, ctx: ExecContext, node: JoinNode): AsyncIterable<Batch> {
  const { leftKeys, rightKeys, residual } = node.hash!;
  const rightRows = await materialize(right, ctx, 'hash join');
  const candidates =
    leftKeys.length === 1 && leftKeys[0]!.type.name === rightKeys[0]!.type.name
      ? await singleKeyTable(ctx, rightRows, leftKeys[0]!, rightKeys[0]!)
      : await multiKeyTable(ctx, rightRows, leftKeys, rightKeys);
  yield* emitJoin(left, rightRows, ctx, node, residual, candidates, 64);
}

/** Nested-loop join for conditions without equalities (and CROSS JOIN): every right row is a candidate. */
export async function* nestedLoopJoinOp(left: AsyncIterable<Batch>, right: AsyncIterable<Batch>, ctx: ExecContext, node: JoinNode): AsyncIterable<Batch> {
  const rightRows = await materialize(right, ctx, 'nested loop join');
  const all = rightRows.map((_r, i) => i);
  yield* emitJoin(left, rightRows, ctx, node, node.on, () => all, 1);
}

/** Calls `add` for each right row, giving the event loop its turns on a large build side. */
async function eachBuildRow(ctx: ExecContext, rightRows: readonly Row[], add: (row: Row, i: number) => void): Promise<void> {
  for (let i = 0; i < rightRows.length; i++) {
    if ((i & 4095) === 4095 && shouldYield(ctx)) await yieldNow(ctx);
    add(rightRows[i]!, i);
  }
}

async function singleKeyTable(ctx: ExecContext, rightRows: readonly Row[], leftKey: Expr, rightKey: Expr): Promise<Candidates> {
  const keyOf = valueKeyer(ctx, leftKey.type);
  const rk = compile(rightKey, ctx).eval;
  const lk = compile(leftKey, ctx).eval;
  const table = new Map<unknown, number[]>();
  await eachBuildRow(ctx, rightRows, (row, i) => {
    const value = rk(row);
    if (value === null) return;
    const key = keyOf(value);
    const list = table.get(key);
    if (list) list.push(i);
    else table.set(key, [i]);
  });
  return (row) => {
    const value = lk(row);
    return value === null ? undefined : table.get(keyOf(value));
  };
}

async function multiKeyTable(ctx: ExecContext, rightRows: readonly Row[], leftKeys: readonly Expr[], rightKeys: readonly Expr[]): Promise<Candidates> {
  const rk = rightKeys.map((k) => compile(k, ctx).eval);
  const lk = leftKeys.map((k) => compile(k, ctx).eval);
  const hash = rowHasher(
    ctx,
    leftKeys.map((k) => k.type),
  );
  const table = new Map<string, number[]>();
  await eachBuildRow(ctx, rightRows, (row, i) => {
    const values = rk.map((f) => f(row));
    if (values.some((v) => v === null)) return;
    const key = hash(values);
    const list = table.get(key);
    if (list) list.push(i);
    else table.set(key, [i]);
  });
  return (row) => {
    const values = lk.map((f) => f(row));
    return values.some((v) => v === null) ? undefined : table.get(hash(values));
  };
}

/**
 * The join loop both joins share: each left row with each candidate right row passing `cond`;
 * LEFT/FULL keep unmatched left rows padded with NULLs, RIGHT/FULL the unmatched right rows.
 */
async function* emitJoin(
  left: AsyncIterable<Batch>,
  rightRows: readonly Row[],
  ctx: ExecContext,
  node: JoinNode,
  cond: Expr | null,
  candidates: Candidates,
  checkEveryRows: number,
): AsyncIterable<Batch> {
  const m = matcher(cond, ctx);
  const leftWidth = node.left.columns.length;
  const rightWidth = node.right.columns.length;
  const keepLeft = node.joinType === 'left' || node.joinType === 'full';
  const keepRight = node.joinType === 'right' || node.joinType === 'full';
  const matched = keepRight ? new Uint8Array(rightRows.length) : null;
  const always = cond === null;
  let sinceCheck = 0;
  for await (const batch of left) {
    let out: Batch = [];
    for (const l of batch) {
      // Deadline, abort and event-loop turns every `checkEveryRows` left rows: a hash join checks
      // every 64 (per row it costs ~15% of the join), a nested loop every row (each is a full pass).
      if (++sinceCheck >= checkEveryRows) {
        sinceCheck = 0;
        if (shouldYield(ctx)) await yieldNow(ctx);
        checkContinue(ctx);
      }
      let any = false;
      const list = candidates(l);
      if (list)
        for (let c = 0; c < list.length; c++) {
          const i = list[c]!;
          const combined = combine(l, rightRows[i]!);
          if (!always && !(m.slow ? await matches(m, combined, ctx) : m.test(combined))) continue;
          any = true;
          if (matched) matched[i] = 1;
          out.push(combined);
        }
      if (!any && keepLeft) out.push(l.concat(nulls(rightWidth)));
      if (out.length >= LIMITS.batchRows) {
        yield out;
        out = [];
      }
    }
    if (out.length > 0) yield out;
  }
  if (matched) yield* batches(rightRows.filter((_r, i) => matched[i] === 0).map((r) => nulls(leftWidth).concat(r)));
}

/**
 * LATERAL join: the right side runs again for each left row, which it reads as its nearest outer
 * row (placed at node.lateral in the FROM row: the slots before it are the items left of the join,
 * which a LATERAL item inside a JOIN may not read). INNER, CROSS and LEFT only (as in PostgreSQL).
 */
export async function* lateralJoinOp(
  left: AsyncIterable<Batch>,
  runRight: (outerRow: Row) => AsyncIterable<Batch>,
  ctx: ExecContext,
  node: JoinNode,
): AsyncIterable<Batch> {
  const m = matcher(node.on, ctx);
  const pad = nulls(node.lateral ?? 0);
  const rightWidth = node.right.columns.length;
  for await (const batch of left) {
    let out: Batch = [];
    for (const l of batch) {
      if (shouldYield(ctx)) await yieldNow(ctx);
      checkContinue(ctx);
      const rightRows = await materialize(runRight(pad.length === 0 ? l : pad.concat(l)), ctx, 'lateral join');
      let any = false;
      for (const r of rightRows) {
        const combined = combine(l, r);
        if (node.on !== null && !(m.slow ? await matches(m, combined, ctx) : m.test(combined))) continue;
        any = true;
        out.push(combined);
      }
      if (!any && node.joinType === 'left') out.push(l.concat(nulls(rightWidth)));
      if (out.length >= LIMITS.batchRows) {
        yield out;
        out = [];
      }
    }
    if (out.length > 0) yield out;
  }
}
