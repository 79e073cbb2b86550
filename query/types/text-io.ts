/**
 * Text output (what ::text and || give) and input (string literals, text casts) of every type.
 * formatText prints BOOLEAN as 'true'/'false' (PostgreSQL's bool->text cast); inside arrays
 * PostgreSQL's boolout letters 't'/'f' appear, as array_out uses them. CHAR(n) loses its padding
 * in ::text, as PostgreSQL's bpchar->text cast trims it.
 */
import type { JsonValue } from '../../core/values.js';
import type { Interval, QType, QValue } from './contract.js';
import { formatArray, parseArray } from './array-text.js';
import { formatDate, formatTimestamp, parseDate, parseTimestamp } from './datetime.js';
import { formatInterval } from './interval.js';
import { parseInterval } from './interval-parse.js';
import { formatJsonb, parseJsonb } from './jsonb.js';
import { parseNumeric } from './numeric.js';
import { elementType } from './qtype.js';
import { formatBool, formatFloat, parseBool, parseFloat4, parseFloat8, parseInt2, parseInt4, parseInt8 } from './scalar-text.js';
import { applyTypmod } from './typmod.js';
import { formatVector, parseUuid, parseVector } from './uuid-vector.js';

/** PostgreSQL's text output of a non-null value. */
export function formatText(type: QType, value: QValue): string {
  switch (type.name) {
    case 'bool':
      return formatBool(value as boolean);
    case 'char':
      return (value as string).replace(/ +$/, '');
    case 'array':
      return formatArray(value as readonly QValue[], elementType(type), (v) => formatElement(elementType(type), v));
    default:
      return formatScalar(type, value);
  }
}

/** The type's output function (boolout 't'/'f', bpcharout keeps padding): used for array elements. */
export function formatElement(type: QType, value: QValue): string {
  if (type.name === 'bool') return value ? 't' : 'f';
  if (type.name === 'char') return value as string;
  return formatText(type, value);
}

function formatScalar(type: QType, value: QValue): string {
  switch (type.name) {
    case 'int2':
    case 'int4':
      return String(value);
    case 'int8':
      return (value as bigint).toString();
    case 'float4':
      return formatFloat(value as number, true);
    case 'float8':
      return formatFloat(value as number);
    case 'jsonb':
      return formatJsonb(value as JsonValue);
    case 'timestamp':
      return formatTimestamp(value as bigint, false);
    case 'timestamptz':
      return formatTimestamp(value as bigint, true);
    case 'date':
      return formatDate(value as number);
    case 'interval':
      return formatInterval(value as Interval);
    case 'vector':
      return formatVector(value as Float32Array);
    default:
      return String(value); // numeric, text, varchar, uuid, unknown: already their text
  }
}

/** The type's input function without its modifier (varchar(3) reads any length; the cast enforces it). */
export function parseTextBase(type: QType, text: string): QValue {
  switch (type.name) {
    case 'bool':
      return parseBool(text);
    case 'int2':
      return parseInt2(text);
    case 'int4':
      return parseInt4(text);
    case 'int8':
      return parseInt8(text);
    case 'float4':
      return parseFloat4(text);
    case 'float8':
      return parseFloat8(text);
    case 'numeric':
      return parseNumeric(text);
    case 'text':
    case 'varchar':
    case 'unknown':
      return text;
    case 'char':
      return text;
    case 'uuid':
      return parseUuid(text);
    case 'jsonb':
      return parseJsonb(text);
    case 'timestamp':
      return parseTimestamp(text, false);
    case 'timestamptz':
      return parseTimestamp(text, true);
    case 'date':
      return parseDate(text);
    case 'interval':
      return parseInterval(text);
    case 'vector':
      return parseVector(text);
    case 'array': {
      const el = elementType(type);
      return parseArray(text, (s) => parseTextBase(el, s));
    }
  }
}

/** PostgreSQL's input function with the type's modifier applied as on assignment (too long is an error). */
export function parseText(type: QType, text: string): QValue {
  return applyTypmod(type, parseTextBase(type, text), false);
}
