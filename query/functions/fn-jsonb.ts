/** jsonb functions: builders, accessors, jsonb_set, jsonb_strip_nulls, jsonb_pretty, to_jsonb. */
import type { JsonValue } from '../../core/values.js';
import type { QType, QValue } from '../types/contract.js';
import { dataError } from '../types/errors.js';
import {
  asElement,
  asTopLevel,
  formatJsonb,
  isJsonNull,
  isJsonObject,
  jsonbKeyText,
  jsonbTypeof,
  setKey,
  sortedKeys,
  type JsonObject,
} from '../types/jsonb.js';
import { arrayOf, T } from '../types/qtype.js';
import { jsonbAsText, jsonbGetPath } from './jsonb-ops.js';
import type { FnDef, Impl } from './registry.js';
import { toJsonb } from './to-jsonb.js';

function fn(name: string, params: QType[], ret: QType, impl: Impl): FnDef {
  return { name, params, ret, make: () => impl };
}

const j = (v: QValue | undefined): JsonValue => v as JsonValue;
const present = (v: JsonValue | undefined): QValue => (v === undefined ? null : asTopLevel(v));

function buildObject(types: readonly QType[], args: readonly QValue[]): JsonValue {
  if (args.length % 2 !== 0)
    throw dataError(
      'argument list must have even number of elements',
      '22023',
      'The arguments of jsonb_build_object() must consist of alternating keys and values.',
    );
  const out: JsonObject = {};
  for (let i = 0; i < args.length; i += 2) {
    const k = args[i]!;
    if (k === null) throw dataError(`argument ${i + 1}: key must not be null`, '22004');
    const key = toJsonb(types[i]!, k);
    setKey(out, jsonbKeyText(key), asElement(toJsonb(types[i + 1]!, args[i + 1] ?? null)));
  }
  return out;
}

function arrayLength(a: JsonValue): number {
  if (Array.isArray(a)) return a.length;
  throw dataError(isJsonObject(a) ? 'cannot get array length of a non-array' : 'cannot get array length of a scalar', '22023');
}

/** jsonb_set(target, path, value, create_missing). */
export function jsonbSet(target: JsonValue, path: readonly QValue[], value: JsonValue, create: boolean): JsonValue {
  if (!Array.isArray(target) && !isJsonObject(target)) throw dataError('cannot set path in scalar', '22023');
  if (path.length === 0) return target;
  const [head, ...rest] = path;
  if (head === null) throw dataError('path element at position 1 is null', '22004');
  const key = head as string;
  if (Array.isArray(target)) {
    if (!/^\s*-?\d+\s*$/.test(key)) throw dataError(`path element at position 1 is not an integer: "${key}"`, '22P02');
    const n = Number(key);
    let i = n < 0 ? target.length + n : n;
    const out = [...target];
    if (i < 0 || i >= target.length) {
      if (!create || rest.length > 0) return target;
      if (i < 0) {
        out.unshift(value);
        return out;
      }
      out.push(value);
      return out;
    }
    out[i] = rest.length === 0 ? value : descend(out[i]!, rest, value, create);
    i = 0;
    return out;
  }
  const has = Object.prototype.hasOwnProperty.call(target, key);
  if (!has && (!create || rest.length > 0)) return target;
  const out: JsonObject = {};
  for (const k of Object.keys(target)) setKey(out, k, target[k]!);
  setKey(out, key, rest.length === 0 ? value : descend(target[key]!, rest, value, create));
  return out;
}

function descend(child: JsonValue, rest: readonly QValue[], value: JsonValue, create: boolean): JsonValue {
  if (!Array.isArray(child) && !isJsonObject(child)) return child;
  return jsonbSet(child, rest, value, create);
}

function stripNulls(v: JsonValue): JsonValue {
  if (Array.isArray(v)) return v.map(stripNulls);
  if (!isJsonObject(v)) return v;
  const out: JsonObject = {};
  for (const k of Object.keys(v)) if (!isJsonNull(v[k])) setKey(out, k, stripNulls(v[k]!));
  return out;
}

/** jsonb_pretty: four-space indentation, PostgreSQL's layout. */
function pretty(v: JsonValue, indent = ''): string {
  const inner = indent + '    ';
  if (Array.isArray(v)) {
    if (v.length === 0) return '[\n' + indent + ']';
    return `[\n${v.map((e) => inner + pretty(e, inner)).join(',\n')}\n${indent}]`;
  }
  if (isJsonObject(v)) {
    const keys = sortedKeys(v);
    if (keys.length === 0) return '{\n' + indent + '}';
    return `{\n${keys.map((k) => `${inner}${JSON.stringify(k)}: ${pretty(v[k]!, inner)}`).join(',\n')}\n${indent}}`;
  }
  return typeof v === 'string' ? JSON.stringify(v) : formatJsonb(v);
}

const textArr = arrayOf(T.text);

export const JSONB_FN_DEFS: readonly FnDef[] = [
  { name: 'jsonb_build_object', params: [], variadic: 'any', ret: T.jsonb, strict: false, make: (p) => (args) => buildObject(p, args) },
  {
    name: 'jsonb_build_array',
    params: [],
    variadic: 'any',
    ret: T.jsonb,
    strict: false,
    make: (p) => (args) => args.map((v, i) => asElement(toJsonb(p[i]!, v ?? null))),
  },
  {
    name: 'to_jsonb',
    params: ['anyelement'],
    ret: T.jsonb,
    make:
      (p) =>
      ([v]) =>
        toJsonb(p[0]!, v!),
  },
  fn('jsonb_array_length', [T.jsonb], T.int4, ([a]) => arrayLength(j(a!))),
  fn('jsonb_typeof', [T.jsonb], T.text, ([a]) => jsonbTypeof(j(a!))),
  {
    name: 'jsonb_extract_path',
    params: [T.jsonb],
    variadic: T.text,
    ret: T.jsonb,
    make:
      () =>
      ([a, ...p]) =>
        present(jsonbGetPath(j(a!), p)),
  },
  {
    name: 'jsonb_extract_path_text',
    params: [T.jsonb],
    variadic: T.text,
    ret: T.text,
    make:
      () =>
      ([a, ...p]) =>
        jsonbAsText(jsonbGetPath(j(a!), p)),
  },
  fn('jsonb_set', [T.jsonb, textArr, T.jsonb], T.jsonb, ([a, p, v]) => jsonbSet(j(a!), p as QValue[], asElement(j(v!)), true)),
  fn('jsonb_set', [T.jsonb, textArr, T.jsonb, T.bool], T.jsonb, ([a, p, v, c]) => jsonbSet(j(a!), p as QValue[], asElement(j(v!)), c as boolean)),
  fn('jsonb_strip_nulls', [T.jsonb], T.jsonb, ([a]) => stripNulls(j(a!))),
  fn('jsonb_pretty', [T.jsonb], T.text, ([a]) => pretty(j(a!))),
];

/**
 * svcdb has no json type (`json` is jsonb: types/type-names.ts), so PostgreSQL's json_* functions
 * are the jsonb ones under their names: the same values over the JSON wire; as text they print as
 * jsonb does (keys sorted, `: ` and `, `), where PostgreSQL's json keeps the text as built (docs/sql.md).
 */
const JSON_TWINS = new Set([
  'jsonb_build_object',
  'jsonb_build_array',
  'to_jsonb',
  'jsonb_array_length',
  'jsonb_typeof',
  'jsonb_extract_path',
  'jsonb_extract_path_text',
  'jsonb_strip_nulls',
]);
export const JSON_FN_DEFS: readonly FnDef[] = JSONB_FN_DEFS.filter((d) => JSON_TWINS.has(d.name)).map((d) => ({ ...d, name: d.name.replace('jsonb', 'json') }));
