/**
 * The ordered-set aggregates percentile_cont, percentile_disc and mode, as plain aggregates over
 * the group's values in their WITHIN GROUP order: the binder (bind/call-forms.ts) turns
 * `percentile_cont(0.5) WITHIN GROUP (ORDER BY x)` into `percentile_cont(x, 0.5 ORDER BY x)`, so
 * the executor steps them in that order; NULL values are skipped (strict), as PostgreSQL does.
 */
import type { AggregateState, QValue } from '../types/contract.js';
import { comparator } from '../types/compare.js';
import { dataError } from '../types/errors.js';
import { T } from '../types/qtype.js';
import type { AggDef } from './aggregate-def.js';

/** The sorted values and the direct argument (the fraction, the same for every row of a group). */
function collect(done: (values: QValue[], fraction: number) => QValue): AggregateState {
  const values: QValue[] = [];
  let fraction = 0;
  return {
    step: ([v, f]) => {
      values.push(v!);
      fraction = f as number;
    },
    result: () => {
      if (values.length === 0) return null;
      if (!(fraction >= 0 && fraction <= 1)) throw dataError(`percentile value ${String(fraction)} is not between 0 and 1`, '22003');
      return done(values, fraction);
    },
  };
}

export const ORDERED_SET_DEFS: readonly AggDef[] = [
  {
    // PostgreSQL's interpolation: first + (second - first) * (fraction * (n - 1) - floor(...)).
    name: 'percentile_cont',
    params: [T.float8, T.float8],
    ret: T.float8,
    state: () =>
      collect((values, fraction) => {
        const pos = fraction * (values.length - 1);
        const first = values[Math.floor(pos)] as number;
        const second = values[Math.ceil(pos)] as number;
        return first + (second - first) * (pos - Math.floor(pos));
      }),
  },
  {
    // The first value whose position reaches fraction * n (the first value for 0).
    name: 'percentile_disc',
    params: ['anyelement', T.float8],
    ret: (p) => p[0]!,
    state: () => collect((values, fraction) => values[Math.max(Math.ceil(fraction * values.length), 1) - 1]!),
  },
  {
    // The most frequent value; among equally frequent ones the first in the WITHIN GROUP order.
    name: 'mode',
    params: ['anyelement'],
    ret: (p) => p[0]!,
    state: (p) => {
      const compare = comparator(p[0]!);
      let best: QValue = null;
      let bestCount = 0;
      let current: QValue = null;
      let count = 0;
      return {
        step: ([v]) => {
          if (count > 0 && compare(current, v!) === 0) count++;
          else [current, count] = [v!, 1];
          if (count > bestCount) [best, bestCount] = [current, count];
        },
        result: () => best,
      };
    },
  },
];
