/**
 * Type modifiers: VARCHAR(n)/CHAR(n) length, NUMERIC(p,s), VECTOR(n). An explicit cast truncates
 * strings silently; assignment refuses a string longer than n unless only spaces would be cut
 * (PostgreSQL's varchar/bpchar rule). CHAR(n) values are stored padded to n with spaces.
 */
import type { QType, QValue } from './contract.js';
import { valueTooLong } from './errors.js';
import { applyNumericTypmod } from './numeric.js';
import { elementType } from './qtype.js';
import { charLength, chars } from './text-order.js';
import { pgTypeName } from './type-names.js';
import { checkVectorDimension } from './uuid-vector.js';

function fitLength(s: string, n: number, explicit: boolean, type: QType): string {
  if (s.length <= n || charLength(s) <= n) return s;
  const cs = chars(s);
  if (!explicit && cs.slice(n).some((c) => c !== ' ')) throw valueTooLong(pgTypeName(type));
  return cs.slice(0, n).join('');
}

/** Coerces a non-null value of the base type to the modified type (null passes). */
export function applyTypmod(type: QType, value: QValue, explicit: boolean): QValue {
  if (value === null) return null;
  switch (type.name) {
    case 'varchar':
      return type.length === undefined ? value : fitLength(value as string, type.length, explicit, type);
    case 'char': {
      if (type.length === undefined) return value;
      const s = fitLength(value as string, type.length, explicit, type);
      const len = charLength(s);
      return len < type.length ? s + ' '.repeat(type.length - len) : s;
    }
    case 'numeric':
      return type.precision === undefined ? value : applyNumericTypmod(value as string, type.precision, type.scale ?? 0);
    case 'vector':
      return checkVectorDimension(value as Float32Array, type.dimension);
    case 'array': {
      const el = elementType(type);
      if (el.length === undefined && el.precision === undefined && el.dimension === undefined) return value;
      const walk = (arr: readonly QValue[]): QValue[] => arr.map((v) => (Array.isArray(v) && el.name !== 'jsonb' ? walk(v) : applyTypmod(el, v, explicit)));
      return walk(value as readonly QValue[]);
    }
    default:
      return value;
  }
}
