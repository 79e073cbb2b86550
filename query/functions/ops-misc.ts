/** Bitwise operators on integers, pgvector operators, and array containment/overlap. */
import type { QType, QValue } from '../types/contract.js';
import { comparator } from '../types/compare.js';
import { elementType, T } from '../types/qtype.js';
import type { FnDef, Impl } from './registry.js';
import { cosineDistance, innerProduct, l2Distance, vectorElementwise } from './vector-math.js';

/**
 * & | # ~ << >> on int2/int4 (numbers, 32-bit JS bit operations) and int8 (bigint). Shifts are
 * C shifts as PostgreSQL compiles them: the count taken modulo the width, the result truncated to the type.
 */
function smallIntBitDefs(t: QType, bits: 16 | 32): FnDef[] {
  const wrap = (v: number): number => (bits === 16 ? (v << 16) >> 16 : v | 0);
  const op = (name: string, f: (x: number, y: number) => number, rhs: QType = t): FnDef => ({
    name,
    params: [t, rhs],
    ret: t,
    make:
      () =>
      ([x, y]) =>
        wrap(f(x as number, y as number)),
  });
  return [
    op('&', (x, y) => x & y),
    op('|', (x, y) => x | y),
    op('#', (x, y) => x ^ y),
    {
      name: '~',
      params: [t],
      ret: t,
      make:
        () =>
        ([x]) =>
          wrap(~(x as number)),
    },
    op('<<', (x, n) => x << (n & 31), T.int4),
    op('>>', (x, n) => x >> (n & 31), T.int4),
  ];
}

function bigIntBitDefs(): FnDef[] {
  const t = T.int8;
  const op = (name: string, f: (x: bigint, y: bigint) => bigint): FnDef => ({
    name,
    params: [t, t],
    ret: t,
    make:
      () =>
      ([x, y]) =>
        f(x as bigint, y as bigint),
  });
  const shift = (name: string, left: boolean): FnDef => ({
    name,
    params: [t, T.int4],
    ret: t,
    make:
      () =>
      ([x, n]) => {
        const k = BigInt((n as number) & 63);
        return left ? BigInt.asIntN(64, (x as bigint) << k) : (x as bigint) >> k;
      },
  });
  return [
    op('&', (x, y) => x & y),
    op('|', (x, y) => x | y),
    op('#', (x, y) => x ^ y),
    {
      name: '~',
      params: [t],
      ret: t,
      make:
        () =>
        ([x]) =>
          ~(x as bigint),
    },
    shift('<<', true),
    shift('>>', false),
  ];
}

const vec = (v: QValue | undefined): Float32Array => v as Float32Array;

function vectorDefs(): FnDef[] {
  const d = (name: string, fn: (a: Float32Array, b: Float32Array) => number): FnDef => ({
    name,
    params: [T.vector, T.vector],
    ret: T.float8,
    make:
      () =>
      ([a, b]) =>
        fn(vec(a!), vec(b!)),
  });
  const e = (name: string, fn: (x: number, y: number) => number): FnDef => ({
    name,
    params: [T.vector, T.vector],
    ret: T.vector,
    make:
      () =>
      ([a, b]) =>
        vectorElementwise(vec(a!), vec(b!), fn),
  });
  return [
    d('<->', l2Distance),
    d('<=>', cosineDistance),
    d('<#>', (a, b) => -innerProduct(a, b)),
    e('+', (x, y) => x + y),
    e('-', (x, y) => x - y),
    e('*', (x, y) => x * y),
  ];
}

/** Array @> <@ && (element equality by the element type's order; NULL elements never match). */
function arrayDefs(): FnDef[] {
  const containsAll =
    (cmp: (a: QValue, b: QValue) => number): ((a: QValue[], b: QValue[]) => boolean) =>
    (a, b) =>
      b.every((x) => x !== null && a.some((y) => y !== null && cmp(x, y) === 0));
  const mk = (name: string, test: (cmp: (a: QValue, b: QValue) => number) => Impl): FnDef => ({
    name,
    params: ['anycompatiblearray', 'anycompatiblearray'],
    ret: T.bool,
    make: (p) => test(comparator(elementType(p[0]!))),
  });
  return [
    mk(
      '@>',
      (cmp) =>
        ([a, b]) =>
          containsAll(cmp)(flat(a!), flat(b!)),
    ),
    mk(
      '<@',
      (cmp) =>
        ([a, b]) =>
          containsAll(cmp)(flat(b!), flat(a!)),
    ),
    mk(
      '&&',
      (cmp) =>
        ([a, b]) =>
          flat(a!).some((x) => x !== null && flat(b!).some((y) => y !== null && cmp(x, y) === 0)),
    ),
  ];
}

/** Multi-dimensional arrays are compared as their flattened elements (PostgreSQL ignores dimensions here). */
function flat(v: QValue): QValue[] {
  const out: QValue[] = [];
  const walk = (a: readonly QValue[]): void => {
    for (const e of a)
      if (Array.isArray(e)) walk(e);
      else out.push(e);
  };
  walk(v as readonly QValue[]);
  return out;
}

export const MISC_OP_DEFS: readonly FnDef[] = [
  ...smallIntBitDefs(T.int2, 16),
  ...smallIntBitDefs(T.int4, 32),
  ...bigIntBitDefs(),
  ...vectorDefs(),
  ...arrayDefs(),
];
