/**
 * Casts, per PostgreSQL's pg_cast: each (source, target) pair has a context in which it may be
 * applied implicitly ('i': anywhere, e.g. int4 -> int8), on assignment ('a': INSERT/UPDATE,
 * e.g. int8 -> int4) or only explicitly ('e': CAST/::, e.g. text -> int4, int4 -> bool).
 * Any type converts to a string type on assignment and from one explicitly, through text I/O;
 * an unknown literal converts to anything through the target's input function.
 */
import type { JsonValue } from '../../core/values.js';
import type { CastFn, QType, QValue } from './contract.js';
import { dateToTimestamp, timestampToDate } from './datetime.js';
import { cannotCast, dataError, outOfRange } from './errors.js';
import type { JsonNumber } from '../../core/json-exact.js';
import { isJsonNull, isJsonNumber, jsonbTypeof } from './jsonb.js';
import { floatToNumeric, intToNumeric, numericToBigInt, numericToFloat, parseNumeric } from './numeric.js';
import { elementType, isStringType, sameBaseType } from './qtype.js';
import { checkInt2, checkInt4, INT8_MAX, INT8_MIN } from './scalar-text.js';
import { formatText, parseTextBase } from './text-io.js';
import { pgTypeName } from './type-names.js';
import { applyTypmod } from './typmod.js';
import { checkVectorElement } from './uuid-vector.js';

export type CastMode = 'explicit' | 'assignment' | 'implicit';
type Ctx = 'i' | 'a' | 'e';
type Conv = (v: QValue) => QValue;

const RANK: Record<CastMode, number> = { implicit: 0, assignment: 1, explicit: 2 };
const CTX_RANK: Record<Ctx, number> = { i: 0, a: 1, e: 2 };

function allowed(ctx: Ctx, mode: CastMode): boolean {
  return CTX_RANK[ctx] <= RANK[mode];
}

/** float -> integer: round half to even (rint), then the range check. */
function floatToInt(check: (v: number) => number): Conv {
  return (v) => {
    const x = v as number;
    if (!Number.isFinite(x)) return check(NaN);
    const r = Math.round(x);
    return check(Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r);
  };
}

function floatToInt8(v: QValue): QValue {
  const x = v as number;
  if (!Number.isFinite(x) || x < -9223372036854775808 || x >= 9223372036854775808) throw outOfRange('bigint out of range');
  const r = Math.round(x);
  return BigInt(Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r);
}

function numericToInt(check: (v: bigint) => QValue): Conv {
  return (v) => {
    const b = numericToBigInt(v as string);
    if (b === null) {
      throw dataError(
        `cannot convert ${v === 'NaN' ? 'NaN' : 'infinity'} to ${check === int8Check ? 'bigint' : check === int2Check ? 'smallint' : 'integer'}`,
        '0A000',
      );
    }
    return check(b);
  };
}
const int2Check = (b: bigint): QValue => {
  if (b < -32768n || b > 32767n) throw outOfRange('smallint out of range');
  return Number(b);
};
const int4Check = (b: bigint): QValue => {
  if (b < -2147483648n || b > 2147483647n) throw outOfRange('integer out of range');
  return Number(b);
};
const int8Check = (b: bigint): QValue => {
  if (b < INT8_MIN || b > INT8_MAX) throw outOfRange('bigint out of range');
  return b;
};

function toFloat4(v: number): number {
  const r = Math.fround(v);
  if (!Number.isFinite(r) && Number.isFinite(v)) throw outOfRange('value out of range: overflow');
  if (r === 0 && v !== 0) throw outOfRange('value out of range: underflow');
  return r;
}

/**
 * numeric → float4/float8 as PostgreSQL does it (float4in/float8in of the numeric's text): a finite value that
 * overflows to an infinity or a non-zero one that underflows to 0 is out of range, not Infinity or 0.
 */
function numericToFloatIn(text: string, type: 'real' | 'double precision', round: (x: number) => number): number {
  const r = round(numericToFloat(text));
  const overflow = !Number.isFinite(r) && !Number.isNaN(r) && !text.endsWith('Infinity');
  if (overflow || (r === 0 && /[1-9]/.test(text))) throw outOfRange(`"${text}" is out of range for type ${type}`);
  return r;
}

function jsonbTo(target: string, want: 'number' | 'boolean', then: Conv): Conv {
  return (v) => {
    const j = v as JsonValue;
    if (isJsonNull(j)) return null; // PostgreSQL 15+: a JSON null casts to SQL NULL
    if ((want === 'number' && !isJsonNumber(j)) || (want === 'boolean' && typeof j !== 'boolean')) {
      const kind = jsonbTypeof(j) === 'number' ? 'numeric' : jsonbTypeof(j);
      throw dataError(`cannot cast jsonb ${kind} to type ${target}`, '22023');
    }
    return then(j);
  };
}
const jsonNumberText = (j: QValue): string => (typeof j === 'number' ? parseNumeric(String(j)) : (j as JsonNumber).text);

/** The built-in (non-I/O) casts between different base types: context and conversion. */
function builtinCast(from: QType, to: QType): { ctx: Ctx; conv: Conv } | null {
  const key = `${from.name}>${to.name}`;
  const id = (v: QValue): QValue => v;
  switch (key) {
    case 'int2>int4':
      return { ctx: 'i', conv: id };
    case 'int2>int8':
    case 'int4>int8':
      return { ctx: 'i', conv: (v) => BigInt(v as number) };
    case 'int2>float4':
    case 'int4>float4':
      return { ctx: 'i', conv: (v) => Math.fround(v as number) };
    case 'int2>float8':
    case 'int4>float8':
      return { ctx: 'i', conv: id };
    case 'int2>numeric':
    case 'int4>numeric':
    case 'int8>numeric':
      return { ctx: 'i', conv: (v) => intToNumeric(v as number | bigint) };
    case 'int4>int2':
      return { ctx: 'a', conv: (v) => checkInt2(v as number) };
    case 'int8>int2':
      return { ctx: 'a', conv: (v) => int2Check(v as bigint) };
    case 'int8>int4':
      return { ctx: 'a', conv: (v) => int4Check(v as bigint) };
    case 'int8>float4':
      return { ctx: 'i', conv: (v) => Math.fround(Number(v as bigint)) };
    case 'int8>float8':
      return { ctx: 'i', conv: (v) => Number(v as bigint) };
    case 'float4>float8':
      return { ctx: 'i', conv: id };
    case 'float8>float4':
      return { ctx: 'a', conv: (v) => toFloat4(v as number) };
    case 'float4>int2':
    case 'float8>int2':
      return {
        ctx: 'a',
        conv: floatToInt((x) => {
          if (Number.isNaN(x)) throw outOfRange('smallint out of range');
          return checkInt2(x);
        }),
      };
    case 'float4>int4':
    case 'float8>int4':
      return {
        ctx: 'a',
        conv: floatToInt((x) => {
          if (Number.isNaN(x)) throw outOfRange('integer out of range');
          return checkInt4(x);
        }),
      };
    case 'float4>int8':
    case 'float8>int8':
      return { ctx: 'a', conv: floatToInt8 };
    case 'float4>numeric':
      return { ctx: 'a', conv: (v) => floatToNumeric(v as number, 6) };
    case 'float8>numeric':
      return { ctx: 'a', conv: (v) => floatToNumeric(v as number, 15) };
    case 'numeric>int2':
      return { ctx: 'a', conv: numericToInt(int2Check) };
    case 'numeric>int4':
      return { ctx: 'a', conv: numericToInt(int4Check) };
    case 'numeric>int8':
      return { ctx: 'a', conv: numericToInt(int8Check) };
    case 'numeric>float4':
      return { ctx: 'i', conv: (v) => numericToFloatIn(v as string, 'real', Math.fround) };
    case 'numeric>float8':
      return { ctx: 'i', conv: (v) => numericToFloatIn(v as string, 'double precision', (x) => x) };
    case 'bool>int4':
      return { ctx: 'e', conv: (v) => (v ? 1 : 0) };
    case 'int4>bool':
      return { ctx: 'e', conv: (v) => v !== 0 };
    case 'date>timestamp':
    case 'date>timestamptz':
      return { ctx: 'i', conv: (v) => dateToTimestamp(v as number) };
    case 'timestamp>timestamptz':
      return { ctx: 'i', conv: id };
    case 'timestamptz>timestamp':
      return { ctx: 'a', conv: id };
    case 'timestamp>date':
    case 'timestamptz>date':
      return { ctx: 'a', conv: (v) => timestampToDate(v as bigint) };
    case 'jsonb>bool':
      return { ctx: 'e', conv: jsonbTo('boolean', 'boolean', id) };
    case 'jsonb>numeric':
      return { ctx: 'e', conv: jsonbTo('numeric', 'number', jsonNumberText) };
    case 'jsonb>int2':
      return { ctx: 'e', conv: jsonbTo('smallint', 'number', (j) => numericToInt(int2Check)(jsonNumberText(j))) };
    case 'jsonb>int4':
      return { ctx: 'e', conv: jsonbTo('integer', 'number', (j) => numericToInt(int4Check)(jsonNumberText(j))) };
    case 'jsonb>int8':
      return { ctx: 'e', conv: jsonbTo('bigint', 'number', (j) => numericToInt(int8Check)(jsonNumberText(j))) };
    case 'jsonb>float4':
      return { ctx: 'e', conv: jsonbTo('real', 'number', (j) => toFloat4(Number(jsonNumberText(j)))) };
    case 'jsonb>float8':
      return { ctx: 'e', conv: jsonbTo('double precision', 'number', (j) => Number(jsonNumberText(j))) };
    case 'char>text':
    case 'char>varchar':
      return { ctx: 'i', conv: (v) => (v as string).replace(/ +$/, '') };
    case 'text>varchar':
    case 'varchar>text':
    case 'text>char':
    case 'varchar>char':
      return { ctx: 'i', conv: id };
    case 'vector>array':
      return elementType(to).name === 'float4' ? { ctx: 'i', conv: (v) => Array.from(v as Float32Array) } : null;
    case 'array>vector':
      return ['float4', 'float8', 'int4', 'numeric'].includes(elementType(from).name) ? { ctx: 'a', conv: arrayToVector(elementType(from)) } : null;
    default:
      return null;
  }
}

function arrayToVector(el: QType): Conv {
  return (v) => {
    const arr = v as readonly QValue[];
    if (arr.some((e) => e === null)) throw dataError('array must not contain nulls', '22004');
    const toNum = (e: QValue): number => (el.name === 'numeric' ? numericToFloat(e as string) : (e as number));
    if (arr.length === 0) throw dataError('vector must have at least 1 dimension', '22000');
    return Float32Array.from(arr.map((e) => checkVectorElement(toNum(e))));
  };
}

/** The cast's context and conversion (without the target's modifier), or null when PostgreSQL has none. */
export function findCast(from: QType, to: QType): { ctx: Ctx; conv: Conv } | null {
  if (from.name === 'unknown') return { ctx: 'i', conv: (v) => parseTextBase(to, v as string) };
  if (sameBaseType(from, to)) return { ctx: 'i', conv: (v) => v };
  const builtin = builtinCast(from, to);
  if (builtin !== null) return builtin;
  if (from.name === 'array' && to.name === 'array') {
    const inner = findCast(elementType(from), elementType(to));
    if (inner === null) return null;
    const nested = elementType(from).name !== 'jsonb';
    const walk = (v: QValue): QValue => (v as readonly QValue[]).map((e) => (e === null ? null : nested && Array.isArray(e) ? walk(e) : inner.conv(e)));
    return { ctx: inner.ctx, conv: walk };
  }
  if (isStringType(to)) return { ctx: 'a', conv: (v) => formatText(from, v) };
  if (isStringType(from)) return { ctx: 'e', conv: (v) => parseTextBase(to, from.name === 'char' ? (v as string).replace(/ +$/, '') : (v as string)) };
  return null;
}

/** The cast function for `mode`, or null when PostgreSQL would refuse it in that context. */
export function resolveCast(from: QType, to: QType, mode: CastMode): CastFn | null {
  if (to.name === 'unknown') return (v) => v;
  const found = findCast(from, to);
  if (found === null || !allowed(found.ctx, mode)) return null;
  const conv = found.conv;
  const explicit = mode === 'explicit';
  const needsTypmod = to.length !== undefined || to.precision !== undefined || to.dimension !== undefined || to.name === 'array';
  if (!needsTypmod) return (v) => (v === null ? null : conv(v));
  return (v) => (v === null ? null : applyTypmod(to, conv(v), explicit));
}

/** True when a value of `from` may be passed where `to` is expected without a written cast. */
export function canCoerceImplicitly(from: QType, to: QType): boolean {
  if (from.name === 'unknown') return true;
  const found = findCast(from, to);
  return found !== null && found.ctx === 'i';
}

/** A cast that must exist (throws PostgreSQL's 'cannot cast type' otherwise). */
export function requireCast(from: QType, to: QType, mode: CastMode): CastFn {
  const fn = resolveCast(from, to, mode);
  if (fn === null) throw cannotCast(pgTypeName(from), pgTypeName(to));
  return fn;
}
