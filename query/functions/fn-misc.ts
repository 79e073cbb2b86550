/** Array functions, pgvector functions, gen_random_uuid. */
import { randomUUID } from 'node:crypto';
import type { QType, QValue } from '../types/contract.js';
import { comparator } from '../types/compare.js';
import { dataError } from '../types/errors.js';
import { arrayOf, baseType, elementType, T } from '../types/qtype.js';
import { pgTypeName } from '../types/type-names.js';
import type { FnDef, Impl } from './registry.js';
import { cosineDistance, innerProduct, l1Distance, l2Distance, l2Normalize, vectorNorm } from './vector-math.js';

function fn(name: string, params: QType[], ret: QType, impl: Impl): FnDef {
  return { name, params, ret, make: () => impl };
}

const arr = (v: QValue | undefined): readonly QValue[] => v as readonly QValue[];
const vec = (v: QValue | undefined): Float32Array => v as Float32Array;

/** Length of dimension `dim` (1-based) of a possibly nested array; null when it has no such dimension. */
function dimLength(a: readonly QValue[], dim: number, nested: boolean): number | null {
  if (a.length === 0) return null;
  let cur: readonly QValue[] = a;
  for (let d = 1; d < dim; d++) {
    const first = cur[0];
    if (!nested || !Array.isArray(first)) return null;
    cur = first;
  }
  return dim >= 1 ? cur.length : null;
}

function ndims(a: readonly QValue[], nested: boolean): number {
  if (a.length === 0) return 0;
  let n = 1;
  let cur: QValue = a[0] ?? null;
  while (nested && Array.isArray(cur)) {
    n++;
    cur = cur[0] ?? null;
  }
  return n;
}

/** array_dims: '[1:2][1:3]' (arrays here are 1-based), NULL for an empty array. */
function arrayDims(a: readonly QValue[], nested: boolean): string | null {
  if (a.length === 0) return null;
  let out = '';
  let cur: QValue = a;
  while (Array.isArray(cur)) {
    out += `[1:${cur.length}]`;
    if (!nested) break;
    cur = (cur as readonly QValue[])[0] ?? null;
  }
  return out;
}

function flatCount(a: readonly QValue[], nested: boolean): number {
  return nested ? a.reduce<number>((n, e) => n + (Array.isArray(e) ? flatCount(e, true) : 1), 0) : a.length;
}

function arrayDefs(): FnDef[] {
  const nestedOf = (p: readonly QType[]): boolean => elementType(p[0]!).name !== 'jsonb';
  // Arrays are 1-based here, so a dimension's upper bound is its length.
  const lengthOf =
    (p: readonly QType[]) =>
    ([a, d]: readonly QValue[]): QValue =>
      dimLength(arr(a!), d as number, nestedOf(p));
  return [
    {
      name: 'array_length',
      params: ['anyarray', T.int4],
      ret: T.int4,
      make: lengthOf,
    },
    {
      name: 'array_upper',
      params: ['anyarray', T.int4],
      ret: T.int4,
      make: lengthOf,
    },
    {
      name: 'array_lower',
      params: ['anyarray', T.int4],
      ret: T.int4,
      make:
        (p) =>
        ([a, d]) =>
          dimLength(arr(a!), d as number, nestedOf(p)) === null ? null : 1,
    },
    {
      name: 'array_ndims',
      params: ['anyarray'],
      ret: T.int4,
      make:
        (p) =>
        ([a]) =>
          arr(a!).length === 0 ? null : ndims(arr(a!), nestedOf(p)),
    },
    {
      name: 'array_dims',
      params: ['anyarray'],
      ret: T.text,
      make:
        (p) =>
        ([a]) =>
          arrayDims(arr(a!), nestedOf(p)),
    },
    {
      name: 'cardinality',
      params: ['anyarray'],
      ret: T.int4,
      make:
        (p) =>
        ([a]) =>
          flatCount(arr(a!), nestedOf(p)),
    },
    {
      name: 'array_position',
      params: ['anycompatiblearray', 'anycompatible'],
      ret: T.int4,
      strict: false,
      make: (p) => {
        const cmp = comparator(p[1]!);
        return ([a, x]) => {
          if (a === null) return null;
          const i = arr(a).findIndex((e) => (x === null ? e === null : e !== null && cmp(e, x) === 0));
          return i < 0 ? null : i + 1;
        };
      },
    },
    {
      name: 'array_positions',
      params: ['anycompatiblearray', 'anycompatible'],
      ret: arrayOf(T.int4),
      strict: false,
      make: (p) => {
        const cmp = comparator(p[1]!);
        return ([a, x]) => (a === null ? null : arr(a).flatMap((e, i) => ((x === null ? e === null : e !== null && cmp(e, x) === 0) ? [i + 1] : [])));
      },
    },
    {
      name: 'array_append',
      params: ['anycompatiblearray', 'anycompatible'],
      ret: (p) => p[0]!,
      strict: false,
      make:
        () =>
        ([a, x]) => [...(a === null ? [] : arr(a)), x ?? null],
    },
    {
      name: 'array_prepend',
      params: ['anycompatible', 'anycompatiblearray'],
      ret: (p) => p[1]!,
      strict: false,
      make:
        () =>
        ([x, a]) => [x ?? null, ...(a === null ? [] : arr(a))],
    },
    {
      name: 'array_cat',
      params: ['anycompatiblearray', 'anycompatiblearray'],
      ret: (p) => p[0]!,
      strict: false,
      make:
        () =>
        ([a, b]) =>
          a === null ? (b ?? null) : b === null ? a : [...arr(a), ...arr(b)],
    },
    {
      name: 'array_remove',
      params: ['anycompatiblearray', 'anycompatible'],
      ret: (p) => p[0]!,
      strict: false,
      make: (p) => {
        const cmp = comparator(p[1]!);
        return ([a, x]) => (a === null ? null : arr(a).filter((e) => !(x === null ? e === null : e !== null && cmp(e, x) === 0)));
      },
    },
    {
      name: 'array_replace',
      params: ['anycompatiblearray', 'anycompatible', 'anycompatible'],
      ret: (p) => p[0]!,
      strict: false,
      make: (p) => {
        const cmp = comparator(p[1]!);
        return ([a, x, y]) => (a === null ? null : arr(a).map((e) => ((x === null ? e === null : e !== null && cmp(e, x) === 0) ? (y ?? null) : e)));
      },
    },
  ];
}

function vectorDefs(): FnDef[] {
  const d = (name: string, f: (a: Float32Array, b: Float32Array) => number): FnDef => fn(name, [T.vector, T.vector], T.float8, ([a, b]) => f(vec(a!), vec(b!)));
  return [
    d('l2_distance', l2Distance),
    d('cosine_distance', cosineDistance),
    d('inner_product', innerProduct),
    d('negative_inner_product', (a, b) => -innerProduct(a, b)),
    d('l1_distance', l1Distance),
    fn('vector_dims', [T.vector], T.int4, ([a]) => vec(a!).length),
    fn('vector_norm', [T.vector], T.float8, ([a]) => vectorNorm(vec(a!))),
    fn('l2_norm', [T.vector], T.float8, ([a]) => vectorNorm(vec(a!))),
    fn('l2_normalize', [T.vector], T.vector, ([a]) => l2Normalize(vec(a!))),
    fn('subvector', [T.vector, T.int4, T.int4], T.vector, ([a, s, n]) => {
      const v = vec(a!);
      const start = Math.max((s as number) - 1, 0),
        end = Math.min((s as number) - 1 + (n as number), v.length);
      if (end <= start) throw dataError('vector must have at least 1 dimension', '22000');
      return v.slice(start, end);
    }),
  ];
}

/** A few PostgreSQL catalog and internal functions the conformance suites call. */
function catalogDefs(): FnDef[] {
  return [
    fn('booleq', [T.bool, T.bool], T.bool, ([a, b]) => a === b),
    fn('boolne', [T.bool, T.bool], T.bool, ([a, b]) => a !== b),
    // regtype in PostgreSQL; its text is the type's name, without modifiers (numeric(10,2) is numeric).
    { name: 'pg_typeof', params: ['any'], ret: T.text, strict: false, make: (p) => () => pgTypeName(baseType(p[0]!)) },
    fn('current_schemas', [T.bool], arrayOf(T.text), ([implicit]) => (implicit ? ['pg_catalog', 'public'] : ['public'])),
  ];
}

export const MISC_FN_DEFS: readonly FnDef[] = [
  ...catalogDefs(),
  ...arrayDefs(),
  ...vectorDefs(),
  { name: 'gen_random_uuid', params: [], ret: T.uuid, volatile: true, make: () => () => randomUUID() },
  { name: 'uuid_generate_v4', params: [], ret: T.uuid, volatile: true, make: () => () => randomUUID() },
];
