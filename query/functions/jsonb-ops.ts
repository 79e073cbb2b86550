/**
 * jsonb operators: -> ->> #> #>> (field, element, path), @> <@ ? ?| ?& (containment, existence),
 * - #- (deletion) and || (concatenation), with PostgreSQL's semantics and messages.
 */
import type { JsonValue } from '../../core/values.js';
import type { QValue } from '../types/contract.js';
import { dataError } from '../types/errors.js';
import { asElement, asTopLevel, formatJsonb, isJsonNull, isJsonObject, jsonbContains, jsonbExists, setKey, type JsonObject } from '../types/jsonb.js';
import { arrayOf, T } from '../types/qtype.js';
import type { FnDef } from './registry.js';

/** a -> key / a -> index (negative counts from the end); undefined when absent. */
export function jsonbGet(a: JsonValue, step: string | number): JsonValue | undefined {
  if (typeof step === 'number') {
    if (!Array.isArray(a)) return undefined;
    const i = step < 0 ? a.length + step : step;
    return i >= 0 && i < a.length ? a[i] : undefined;
  }
  if (isJsonObject(a)) return Object.prototype.hasOwnProperty.call(a, step) ? a[step] : undefined;
  return undefined;
}

/** a #> path: text steps index arrays when they read as integers. */
export function jsonbGetPath(a: JsonValue, path: readonly QValue[]): JsonValue | undefined {
  let cur: JsonValue | undefined = a;
  for (const step of path) {
    if (cur === undefined || step === null) return undefined;
    const key = step as string;
    if (Array.isArray(cur)) {
      if (!/^\s*-?\d+\s*$/.test(key)) return undefined;
      cur = jsonbGet(cur, Number(key));
    } else {
      cur = jsonbGet(cur, key);
    }
  }
  return cur;
}

/** The ->> form of a value: strings bare, JSON null as SQL NULL, the rest as jsonb text. */
export function jsonbAsText(v: JsonValue | undefined): string | null {
  if (v === undefined || isJsonNull(v)) return null;
  return typeof v === 'string' ? v : formatJsonb(v);
}

/** a || b: objects merge (right wins); otherwise both as arrays (a scalar is a one-element array) concatenated. */
export function jsonbConcat(a: JsonValue, b: JsonValue): JsonValue {
  if (isJsonObject(a) && isJsonObject(b)) {
    const out: JsonObject = {};
    for (const k of Object.keys(a)) setKey(out, k, a[k]!);
    for (const k of Object.keys(b)) setKey(out, k, b[k]!);
    return out;
  }
  const arr = (x: JsonValue): JsonValue[] => (Array.isArray(x) ? x : [asElement(x)]);
  return [...arr(a), ...arr(b)];
}

function withoutKeys(o: JsonObject, keys: ReadonlySet<string>): JsonObject {
  const out: JsonObject = {};
  for (const k of Object.keys(o)) if (!keys.has(k)) setKey(out, k, o[k]!);
  return out;
}

/** a - key(s): object keys, or an array's string elements. */
export function jsonbDeleteKeys(a: JsonValue, keys: readonly string[]): JsonValue {
  if (isJsonObject(a)) return withoutKeys(a, new Set(keys));
  if (Array.isArray(a)) return a.filter((e) => !(typeof e === 'string' && keys.includes(e)));
  throw dataError('cannot delete from scalar', '22023');
}

/** a - index. */
export function jsonbDeleteIndex(a: JsonValue, index: number): JsonValue {
  if (isJsonObject(a)) throw dataError('cannot delete from object using integer index', '22023');
  if (!Array.isArray(a)) throw dataError('cannot delete from scalar', '22023');
  const i = index < 0 ? a.length + index : index;
  return a.filter((_, j) => j !== i);
}

/** a #- path. */
export function jsonbDeletePath(a: JsonValue, path: readonly QValue[]): JsonValue {
  if (!Array.isArray(a) && !isJsonObject(a)) throw dataError('cannot delete path in scalar', '22023');
  if (path.length === 0) return a;
  const [head, ...rest] = path;
  if (head === null) throw dataError(`path element at position 1 is null`, '22004');
  const key = head as string;
  if (Array.isArray(a)) {
    if (!/^\s*-?\d+\s*$/.test(key)) throw dataError(`path element at position 1 is not an integer: "${key}"`, '22P02');
    const n = Number(key);
    const i = n < 0 ? a.length + n : n;
    if (i < 0 || i >= a.length) return a;
    if (rest.length === 0) return a.filter((_, j) => j !== i);
    const child = a[i]!;
    if (!Array.isArray(child) && !isJsonObject(child)) return a;
    return a.map((e, j) => (j === i ? jsonbDeletePath(e, rest) : e));
  }
  if (!Object.prototype.hasOwnProperty.call(a, key)) return a;
  if (rest.length === 0) return withoutKeys(a, new Set([key]));
  const child = a[key]!;
  if (!Array.isArray(child) && !isJsonObject(child)) return a;
  const out: JsonObject = {};
  for (const k of Object.keys(a)) setKey(out, k, k === key ? jsonbDeletePath(child, rest) : a[k]!);
  return out;
}

const textArr = arrayOf(T.text);
const j = (v: QValue | undefined): JsonValue => v as JsonValue;
/** JSON null from -> is a jsonb 'null' value, not SQL NULL; only a missing field is SQL NULL. */
const present = (v: JsonValue | undefined): QValue => (v === undefined ? null : asTopLevel(v));

export const JSONB_OP_DEFS: readonly FnDef[] = [
  {
    name: '->',
    params: [T.jsonb, T.text],
    ret: T.jsonb,
    make:
      () =>
      ([a, k]) =>
        present(jsonbGet(j(a!), k as string)),
  },
  {
    name: '->',
    params: [T.jsonb, T.int4],
    ret: T.jsonb,
    make:
      () =>
      ([a, k]) =>
        present(jsonbGet(j(a!), k as number)),
  },
  {
    name: '->>',
    params: [T.jsonb, T.text],
    ret: T.text,
    make:
      () =>
      ([a, k]) =>
        jsonbAsText(jsonbGet(j(a!), k as string)),
  },
  {
    name: '->>',
    params: [T.jsonb, T.int4],
    ret: T.text,
    make:
      () =>
      ([a, k]) =>
        jsonbAsText(jsonbGet(j(a!), k as number)),
  },
  {
    name: '#>',
    params: [T.jsonb, textArr],
    ret: T.jsonb,
    make:
      () =>
      ([a, p]) =>
        present(jsonbGetPath(j(a!), p as QValue[])),
  },
  {
    name: '#>>',
    params: [T.jsonb, textArr],
    ret: T.text,
    make:
      () =>
      ([a, p]) =>
        jsonbAsText(jsonbGetPath(j(a!), p as QValue[])),
  },
  {
    name: '@>',
    params: [T.jsonb, T.jsonb],
    ret: T.bool,
    make:
      () =>
      ([a, b]) =>
        jsonbContains(j(a!), j(b!)),
  },
  {
    name: '<@',
    params: [T.jsonb, T.jsonb],
    ret: T.bool,
    make:
      () =>
      ([a, b]) =>
        jsonbContains(j(b!), j(a!)),
  },
  {
    name: '?',
    params: [T.jsonb, T.text],
    ret: T.bool,
    make:
      () =>
      ([a, k]) =>
        jsonbExists(j(a!), k as string),
  },
  {
    name: '?|',
    params: [T.jsonb, textArr],
    ret: T.bool,
    make:
      () =>
      ([a, ks]) =>
        (ks as QValue[]).some((k) => k !== null && jsonbExists(j(a!), k as string)),
  },
  {
    name: '?&',
    params: [T.jsonb, textArr],
    ret: T.bool,
    make:
      () =>
      ([a, ks]) =>
        (ks as QValue[]).every((k) => k === null || jsonbExists(j(a!), k as string)),
  },
  {
    name: '-',
    params: [T.jsonb, T.text],
    ret: T.jsonb,
    make:
      () =>
      ([a, k]) =>
        jsonbDeleteKeys(j(a!), [k as string]),
  },
  {
    name: '-',
    params: [T.jsonb, textArr],
    ret: T.jsonb,
    make:
      () =>
      ([a, ks]) =>
        jsonbDeleteKeys(
          j(a!),
          (ks as QValue[]).filter((k): k is string => k !== null),
        ),
  },
  {
    name: '-',
    params: [T.jsonb, T.int4],
    ret: T.jsonb,
    make:
      () =>
      ([a, i]) =>
        jsonbDeleteIndex(j(a!), i as number),
  },
  {
    name: '#-',
    params: [T.jsonb, textArr],
    ret: T.jsonb,
    make:
      () =>
      ([a, p]) =>
        jsonbDeletePath(j(a!), p as QValue[]),
  },
];
