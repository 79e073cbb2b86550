/**
 * JSONB values are parsed JSON (core/values.ts, core/json-exact.ts: numbers exact as numeric,
 * a top-level JSON null is JSON_NULL, never SQL NULL). This module gives them PostgreSQL's behaviour:
 * text output with its spacing ('{"a": 1, "b": [1, 2]}') and key order (shorter keys first, then
 * bytewise), the jsonb btree order (numbers numerically: 1.0 = 1), containment (@>) and existence (?).
 */
import { JSON_NULL, JsonNull, JsonNumber, formatJsonNumber, isJsonNull, parseJsonExact, setOwn } from '../../core/json-exact.js';
import type { JsonValue } from '../../core/values.js';
import { dataError } from './errors.js';
import { numericCompare, numericHashKey } from './numeric.js';
import { compareText } from './text-order.js';

export type JsonObject = { [key: string]: JsonValue };
export { JSON_NULL, formatJsonNumber, isJsonNull };

export function isJsonObject(v: JsonValue): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof JsonNumber) && !(v instanceof JsonNull);
}

/** True for a JSON number in either form (a double or an exact JsonNumber). */
export function isJsonNumber(v: JsonValue): v is number | JsonNumber {
  return typeof v === 'number' || v instanceof JsonNumber;
}

/** A JSON number's numeric text ('1.0', '12345678901234567890123'). */
export function jsonNumberText(v: number | JsonNumber): string {
  return typeof v === 'number' ? formatJsonNumber(v) : v.text;
}

/** A jsonb value as a top-level SQL value: the JSON null is JSON_NULL, never SQL NULL. */
export function asTopLevel(v: JsonValue): JsonValue {
  return v === null ? JSON_NULL : v;
}

/** A top-level jsonb value as an element of an array or object (JSON null is `null` there). */
export function asElement(v: JsonValue): JsonValue {
  return v === JSON_NULL ? null : v;
}

/** The object key a jsonb scalar makes (jsonb_build_object / jsonb_object_agg keys): strings bare, the rest as text. */
export function jsonbKeyText(v: JsonValue): string {
  return typeof v === 'string' ? v : formatJsonb(v);
}

/** Object keys in jsonb storage order: shorter (in UTF-8 bytes) first, then bytewise. */
export function sortedKeys(o: JsonObject): string[] {
  return Object.keys(o).sort(compareKeys);
}

function compareKeys(a: string, b: string): number {
  if (a.length !== b.length) {
    const la = Buffer.byteLength(a),
      lb = Buffer.byteLength(b);
    if (la !== lb) return la - lb;
  }
  return compareText(a, b);
}

/** Sets `key` as an own property even when it is '__proto__' (core's setOwn, typed for JSON). */
export function setKey(o: JsonObject, key: string, value: JsonValue): void {
  setOwn(o, key, value);
}

/** jsonb_in: strict JSON; PostgreSQL's message on failure. */
export function parseJsonb(text: string, typeName = 'json'): JsonValue {
  try {
    return parseJsonExact(text);
  } catch (err) {
    if (err instanceof SyntaxError) {
      throw dataError(`invalid input syntax for type ${typeName}`, '22P02');
    }
    if (err instanceof RangeError) throw dataError('value overflows numeric format', '22003');
    throw err;
  }
}

/**
 * A copy whose objects list their keys in jsonb storage order, so JSON results show keys as
 * PostgreSQL does. (JavaScript still lists integer-like keys first: a JSON object cannot say
 * otherwise once parsed by the client either.)
 */
export function inStorageOrder(v: JsonValue): JsonValue {
  if (Array.isArray(v)) return v.map(inStorageOrder);
  if (!isJsonObject(v)) return v;
  const out: JsonObject = {};
  for (const key of sortedKeys(v)) setKey(out, key, inStorageOrder(v[key]!));
  return out;
}

/** jsonb_out. */
export function formatJsonb(v: JsonValue): string {
  if (isJsonNull(v)) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') return formatJsonNumber(v);
  if (v instanceof JsonNumber) return v.text;
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(formatJsonb).join(', ')}]`;
  return `{${sortedKeys(v as JsonObject)
    .map((k) => `${JSON.stringify(k)}: ${formatJsonb((v as JsonObject)[k]!)}`)
    .join(', ')}}`;
}

/** A key equal for equal jsonb values (numbers numerically: 1.0 and 1 hash alike), for GROUP BY/DISTINCT/hash joins. */
export function jsonbHashKey(v: JsonValue): string {
  if (isJsonNumber(v)) return numericHashKey(jsonNumberText(v));
  if (Array.isArray(v)) return `[${v.map(jsonbHashKey).join(',')}]`;
  if (!isJsonObject(v)) return formatJsonb(v);
  return `{${sortedKeys(v)
    .map((k) => `${JSON.stringify(k)}:${jsonbHashKey(v[k]!)}`)
    .join(',')}}`;
}

/** The type rank of jsonb's order: null < string < number < boolean < array < object. */
function rank(v: JsonValue): number {
  if (isJsonNull(v)) return 0;
  switch (typeof v) {
    case 'string':
      return 1;
    case 'number':
      return 2;
    case 'boolean':
      return 3;
    default:
      return v instanceof JsonNumber ? 2 : Array.isArray(v) ? 4 : 5;
  }
}

function compareNumbers(a: number | JsonNumber, b: number | JsonNumber): number {
  if (typeof a === 'number' && typeof b === 'number') return cmp(a, b);
  return numericCompare(jsonNumberText(a), jsonNumberText(b));
}

function isScalar(v: JsonValue): boolean {
  return rank(v) < 4;
}

function cmp(a: number, b: number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * PostgreSQL's jsonb btree order (compareJsonbContainers). A top-level scalar is a one-element
 * pseudo-array there: it sorts below arrays of one element and above the empty array.
 */
export function compareJsonb(a: JsonValue, b: JsonValue): number {
  const sa = isScalar(a),
    sb = isScalar(b);
  if (sa && Array.isArray(b)) return b.length !== 1 ? cmp(1, b.length) : -1;
  if (sb && Array.isArray(a)) return a.length !== 1 ? cmp(a.length, 1) : 1;
  return compareNested(a, b);
}

function compareNested(a: JsonValue, b: JsonValue): number {
  const ra = rank(a),
    rb = rank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0:
      return 0;
    case 1:
      return compareText(a as string, b as string);
    case 2:
      return compareNumbers(a as number | JsonNumber, b as number | JsonNumber);
    case 3:
      return cmp(Number(a), Number(b));
    case 4: {
      const x = a as JsonValue[],
        y = b as JsonValue[];
      if (x.length !== y.length) return cmp(x.length, y.length);
      for (let i = 0; i < x.length; i++) {
        const c = compareNested(x[i]!, y[i]!);
        if (c !== 0) return c;
      }
      return 0;
    }
    default: {
      const x = a as JsonObject,
        y = b as JsonObject;
      const kx = sortedKeys(x),
        ky = sortedKeys(y);
      if (kx.length !== ky.length) return cmp(kx.length, ky.length);
      for (let i = 0; i < kx.length; i++) {
        const ck = compareText(kx[i]!, ky[i]!);
        if (ck !== 0) return ck;
        const cv = compareNested(x[kx[i]!]!, y[ky[i]!]!);
        if (cv !== 0) return cv;
      }
      return 0;
    }
  }
}

export function jsonbEquals(a: JsonValue, b: JsonValue): boolean {
  return compareNested(a, b) === 0;
}

/** a @> b (jsonb containment). At top level an array contains a scalar it has as an element. */
export function jsonbContains(a: JsonValue, b: JsonValue): boolean {
  if (Array.isArray(a) && isScalar(b)) return a.some((e) => isScalar(e) && jsonbEquals(e, b));
  return contains(a, b);
}

function contains(a: JsonValue, b: JsonValue): boolean {
  const ra = rank(a),
    rb = rank(b);
  if (ra !== rb) return false;
  if (ra < 4) return jsonbEquals(a, b);
  if (ra === 4) {
    const x = a as JsonValue[];
    return (b as JsonValue[]).every((eb) => x.some((ea) => contains(ea, eb)));
  }
  const x = a as JsonObject,
    y = b as JsonObject;
  return Object.keys(y).every((k) => Object.prototype.hasOwnProperty.call(x, k) && contains(x[k]!, y[k]!));
}

/** a ? key: an object key, an array's string element, or the string scalar itself. */
export function jsonbExists(a: JsonValue, key: string): boolean {
  if (typeof a === 'string') return a === key;
  if (Array.isArray(a)) return a.some((e) => e === key);
  if (isJsonObject(a)) return Object.prototype.hasOwnProperty.call(a, key);
  return false;
}

/** jsonb_typeof. */
export function jsonbTypeof(v: JsonValue): string {
  if (isJsonNull(v)) return 'null';
  if (typeof v === 'string') return 'string';
  if (isJsonNumber(v)) return 'number';
  if (typeof v === 'boolean') return 'boolean';
  return Array.isArray(v) ? 'array' : 'object';
}
