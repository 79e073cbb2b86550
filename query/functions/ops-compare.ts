/**
 * Comparison operators = <> != < <= > >= for every comparable type, from the type's total order
 * (so NaN = NaN is true, as in PostgreSQL's float and numeric comparisons). Cross-type pairs
 * resolve through implicit casts to the wider type, except float4/float8 which have their own
 * entries as in pg_operator. '!=' is accepted as '<>'.
 */
import type { QType } from '../types/contract.js';
import { comparator } from '../types/compare.js';
import { T } from '../types/qtype.js';
import type { FnDef, ParamSpec } from './registry.js';

const TESTS: Record<string, (c: number) => boolean> = {
  '=': (c) => c === 0,
  '<>': (c) => c !== 0,
  '!=': (c) => c !== 0,
  '<': (c) => c < 0,
  '<=': (c) => c <= 0,
  '>': (c) => c > 0,
  '>=': (c) => c >= 0,
};

const COMPARABLE: readonly QType[] = [
  T.bool,
  T.int2,
  T.int4,
  T.int8,
  T.float4,
  T.float8,
  T.numeric,
  T.text,
  T.char,
  T.uuid,
  T.jsonb,
  T.timestamp,
  T.timestamptz,
  T.date,
  T.interval,
  T.vector,
];

function compareDef(name: string, a: ParamSpec, b: ParamSpec, cmpType: (params: readonly QType[]) => QType): FnDef {
  const test = TESTS[name]!;
  return {
    name,
    params: [a, b],
    ret: T.bool,
    make: (params) => {
      const cmp = comparator(cmpType(params));
      return ([x, y]) => test(cmp(x!, y!));
    },
  };
}

function defs(): FnDef[] {
  const out: FnDef[] = [];
  for (const name of Object.keys(TESTS)) {
    for (const t of COMPARABLE) out.push(compareDef(name, t, t, () => t));
    out.push(compareDef(name, T.float4, T.float8, () => T.float8));
    out.push(compareDef(name, T.float8, T.float4, () => T.float8));
    out.push(compareDef(name, 'anycompatiblearray', 'anycompatiblearray', (p) => p[0]!));
  }
  return out;
}

export const COMPARE_DEFS: readonly FnDef[] = defs();
