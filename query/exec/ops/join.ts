import type { QValue } from '../../types/contract.js';
import type { Expr } from '../../plan/expr.js';
import type { JoinNode } from '../../plan/nodes.js';
import { compile, type Compiled } from '../compile.js';
import { checkContinue, type Batch, type ExecContext, type Row } from '../context.js';
import { needsPrepare, prepare } from '../subquery.js';
import { batches, materialize, rowHasher } from './materialize.js';

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

/** Hash join: builds a table of the right input on its keys, probes it with the left rows. */
export async function* hashJoinOp(left: AsyncIterable<Batch>, right: AsyncIterable<Batch>, ctx: ExecContext, node: JoinNode): AsyncIterable<Batch> {
  const { leftKeys, rightKeys, residual } = node.hash!;
  const rightRows = await materialize(right, ctx, 'hash join');
  const rk = rightKeys.map((k) => compile(k, ctx).eval);
  const lk = leftKeys.map((k) => compile(k, ctx).eval);
  const hash = rowHasher(ctx, leftKeys.map((k) => k.type));
  const table = new Map<string, number[]>();
  rightRows.forEach((row, i) => {
    const values = rk.map((f) => f(row));
    if (values.some((v) => v === null)) return;
    const key = hash(values);
    const list = table.get(key);
    if (list) list.push(i);
    else table.set(key, [i]);
  });
  const res = matcher(residual, ctx);
  const leftWidth = node.left.columns.length;
  const rightWidth = node.right.columns.length;
  const keepLeft = node.joinType === 'left' || node.joinType === 'full';
  const keepRight = node.joinType === 'right' || node.joinType === 'full';
  const matched = keepRight ? new Uint8Array(rightRows.length) : null;
  for await (const batch of left) {
    checkContinue(ctx);
    const out: Batch = [];
    for (const l of batch) {
      const values = lk.map((f) => f(l));
      const candidates = values.some((v) => v === null) ? undefined : table.get(hash(values));
      let any = false;
      for (const i of candidates ?? []) {
        const combined = l.concat(rightRows[i]!);
        if (!(await matches(res, combined, ctx))) continue;
        any = true;
        if (matched) matched[i] = 1;
        out.push(combined);
      }
      if (!any && keepLeft) out.push(l.concat(nulls(rightWidth)));
    }
    if (out.length > 0) yield out;
  }
  if (matched) yield* batches(rightRows.filter((_r, i) => matched[i] === 0).map((r) => nulls(leftWidth).concat(r)));
}

/** Nested-loop join for conditions without equalities (and CROSS JOIN). */
export async function* nestedLoopJoinOp(left: AsyncIterable<Batch>, right: AsyncIterable<Batch>, ctx: ExecContext, node: JoinNode): AsyncIterable<Batch> {
  const rightRows = await materialize(right, ctx, 'nested loop join');
  const cond = matcher(node.on, ctx);
  const leftWidth = node.left.columns.length;
  const rightWidth = node.right.columns.length;
  const keepLeft = node.joinType === 'left' || node.joinType === 'full';
  const keepRight = node.joinType === 'right' || node.joinType === 'full';
  const matched = keepRight ? new Uint8Array(rightRows.length) : null;
  for await (const batch of left) {
    let out: Batch = [];
    for (const l of batch) {
      checkContinue(ctx);
      let any = false;
      for (let i = 0; i < rightRows.length; i++) {
        const combined = l.concat(rightRows[i]!);
        if (!(await matches(cond, combined, ctx))) continue;
        any = true;
        if (matched) matched[i] = 1;
        out.push(combined);
      }
      if (!any && keepLeft) out.push(l.concat(nulls(rightWidth)));
      if (out.length >= 1024) {
        yield out;
        out = [];
      }
    }
    if (out.length > 0) yield out;
  }
  if (matched) yield* batches(rightRows.filter((_r, i) => matched[i] === 0).map((r) => nulls(leftWidth).concat(r)));
}
