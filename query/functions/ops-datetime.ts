/** Date/time and interval operators: + - * / between DATE, TIMESTAMP[TZ], INTERVAL and numbers. */
import type { Interval, QType, QValue } from '../types/contract.js';
import { dateToTimestamp } from '../types/datetime.js';
import { addInterval, divInterval, mulInterval, negInterval, subInterval } from '../types/interval.js';
import { T } from '../types/qtype.js';
import { dateDiff, datePlusDays, timestampDiff, timestampMinusInterval, timestampPlusInterval } from './datetime-math.js';
import type { FnDef, Impl } from './registry.js';

function op(name: string, a: QType, b: QType, ret: QType, impl: Impl): FnDef {
  return { name, params: [a, b], ret, make: () => impl };
}

const iv = (v: QValue | undefined): Interval => v as Interval;
const ts = (v: QValue | undefined): bigint => v as bigint;

function tsDefs(t: QType): FnDef[] {
  return [
    op('+', t, T.interval, t, ([a, b]) => timestampPlusInterval(ts(a!), iv(b!))),
    op('+', T.interval, t, t, ([a, b]) => timestampPlusInterval(ts(b!), iv(a!))),
    op('-', t, T.interval, t, ([a, b]) => timestampMinusInterval(ts(a!), iv(b!))),
    op('-', t, t, T.interval, ([a, b]) => timestampDiff(ts(a!), ts(b!))),
  ];
}

export const DATETIME_OP_DEFS: readonly FnDef[] = [
  ...tsDefs(T.timestamp),
  ...tsDefs(T.timestamptz),
  op('+', T.date, T.int4, T.date, ([a, b]) => datePlusDays(a as number, b as number)),
  op('+', T.int4, T.date, T.date, ([a, b]) => datePlusDays(b as number, a as number)),
  op('-', T.date, T.int4, T.date, ([a, b]) => datePlusDays(a as number, -(b as number))),
  op('-', T.date, T.date, T.int4, ([a, b]) => dateDiff(a as number, b as number)),
  op('+', T.date, T.interval, T.timestamp, ([a, b]) => timestampPlusInterval(dateToTimestamp(a as number), iv(b!))),
  op('+', T.interval, T.date, T.timestamp, ([a, b]) => timestampPlusInterval(dateToTimestamp(b as number), iv(a!))),
  op('-', T.date, T.interval, T.timestamp, ([a, b]) => timestampMinusInterval(dateToTimestamp(a as number), iv(b!))),
  op('+', T.interval, T.interval, T.interval, ([a, b]) => addInterval(iv(a!), iv(b!))),
  op('-', T.interval, T.interval, T.interval, ([a, b]) => subInterval(iv(a!), iv(b!))),
  {
    name: '-',
    params: [T.interval],
    ret: T.interval,
    make:
      () =>
      ([a]) =>
        negInterval(iv(a!)),
  },
  {
    name: '+',
    params: [T.interval],
    ret: T.interval,
    make:
      () =>
      ([a]) =>
        a!,
  },
  op('*', T.interval, T.float8, T.interval, ([a, b]) => mulInterval(iv(a!), b as number)),
  op('*', T.float8, T.interval, T.interval, ([a, b]) => mulInterval(iv(b!), a as number)),
  op('/', T.interval, T.float8, T.interval, ([a, b]) => divInterval(iv(a!), b as number)),
];
