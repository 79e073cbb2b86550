/**
 * GROUP BY GROUPING SETS / ROLLUP / CUBE (bind/grouping-sets.ts): one pass over the input, a hash
 * table of groups per set, every row stepped into its group of each set (as PostgreSQL's
 * MixedAggregate / HashAggregate with several hash keys). A row's keys are computed once; a key
 * outside a set is NULL in that set's rows. The empty set gives its one row even over no input,
 * as an aggregate without GROUP BY does. After the aggregates, each GROUPING(…) call's value for
 * the set: a bit per argument, most significant first, set when the argument is outside it.
 */
import type { QValue } from '../../types/contract.js';
import type { AggCall, Expr } from '../../plan/expr.js';
import { compile } from '../compile.js';
import { checkContinue, limitExceeded, type Batch, type ExecContext, type Row } from '../context.js';
import { needsPrepare, prepare } from '../subquery.js';
import { finish, newGroup, runtime, step, type Group } from './aggregate.js';
import { batches, rowHasher } from './materialize.js';

export async function* groupingSetsOp(
  input: AsyncIterable<Batch>,
  ctx: ExecContext,
  groupBy: readonly Expr[],
  calls: readonly AggCall[],
  sets: readonly (readonly number[])[],
  grouping: readonly (readonly number[])[],
): AsyncIterable<Batch> {
  const keyEvals = groupBy.map((g) => compile(g, ctx));
  const slow = needsPrepare(keyEvals);
  const aggs = calls.map((c) => runtime(c, ctx));
  const hashers = sets.map((set) =>
    rowHasher(
      ctx,
      set.map((i) => groupBy[i]!.type),
    ),
  );
  const tables = sets.map(() => new Map<string, Group>());
  const subset: QValue[] = [];
  let groups = 0;
  for await (const batch of input) {
    checkContinue(ctx);
    for (const row of batch) {
      if (slow) await prepare(keyEvals, row, ctx);
      const values = keyEvals.map((k) => k.eval(row));
      for (let s = 0; s < sets.length; s++) {
        const set = sets[s]!;
        subset.length = set.length;
        for (let j = 0; j < set.length; j++) subset[j] = values[set[j]!]!;
        const key = set.length === 0 ? '' : hashers[s]!(subset);
        let group = tables[s]!.get(key);
        if (group === undefined) {
          const keys: QValue[] = groupBy.map(() => null);
          for (const i of set) keys[i] = values[i]!;
          group = newGroup(keys, aggs);
          tables[s]!.set(key, group);
          if (++groups > ctx.materializedRowsMax) throw limitExceeded('hash aggregate', ctx.materializedRowsMax);
        }
        step(group, aggs, row);
      }
    }
  }
  const out: Row[] = [];
  for (let s = 0; s < sets.length; s++) {
    const set = sets[s]!;
    const table = tables[s]!;
    if (set.length === 0 && table.size === 0)
      table.set(
        '',
        newGroup(
          groupBy.map(() => null),
          aggs,
        ),
      );
    const values = grouping.map((args) => args.reduce((bits, key) => (bits << 1) | (set.includes(key) ? 0 : 1), 0));
    for (const group of table.values()) out.push([...finish(group, aggs, ctx), ...values]);
  }
  yield* batches(out);
}
