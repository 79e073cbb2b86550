import { assert } from '../../../core/errors.js';
import type { Plan } from '../../plan/nodes.js';
import { checkContinue, limitExceeded, shouldYield, yieldNow, type Batch, type ExecContext, type Row } from '../context.js';
import { batches, rowHasher } from './materialize.js';

type RecursiveUnion = Extract<Plan, { kind: 'recursive_union' }>;

/**
 * WITH RECURSIVE, as PostgreSQL evaluates it: the non-recursive term's rows are the first
 * working table; each round runs the recursive term over the working table and its new rows
 * become the next one, until a round adds none. UNION drops rows seen before (so a cycle ends);
 * UNION ALL keeps all. Rows are streamed as produced, so an outer LIMIT stops an endless
 * recursion; without one, more than ctx.materializedRowsMax rows in all is LIMIT_EXCEEDED, since
 * nothing else would end `SELECT n + 1 FROM t` before the deadline.
 */
export async function* recursiveUnionOp(node: RecursiveUnion, ctx: ExecContext): AsyncIterable<Batch> {
  const hash = node.all
    ? null
    : rowHasher(
        ctx,
        node.columns.map((c) => c.type),
      );
  const seen = new Set<string>();
  let produced = 0;
  const admit = (batch: Batch, into: Row[]): Batch => {
    const kept =
      hash === null
        ? batch
        : batch.filter((row) => {
            const key = hash(row);
            if (seen.has(key)) return false;
            seen.add(key);
            return true;
          });
    produced += kept.length;
    if (produced > ctx.materializedRowsMax) throw limitExceeded(`recursive query "${node.name}"`, ctx.materializedRowsMax);
    for (const row of kept) into.push(row);
    return kept;
  };
  let working: Row[] = [];
  for await (const batch of ctx.run(node.left, ctx)) {
    const kept = admit(batch, working);
    if (kept.length > 0) yield kept;
  }
  while (working.length > 0) {
    checkContinue(ctx);
    // A context of its own per round: another reference to the same CTE runs its own rounds.
    const round: ExecContext = { ...ctx, worktables: new Map(ctx.worktables).set(node.id, working) };
    const next: Row[] = [];
    for await (const batch of ctx.run(node.right, round)) {
      const kept = admit(batch, next);
      if (kept.length > 0) yield kept;
    }
    working = next;
  }
}

/** The rows of the current round's working table. */
export async function* worktableScanOp(ctx: ExecContext, id: number): AsyncIterable<Batch> {
  const rows = ctx.worktables?.get(id);
  assert(rows !== undefined, `worktable ${id} read outside its recursive union`);
  if (shouldYield(ctx)) await yieldNow(ctx);
  yield* batches(rows);
}
