/**
 * Type names: parsing DDL/cast spellings into QTypes, the SQL text shown in result metadata and
 * catalogs (typeText), and PostgreSQL's own lower-case names used inside error messages (pgTypeName).
 */
import { SvcError } from '../../core/errors.js';
import { sqlTypeText } from '../../core/values.js';
import type { QType } from './contract.js';
import { arrayOf, elementType, T } from './qtype.js';

/** PostgreSQL's limits on type modifiers. */
const NUMERIC_PRECISION_MAX = 1000;
const NUMERIC_SCALE_MIN = -1000;
const NUMERIC_SCALE_MAX = 1000;
const CHAR_LENGTH_MAX = 10_485_760;
const VECTOR_DIMENSION_MAX = 16_000;

const SIMPLE_NAMES: Record<string, QType> = {
  serial: T.int4,
  serial4: T.int4,
  bigserial: T.int8,
  serial8: T.int8,
  smallserial: T.int2,
  serial2: T.int2,
  int: T.int4,
  integer: T.int4,
  int4: T.int4,
  smallint: T.int2,
  int2: T.int2,
  bigint: T.int8,
  int8: T.int8,
  real: T.float4,
  float4: T.float4,
  'double precision': T.float8,
  float8: T.float8,
  boolean: T.bool,
  bool: T.bool,
  text: T.text,
  json: T.jsonb,
  jsonb: T.jsonb,
  'timestamp without time zone': T.timestamp,
  'timestamp with time zone': T.timestamptz,
  timestamptz: T.timestamptz,
  date: T.date,
  uuid: T.uuid,
  interval: T.interval,
  bpchar: T.char,
  unknown: T.unknown,
};

function undefinedType(text: string): SvcError {
  return new SvcError('INVALID_QUERY', `type "${text}" does not exist`, { sqlstate: '42704' });
}

function badModifier(message: string): SvcError {
  return new SvcError('INVALID_QUERY', message, { sqlstate: '22023' });
}

/** Parses 'varchar(20)', 'double precision', 'int[]', 'vector(3)', 'numeric(10, 2)', 'timestamp(3) with time zone'. */
export function parseTypeName(text: string): QType {
  let s = text.trim().toLowerCase().replace(/\s+/g, ' ').replace(/"/g, '');
  let arrayDepth = 0;
  for (;;) {
    const m = /^(.*?)\s*\[\s*\d*\s*\]$/.exec(s);
    if (m) {
      s = m[1]!;
      arrayDepth++;
      continue;
    }
    const a = /^(.*?)\s+array$/.exec(s);
    if (a) {
      s = a[1]!;
      arrayDepth++;
      continue;
    }
    break;
  }
  s = s.replace(/^pg_catalog\./, '').replace(/^public\./, '');
  const base = parseScalarTypeName(s, text);
  return arrayDepth > 0 ? arrayOf(base) : base;
}

function parseScalarTypeName(s: string, original: string): QType {
  const simple = SIMPLE_NAMES[s];
  if (simple !== undefined) return simple;
  const m = /^([a-z_ ]+?)\s*(?:\(\s*([^)]*?)\s*\))?(\s+(?:with|without) time zone)?$/.exec(s);
  if (!m) throw undefinedType(original.trim());
  const name = m[1]!;
  const args = m[2] === undefined ? [] : m[2].split(',').map((a) => a.trim());
  const zone = m[3]?.trim();
  const ints = args.map((a) => {
    if (!/^[+-]?\d+$/.test(a)) throw new SvcError('INVALID_QUERY', `type modifiers must be simple constants or identifiers`, { sqlstate: '22023' });
    return Number(a);
  });
  switch (name) {
    case 'numeric':
    case 'decimal':
      return numericType(ints);
    case 'varchar':
    case 'character varying':
    case 'char varying':
      return ints.length === 0 ? T.varchar : { name: 'varchar', length: charLength(ints, 'varchar') };
    case 'char':
    case 'character':
    case 'bpchar':
      return { name: 'char', length: ints.length === 0 ? 1 : charLength(ints, 'char') };
    case 'float':
      return floatType(ints);
    case 'timestamp':
      checkPrecision(ints, 'timestamp');
      return zone === 'with time zone' ? T.timestamptz : T.timestamp;
    case 'timestamptz':
      checkPrecision(ints, 'timestamp');
      return T.timestamptz;
    case 'vector':
      return vectorType(ints);
    default:
      if (/^interval\b/.test(name)) return T.interval; // interval [fields] [(p)]: fields/precision are not enforced
      throw undefinedType(original.trim());
  }
}

function numericType(ints: number[]): QType {
  if (ints.length === 0) return T.numeric;
  if (ints.length > 2) throw badModifier('invalid NUMERIC type modifier');
  const precision = ints[0]!;
  const scale = ints[1] ?? 0;
  if (precision < 1 || precision > NUMERIC_PRECISION_MAX) {
    throw badModifier(`NUMERIC precision ${precision} must be between 1 and ${NUMERIC_PRECISION_MAX}`);
  }
  if (scale < NUMERIC_SCALE_MIN || scale > NUMERIC_SCALE_MAX) {
    throw badModifier(`NUMERIC scale ${scale} must be between ${NUMERIC_SCALE_MIN} and ${NUMERIC_SCALE_MAX}`);
  }
  return { name: 'numeric', precision, scale };
}

function charLength(ints: number[], name: string): number {
  if (ints.length !== 1) throw badModifier(`invalid type modifier`);
  const n = ints[0]!;
  if (n < 1) throw badModifier(`length for type ${name} must be at least 1`);
  if (n > CHAR_LENGTH_MAX) throw badModifier(`length for type ${name} cannot exceed ${CHAR_LENGTH_MAX}`);
  return n;
}

function floatType(ints: number[]): QType {
  if (ints.length === 0) return T.float8;
  const p = ints[0]!;
  if (p < 1) throw badModifier('precision for type float must be at least 1 bit');
  if (p > 53) throw badModifier('precision for type float must be less than 54 bits');
  return p <= 24 ? T.float4 : T.float8;
}

function checkPrecision(ints: number[], name: string): void {
  if (ints.length > 1) throw badModifier(`invalid type modifier`);
  if (ints.length === 1 && ints[0]! < 0) throw badModifier(`${name.toUpperCase()}(${ints[0]}) precision must not be negative`);
}

function vectorType(ints: number[]): QType {
  if (ints.length === 0) return T.vector;
  if (ints.length > 1) throw badModifier('invalid type modifier');
  const n = ints[0]!;
  if (n < 1) throw badModifier('dimensions for type vector must be at least 1');
  if (n > VECTOR_DIMENSION_MAX) throw badModifier(`dimensions for type vector cannot exceed ${VECTOR_DIMENSION_MAX}`);
  return { name: 'vector', dimension: n };
}

/** SQL text for result metadata and catalogs: INTEGER, NUMERIC(10,2), TEXT[], VECTOR(3), INTERVAL. */
export function typeText(t: QType): string {
  switch (t.name) {
    case 'array':
      return `${typeText(elementType(t))}[]`;
    case 'interval':
      return 'INTERVAL';
    case 'unknown':
      return 'TEXT';
    case 'vector':
      return t.dimension === undefined ? 'VECTOR' : `VECTOR(${t.dimension})`;
    case 'char':
      return t.length === undefined ? 'CHAR' : `CHAR(${t.length})`;
    default:
      return sqlTypeText({ ...t, name: t.name, element: undefined });
  }
}

/** PostgreSQL's format_type name, used in its error messages: integer, character varying(3), text[]. */
export function pgTypeName(t: QType): string {
  switch (t.name) {
    case 'bool':
      return 'boolean';
    case 'int2':
      return 'smallint';
    case 'int4':
      return 'integer';
    case 'int8':
      return 'bigint';
    case 'float4':
      return 'real';
    case 'float8':
      return 'double precision';
    case 'numeric':
      return t.precision === undefined ? 'numeric' : `numeric(${t.precision},${t.scale ?? 0})`;
    case 'text':
      return 'text';
    case 'varchar':
      return t.length === undefined ? 'character varying' : `character varying(${t.length})`;
    case 'char':
      return t.length === undefined ? 'character' : `character(${t.length})`;
    case 'uuid':
      return 'uuid';
    case 'jsonb':
      return 'jsonb';
    case 'timestamp':
      return 'timestamp without time zone';
    case 'timestamptz':
      return 'timestamp with time zone';
    case 'date':
      return 'date';
    case 'vector':
      return t.dimension === undefined ? 'vector' : `vector(${t.dimension})`;
    case 'interval':
      return 'interval';
    case 'unknown':
      return 'unknown';
    case 'array':
      return `${pgTypeName(elementType(t))}[]`;
  }
}

/** The name PostgreSQL uses in 'invalid input syntax for type X' (no modifiers). */
export function pgInputTypeName(t: QType): string {
  switch (t.name) {
    case 'numeric':
      return 'numeric';
    case 'varchar':
      return 'character varying';
    case 'char':
      return 'character';
    case 'vector':
      return 'vector';
    default:
      return pgTypeName(t);
  }
}
