/**
 * Aggregates: count, sum, avg, min, max, bool_and/bool_or/every,
 * stddev/variance (sample and population), bit_and/bit_or; the collecting ones (string_agg, array_agg,
 * jsonb_agg, …) are in aggregates-collect.ts, the ordered-set ones in ordered-set.ts.
 * Result types are PostgreSQL's (sum(int4) is bigint, sum(int8) and avg of integers numeric...).
 * DISTINCT is the executor's: it de-duplicates argument values (by hashKey) before step().
 * Strict aggregates never see NULL arguments; an aggregate over no rows returns NULL (count: 0).
 */
import type { AggregateState, Interval, QType, QValue, ResolvedAggregate } from '../types/contract.js';
import { comparator } from '../types/compare.js';
import * as D from '../types/decimal.js';
import { addInterval, divInterval } from '../types/interval.js';
import * as N from '../types/numeric.js';
import { isIntegerType, T } from '../types/qtype.js';
import { dataError } from '../types/errors.js';
import { chooseCandidate, type FnDef, type ParamSpec } from './registry.js';
import { ORDERED_SET_DEFS } from './ordered-set.js';
import { COLLECT_DEFS } from './aggregates-collect.js';
import { state, type AggDef } from './aggregate-def.js';
import { countState, floatSumState, intAvgState, intSumState, numericAvgState, numericSumState } from './accumulators.js';

function sumDefs(): AggDef[] {
  return [
    { name: 'sum', params: [T.int2], ret: T.int8, state: intSumState },
    { name: 'sum', params: [T.int4], ret: T.int8, state: intSumState },
    {
      name: 'sum',
      params: [T.int8],
      ret: T.numeric,
      state: () =>
        state<bigint | null>(
          null,
          (s, [v]) => (s ?? 0n) + (v as bigint),
          (s) => (s === null ? null : s.toString()),
        ),
    },
    { name: 'sum', params: [T.numeric], ret: T.numeric, state: numericSumState },
    {
      name: 'sum',
      params: [T.float4],
      ret: T.float4,
      state: () =>
        state<number | null>(
          null,
          (s, [v]) => Math.fround((s ?? 0) + (v as number)),
          (s) => s,
        ),
    },
    { name: 'sum', params: [T.float8], ret: T.float8, state: () => floatSumState(false) },
    {
      name: 'sum',
      params: [T.interval],
      ret: T.interval,
      state: () =>
        state<Interval | null>(
          null,
          (s, [v]) => (s === null ? (v as Interval) : addInterval(s, v as Interval)),
          (s) => s,
        ),
    },
  ];
}

function avgDefs(): AggDef[] {
  const floatAvg = (): AggregateState => floatSumState(true);
  return [
    { name: 'avg', params: [T.int2], ret: T.numeric, state: intAvgState },
    { name: 'avg', params: [T.int4], ret: T.numeric, state: intAvgState },
    { name: 'avg', params: [T.int8], ret: T.numeric, state: intAvgState },
    { name: 'avg', params: [T.numeric], ret: T.numeric, state: numericAvgState },
    { name: 'avg', params: [T.float4], ret: T.float8, state: floatAvg },
    { name: 'avg', params: [T.float8], ret: T.float8, state: floatAvg },
    {
      name: 'avg',
      params: [T.interval],
      ret: T.interval,
      state: () =>
        state<{ sum: Interval; n: number }>(
          { sum: { months: 0, days: 0, micros: 0n }, n: 0 },
          (s, [v]) => ({ sum: addInterval(s.sum, v as Interval), n: s.n + 1 }),
          (s) => (s.n === 0 ? null : divInterval(s.sum, s.n)),
        ),
    },
  ];
}

/** PostgreSQL's min/max input types (no boolean, uuid or jsonb: PostgreSQL has none either). */
const MIN_MAX_TYPES: readonly ParamSpec[] = [
  T.int2,
  T.int4,
  T.int8,
  T.float4,
  T.float8,
  T.numeric,
  T.text,
  T.char,
  T.date,
  T.timestamp,
  T.timestamptz,
  T.interval,
  'anyarray',
];

function minMaxDefs(): AggDef[] {
  const mk = (name: string, sign: number, param: ParamSpec): AggDef => ({
    name,
    params: [param],
    ret: (p) => p[0]!,
    state: (p) => {
      const cmp = comparator(p[0]!);
      return state<QValue>(
        null,
        (s, [v]) => (s === null || sign * cmp(v!, s) > 0 ? v! : s),
        (s) => s,
      );
    },
  });
  return MIN_MAX_TYPES.flatMap((t) => [mk('min', -1, t), mk('max', 1, t)]);
}

type Moments = { n: bigint; sum: D.Decimal; sumSq: D.Decimal };

/** PostgreSQL's numeric_stddev_internal. */
function numericVariance(m: Moments, sample: boolean, root: boolean): QValue {
  if (m.n === 0n || (sample && m.n === 1n)) return null;
  const n = D.dec(m.n);
  const num = D.sub(D.mul(n, m.sumSq), D.mul(m.sum, m.sum));
  if (D.sign(num) <= 0) return '0';
  const den = D.mul(n, sample ? D.dec(m.n - 1n) : n);
  const rscale = D.selectDivScale(num, den);
  const variance = D.divToScale(num, den, rscale);
  return N.fromDecimal(root ? D.sqrtToScale(variance, rscale) : variance);
}

type FloatMoments = { n: number; sx: number; sxx: number };

/** PostgreSQL's float8_accum (Youngs-Cramer) and float8_var_samp/pop. */
function floatVariance(m: FloatMoments, sample: boolean, root: boolean): QValue {
  if (m.n === 0 || (sample && m.n === 1)) return null;
  const v = m.sxx / (sample ? m.n - 1 : m.n);
  return root ? Math.sqrt(v) : v;
}

function varianceDefs(): AggDef[] {
  const kinds: [string, boolean, boolean][] = [
    ['stddev', true, true],
    ['stddev_samp', true, true],
    ['stddev_pop', false, true],
    ['variance', true, false],
    ['var_samp', true, false],
    ['var_pop', false, false],
  ];
  const defs: AggDef[] = [];
  for (const [name, sample, root] of kinds) {
    for (const t of [T.int2, T.int4, T.int8, T.numeric]) {
      defs.push({
        name,
        params: [t],
        ret: T.numeric,
        state: () =>
          state<Moments>(
            { n: 0n, sum: D.ZERO, sumSq: D.ZERO },
            (s, [v]) => {
              const d = isIntegerType(t) ? D.dec(BigInt(v as number | bigint)) : (N.toNum(v as string) as D.Decimal);
              if (typeof d === 'string') throw dataError('NaN/Infinity in variance is not supported', '0A000');
              return { n: s.n + 1n, sum: D.add(s.sum, d), sumSq: D.add(s.sumSq, D.mul(d, d)) };
            },
            (s) => numericVariance(s, sample, root),
          ),
      });
    }
    for (const t of [T.float4, T.float8]) {
      defs.push({
        name,
        params: [t],
        ret: T.float8,
        state: () =>
          state<FloatMoments>(
            { n: 0, sx: 0, sxx: 0 },
            (s, [v]) => {
              const x = v as number;
              const n = s.n + 1,
                sx = s.sx + x;
              let sxx = s.sxx;
              if (s.n > 0) {
                const tmp = x * n - sx;
                sxx += (tmp * tmp) / (n * s.n);
              }
              return { n, sx, sxx };
            },
            (s) => floatVariance(s, sample, root),
          ),
      });
    }
  }
  return defs;
}

function boolDefs(): AggDef[] {
  const and = (): AggregateState =>
    state<boolean | null>(
      null,
      (s, [v]) => (s ?? true) && (v as boolean),
      (s) => s,
    );
  const or = (): AggregateState =>
    state<boolean | null>(
      null,
      (s, [v]) => (s ?? false) || (v as boolean),
      (s) => s,
    );
  const defs: AggDef[] = [
    { name: 'bool_and', params: [T.bool], ret: T.bool, state: and },
    { name: 'every', params: [T.bool], ret: T.bool, state: and },
    { name: 'bool_or', params: [T.bool], ret: T.bool, state: or },
  ];
  for (const t of [T.int2, T.int4]) {
    defs.push({
      name: 'bit_and',
      params: [t],
      ret: t,
      state: () =>
        state<number | null>(
          null,
          (s, [v]) => (s === null ? (v as number) : s & (v as number)),
          (s) => s,
        ),
    });
    defs.push({
      name: 'bit_or',
      params: [t],
      ret: t,
      state: () =>
        state<number | null>(
          null,
          (s, [v]) => (s === null ? (v as number) : s | (v as number)),
          (s) => s,
        ),
    });
  }
  defs.push({
    name: 'bit_and',
    params: [T.int8],
    ret: T.int8,
    state: () =>
      state<bigint | null>(
        null,
        (s, [v]) => (s === null ? (v as bigint) : s & (v as bigint)),
        (s) => s,
      ),
  });
  defs.push({
    name: 'bit_or',
    params: [T.int8],
    ret: T.int8,
    state: () =>
      state<bigint | null>(
        null,
        (s, [v]) => (s === null ? (v as bigint) : s | (v as bigint)),
        (s) => s,
      ),
  });
  return defs;
}

function countDefs(): AggDef[] {
  return [{ name: 'count', params: ['any'], ret: T.int8, state: countState }];
}

const AGGREGATES: readonly AggDef[] = [
  ...countDefs(),
  ...sumDefs(),
  ...avgDefs(),
  ...minMaxDefs(),
  ...varianceDefs(),
  ...COLLECT_DEFS,
  ...boolDefs(),
  ...ORDERED_SET_DEFS,
];
const BY_NAME = new Map<string, FnDef[]>();
const DEF_OF = new Map<FnDef, AggDef>();
for (const a of AGGREGATES) {
  const f: FnDef = { name: a.name, params: a.params, ret: a.ret, make: () => () => null };
  DEF_OF.set(f, a);
  const list = BY_NAME.get(a.name);
  if (list === undefined) BY_NAME.set(a.name, [f]);
  else list.push(f);
}

export function isAggregateName(name: string): boolean {
  return BY_NAME.has(name);
}

/** count(*) takes no arguments and counts rows. */
const COUNT_STAR: ResolvedAggregate = {
  name: 'count',
  argTypes: [],
  returnType: T.int8,
  strict: false,
  newState: countState,
};

export function resolveAggregate(name: string, argTypes: readonly QType[], options: { distinct: boolean; star: boolean }): ResolvedAggregate | null {
  if (options.star) return name === 'count' && argTypes.length === 0 ? COUNT_STAR : null;
  const chosen = chooseCandidate(BY_NAME.get(name) ?? [], argTypes);
  if (chosen === null) return null;
  const def = DEF_OF.get(chosen.def)!;
  const params = chosen.params;
  return {
    name,
    argTypes: params,
    returnType: typeof def.ret === 'function' ? def.ret(params) : def.ret,
    strict: def.strict ?? true,
    newState: () => def.state(params),
  };
}
