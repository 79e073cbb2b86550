/**
 * Total orders (ORDER BY, btree, MIN/MAX) and equality keys (GROUP BY, DISTINCT, hash join).
 * Invariant, tested by property: comparator(t)(a, b) === 0  <=>  hashKey(t)(a) === hashKey(t)(b).
 * Floats: NaN equals NaN and sorts above everything; -0 equals 0. Text: C collation (code points).
 * CHAR(n) compares without its trailing spaces. Intervals compare by their 30-day-month total.
 */
import type { JsonValue } from '../../core/values.js';
import type { Interval, QType, QValue } from './contract.js';
import { compareInterval, intervalTotalUs } from './interval.js';
import { compareJsonb, jsonbHashKey } from './jsonb.js';
import { numericCompare, numericHashKey } from './numeric.js';
import { elementType } from './qtype.js';
import { compareText } from './text-order.js';

export type Comparator = (a: QValue, b: QValue) => number;

function compareNumber(a: QValue, b: QValue): number {
  const x = a as number,
    y = b as number;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Floats: NaN is the largest value and equal to itself. */
function compareFloat(a: QValue, b: QValue): number {
  const x = a as number,
    y = b as number;
  if (x < y) return -1;
  if (x > y) return 1;
  if (x === y) return 0;
  const nx = Number.isNaN(x),
    ny = Number.isNaN(y);
  return nx === ny ? 0 : nx ? 1 : -1;
}

function compareBigInt(a: QValue, b: QValue): number {
  const x = a as bigint,
    y = b as bigint;
  return x < y ? -1 : x > y ? 1 : 0;
}

function compareBool(a: QValue, b: QValue): number {
  return a === b ? 0 : a ? 1 : -1;
}

function compareChar(a: QValue, b: QValue): number {
  return compareText((a as string).replace(/ +$/, ''), (b as string).replace(/ +$/, ''));
}

function compareVector(a: QValue, b: QValue): number {
  // pgvector's vector_cmp: elementwise, then the shorter first.
  const x = a as Float32Array,
    y = b as Float32Array;
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    if (x[i]! < y[i]!) return -1;
    if (x[i]! > y[i]!) return 1;
  }
  return x.length === y.length ? 0 : x.length < y.length ? -1 : 1;
}

/** Arrays: elementwise with NULL greater than any value, then the shorter first (array_cmp). */
function arrayComparator(element: QType): Comparator {
  const el = comparator(element);
  const nested = element.name !== 'jsonb';
  const cmp = (a: QValue, b: QValue): number => {
    const x = a as readonly QValue[],
      y = b as readonly QValue[];
    const n = Math.min(x.length, y.length);
    for (let i = 0; i < n; i++) {
      const u = x[i]!,
        v = y[i]!;
      if (u === null || v === null) {
        if (u === v) continue;
        return u === null ? 1 : -1;
      }
      const c = nested && Array.isArray(u) && Array.isArray(v) ? cmp(u, v) : el(u, v);
      if (c !== 0) return c;
    }
    return x.length === y.length ? 0 : x.length < y.length ? -1 : 1;
  };
  return cmp;
}

/** The total order of a type's non-null values. */
export function comparator(type: QType): Comparator {
  switch (type.name) {
    case 'bool':
      return compareBool;
    case 'int2':
    case 'int4':
    case 'date':
      return compareNumber;
    case 'int8':
    case 'timestamp':
    case 'timestamptz':
      return compareBigInt;
    case 'float4':
    case 'float8':
      return compareFloat;
    case 'numeric':
      return (a, b) => numericCompare(a as string, b as string);
    case 'text':
    case 'varchar':
    case 'uuid':
    case 'unknown':
      return (a, b) => compareText(a as string, b as string);
    case 'char':
      return compareChar;
    case 'jsonb':
      return (a, b) => compareJsonb(a as JsonValue, b as JsonValue);
    case 'interval':
      return (a, b) => compareInterval(a as Interval, b as Interval);
    case 'vector':
      return compareVector;
    case 'array':
      return arrayComparator(elementType(type));
  }
}

export type HashKeyFn = (value: QValue) => string;

function floatKey(v: QValue): string {
  const x = v as number;
  return x === 0 ? '0' : String(x); // -0 = 0; NaN = NaN
}

/** Equal keys for values the comparator calls equal. */
export function hashKey(type: QType): HashKeyFn {
  switch (type.name) {
    case 'bool':
      return (v) => (v ? 't' : 'f');
    case 'int2':
    case 'int4':
    case 'date':
      return (v) => String(v);
    case 'int8':
    case 'timestamp':
    case 'timestamptz':
      return (v) => (v as bigint).toString();
    case 'float4':
    case 'float8':
      return floatKey;
    case 'numeric':
      return (v) => numericHashKey(v as string);
    case 'text':
    case 'varchar':
    case 'uuid':
    case 'unknown':
      return (v) => v as string;
    case 'char':
      return (v) => (v as string).replace(/ +$/, '');
    case 'jsonb':
      return (v) => jsonbHashKey(v as JsonValue);
    case 'interval':
      return (v) => intervalTotalUs(v as Interval).toString();
    case 'vector':
      return (v) => Array.from(v as Float32Array).join(',');
    case 'array': {
      const el = hashKey(elementType(type));
      const nested = elementType(type).name !== 'jsonb';
      const walk = (v: QValue): string =>
        `[${(v as readonly QValue[]).map((e) => (e === null ? 'N' : nested && Array.isArray(e) ? walk(e) : JSON.stringify(el(e)))).join(',')}]`;
      return walk;
    }
  }
}
