/**
 * Values in JSON (query results, REST rows, $n parameters). JSON numbers are doubles, so
 * BIGINT beyond 2^53 and every NUMERIC travel as strings; float NaN/Infinity too. Timestamps are
 * ISO 8601 UTC with 'Z', dates 'YYYY-MM-DD', intervals PostgreSQL's text, arrays JSON arrays,
 * vectors arrays of numbers, JSONB the document itself (its numbers exact: see core/json-exact.ts stringifyJson;
 * a top-level JSON null is JSON_NULL, whose toJSON() is null).
 */
import { SvcError } from '../../core/errors.js';
import { describeJsValue } from '../../core/codec-util.js';
import type { JsonValue } from '../../core/values.js';
import type { Interval, QType, QValue } from './contract.js';
import { formatDate, formatTimestampIso } from './datetime.js';
import { formatInterval } from './interval.js';
import { formatJsonNumber, inStorageOrder } from './jsonb.js';
import { parseNumeric } from './numeric.js';
import { elementType } from './qtype.js';
import { float4Number, formatFloat, INT2_MAX, INT2_MIN, INT4_MAX, INT4_MIN, INT8_MAX, INT8_MIN } from './scalar-text.js';
import { parseTextBase } from './text-io.js';
import { typeText } from './type-names.js';
import { applyTypmod } from './typmod.js';
import { checkVectorElement } from './uuid-vector.js';

const SAFE_INT = 2n ** 53n;

/** The JSON form of a value in query results. */
export function toJson(type: QType, value: QValue): unknown {
  if (value === null) return null;
  switch (type.name) {
    case 'bool':
    case 'int2':
    case 'int4':
    case 'text':
    case 'varchar':
    case 'char':
    case 'uuid':
    case 'unknown':
    case 'numeric':
      return value;
    case 'int8': {
      const b = value as bigint;
      return b <= SAFE_INT && b >= -SAFE_INT ? Number(b) : b.toString();
    }
    case 'float4':
    case 'float8': {
      const n = value as number;
      if (!Number.isFinite(n)) return formatFloat(n);
      return type.name === 'float4' ? float4Number(n) : n;
    }
    case 'jsonb':
      // A top-level JSON null stays JSON_NULL, so in-process callers can tell it from SQL NULL (null); its toJSON()
      // writes `null`, so on the JSON wire both read as null (docs/api.md). Exact numbers stay JsonNumber (stringifyJson).
      return inStorageOrder(value as JsonValue);
    case 'timestamp':
    case 'timestamptz':
      return formatTimestampIso(value as bigint);
    case 'date':
      return formatDate(value as number);
    case 'interval':
      return formatInterval(value as Interval);
    case 'vector':
      return Array.from(value as Float32Array, float4Number);
    case 'array': {
      const el = elementType(type);
      const nested = el.name !== 'jsonb';
      const walk = (v: readonly QValue[]): unknown[] => v.map((e) => (nested && Array.isArray(e) ? walk(e) : toJson(el, e)));
      return walk(value as readonly QValue[]);
    }
  }
}

function mismatch(type: QType, json: unknown): SvcError {
  return new SvcError('TYPE_MISMATCH', `expected ${typeText(type)}, got ${describeJsValue(json)}`, { type: typeText(type) });
}

function intFromJson(type: QType, json: unknown, min: number, max: number): number {
  const n = typeof json === 'string' ? (parseTextBase(type, json) as number) : json;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw mismatch(type, json);
  if (n < min || n > max) throw new SvcError('TYPE_MISMATCH', `${type.name === 'int2' ? 'smallint' : 'integer'} out of range`, { sqlstate: '22003' });
  return n;
}

function allNumbers(json: readonly unknown[]): boolean {
  for (let i = 0; i < json.length; i++) if (typeof json[i] !== 'number') return false;
  return true;
}

/** A JSON array of numbers as a vector: each element checked in order (NaN, past float4), written straight into it (a search's 128+ floats: no array between). */
function vectorOfNumbers(json: readonly number[]): Float32Array {
  const out = new Float32Array(json.length);
  for (let i = 0; i < json.length; i++) out[i] = checkVectorElement(json[i]!);
  return out;
}

function baseFromJson(type: QType, json: unknown): QValue {
  switch (type.name) {
    case 'bool':
      if (typeof json === 'boolean') return json;
      if (typeof json === 'string') return parseTextBase(type, json);
      throw mismatch(type, json);
    case 'int2':
      return intFromJson(type, json, INT2_MIN, INT2_MAX);
    case 'int4':
      return intFromJson(type, json, INT4_MIN, INT4_MAX);
    case 'int8': {
      if (typeof json === 'string') return parseTextBase(type, json);
      if (typeof json === 'bigint') {
        if (json < INT8_MIN || json > INT8_MAX) throw new SvcError('TYPE_MISMATCH', 'bigint out of range', { sqlstate: '22003' });
        return json;
      }
      if (typeof json !== 'number' || !Number.isSafeInteger(json)) throw mismatch(type, json);
      return BigInt(json);
    }
    case 'float4':
    case 'float8':
      if (typeof json === 'number') return type.name === 'float4' ? Math.fround(json) : json;
      if (typeof json === 'string') return parseTextBase(type, json);
      throw mismatch(type, json);
    case 'numeric':
      if (typeof json === 'number') return parseNumeric(formatJsonNumber(json));
      if (typeof json === 'string') return parseNumeric(json);
      if (typeof json === 'bigint') return json.toString();
      throw mismatch(type, json);
    case 'jsonb':
      return json as JsonValue;
    case 'vector':
      if (Array.isArray(json) && allNumbers(json)) return vectorOfNumbers(json as number[]);
      if (typeof json === 'string') return parseTextBase(type, json);
      throw mismatch(type, json);
    case 'array': {
      if (typeof json === 'string') return parseTextBase(type, json);
      if (!Array.isArray(json)) throw mismatch(type, json);
      const el = elementType(type);
      const nested = el.name !== 'jsonb';
      const walk = (v: unknown[]): QValue[] => v.map((e) => (e === null ? null : nested && Array.isArray(e) ? walk(e) : baseFromJson(el, e)));
      return walk(json);
    }
    default:
      // text, varchar, char, uuid, timestamps, date, interval, unknown: their text form
      if (typeof json !== 'string') throw mismatch(type, json);
      return parseTextBase(type, json);
  }
}

/** A JSON value (REST row field, $n parameter) as a value of the type, modifiers enforced as on assignment. */
export function fromJson(type: QType, json: unknown): QValue {
  if (json === null || json === undefined) return null;
  return applyTypmod(type, baseFromJson(type, json), false);
}
