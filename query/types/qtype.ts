/**
 * QType constants and predicates shared by the type system, the function library and the engine.
 * PostgreSQL groups types into categories (pg_type.typcategory); overload resolution and
 * commonType follow those categories and their preferred types.
 */
import type { QType, QTypeName } from './contract.js';

/** The unmodified types (no length, precision or dimension). */
export const T = {
  bool: { name: 'bool' },
  int2: { name: 'int2' },
  int4: { name: 'int4' },
  int8: { name: 'int8' },
  numeric: { name: 'numeric' },
  float4: { name: 'float4' },
  float8: { name: 'float8' },
  text: { name: 'text' },
  varchar: { name: 'varchar' },
  char: { name: 'char' },
  uuid: { name: 'uuid' },
  jsonb: { name: 'jsonb' },
  timestamp: { name: 'timestamp' },
  timestamptz: { name: 'timestamptz' },
  date: { name: 'date' },
  vector: { name: 'vector' },
  interval: { name: 'interval' },
  unknown: { name: 'unknown' },
} as const satisfies Record<Exclude<QTypeName, 'array'>, QType>;

/** An array type of `element` (PostgreSQL arrays of arrays are multi-dimensional arrays of the element). */
export function arrayOf(element: QType): QType {
  return { name: 'array', element: element.name === 'array' ? (element.element ?? T.text) : element };
}

/** PostgreSQL's type categories (pg_type.typcategory). */
export type TypeCategory = 'B' | 'N' | 'S' | 'D' | 'T' | 'U' | 'A' | 'X';

export function typeCategory(t: QType): TypeCategory {
  switch (t.name) {
    case 'bool':
      return 'B';
    case 'int2':
    case 'int4':
    case 'int8':
    case 'numeric':
    case 'float4':
    case 'float8':
      return 'N';
    case 'text':
    case 'varchar':
    case 'char':
      return 'S';
    case 'date':
    case 'timestamp':
    case 'timestamptz':
      return 'D';
    case 'interval':
      return 'T';
    case 'array':
      return 'A';
    case 'unknown':
      return 'X';
    case 'uuid':
    case 'jsonb':
    case 'vector':
      return 'U';
  }
}

/** The preferred type of its category (float8, text, timestamptz, interval, bool). */
export function isPreferredType(t: QType): boolean {
  return t.name === 'float8' || t.name === 'text' || t.name === 'timestamptz' || t.name === 'interval' || t.name === 'bool';
}

export function isIntegerType(t: QType): boolean {
  return t.name === 'int2' || t.name === 'int4' || t.name === 'int8';
}

export function isFloatType(t: QType): boolean {
  return t.name === 'float4' || t.name === 'float8';
}

/** int2, int4, int8, numeric, float4, float8. */
export function isNumericType(t: QType): boolean {
  return typeCategory(t) === 'N';
}

/** text, varchar, char. */
export function isStringType(t: QType): boolean {
  return t.name === 'text' || t.name === 'varchar' || t.name === 'char';
}

export function isDateTimeType(t: QType): boolean {
  return t.name === 'date' || t.name === 'timestamp' || t.name === 'timestamptz';
}

export function isArrayType(t: QType): boolean {
  return t.name === 'array';
}

/**
 * The element type of an array type: the innermost non-array type, since PostgreSQL's arrays of
 * arrays are multi-dimensional arrays of that element (text for a malformed array type).
 */
export function elementType(t: QType): QType {
  let e = t.element ?? T.text;
  while (e.name === 'array') e = e.element ?? T.text;
  return e;
}

/** Same type ignoring modifiers (varchar(3) and varchar(5) are the same base type). */
export function sameBaseType(a: QType, b: QType): boolean {
  if (a.name !== b.name) return false;
  if (a.name === 'array') return sameBaseType(elementType(a), elementType(b));
  return true;
}

/** Same type including modifiers. */
export function sameType(a: QType, b: QType): boolean {
  if (a.name !== b.name) return false;
  if (a.name === 'array') return sameType(elementType(a), elementType(b));
  return a.length === b.length && a.precision === b.precision && a.scale === b.scale && a.dimension === b.dimension;
}

/** The type without its modifiers (numeric(10,2) -> numeric); arrays keep their element's base. */
export function baseType(t: QType): QType {
  if (t.name === 'array') return arrayOf(baseType(elementType(t)));
  return T[t.name];
}

/** True when the type carries a modifier that a cast to it must enforce. */
export function hasTypmod(t: QType): boolean {
  return t.length !== undefined || t.precision !== undefined || t.scale !== undefined || t.dimension !== undefined;
}
