/** PostgreSQL's raw TypeName -> svcdb's TypeName (and the interval field qualifiers of typed literals). */
import type { Node, TypeName as RawTypeName } from '@pgsql/types';
import type { TypeName } from '../ast/index.js';
import { bodyOf, locOf, names, unsupportedNode } from './nodes.js';

// PostgreSQL's INTERVAL_MASK bits (utils/datetime.h): the typmod the grammar stores for INTERVAL '1' DAY.
const MONTH = 1 << 1;
const YEAR = 1 << 2;
const DAY = 1 << 3;
const HOUR = 1 << 10;
const MINUTE = 1 << 11;
const SECOND = 1 << 12;
const INTERVAL_FULL_RANGE = 0x7fff;

const INTERVAL_FIELDS: ReadonlyMap<number, string> = new Map([
  [YEAR, 'year'],
  [MONTH, 'month'],
  [DAY, 'day'],
  [HOUR, 'hour'],
  [MINUTE, 'minute'],
  [SECOND, 'second'],
  [YEAR | MONTH, 'year to month'],
  [DAY | HOUR, 'day to hour'],
  [DAY | HOUR | MINUTE, 'day to minute'],
  [DAY | HOUR | MINUTE | SECOND, 'day to second'],
  [HOUR | MINUTE, 'hour to minute'],
  [HOUR | MINUTE | SECOND, 'hour to second'],
  [MINUTE | SECOND, 'minute to second'],
]);

const SERIALS: ReadonlyMap<string, string> = new Map([
  ['serial', 'int4'],
  ['serial4', 'int4'],
  ['bigserial', 'int8'],
  ['serial8', 'int8'],
  ['smallserial', 'int2'],
  ['serial2', 'int2'],
]);

/** An integer type modifier (`numeric(10, 2)`); anything else (an identifier, a string) is refused. */
function typmodValue(node: Node): number {
  const c = bodyOf<{ ival?: { ival?: number }; location?: number }>(node, 'A_Const');
  if (c?.ival === undefined) throw unsupportedNode('non-integer type modifier', locOf(c));
  return c.ival.ival ?? 0;
}

function isInterval(t: RawTypeName): boolean {
  const n = names(t.names);
  return n[n.length - 1] === 'interval';
}

/**
 * svcdb's TypeName: the grammar's canonical name (`integer` arrives as pg_catalog.int4); the
 * pg_catalog schema the grammar adds is dropped so the binder sees plain names. For interval the
 * field mask is not a modifier (see intervalFieldsOf); only a precision is kept.
 */
export function translateTypeName(t: RawTypeName): TypeName {
  if (t.setof === true || t.pct_type === true) throw unsupportedNode(t.setof === true ? 'SETOF' : '%TYPE', locOf(t));
  const parts = names(t.names);
  const name = parts[parts.length - 1] ?? '';
  const schemaPart = parts.length > 1 ? (parts[parts.length - 2] ?? null) : null;
  let modifiers = (t.typmods ?? []).map(typmodValue);
  if (isInterval(t)) modifiers = modifiers.slice(1);
  return {
    kind: 'type_name',
    name,
    schema: schemaPart === 'pg_catalog' ? null : schemaPart,
    modifiers,
    arrayBounds: (t.arrayBounds ?? []).length,
    loc: locOf(t),
  };
}

/** INTERVAL '1' DAY: the field qualifier as written (lower case); null when none or not an interval. */
export function intervalFieldsOf(t: RawTypeName): string | null {
  if (!isInterval(t) || (t.typmods ?? []).length === 0) return null;
  const first = t.typmods?.[0];
  const mask = first === undefined ? INTERVAL_FULL_RANGE : typmodValue(first);
  if (mask === INTERVAL_FULL_RANGE) return null;
  const fields = INTERVAL_FIELDS.get(mask);
  if (fields === undefined) throw unsupportedNode('interval field qualifier', locOf(t));
  return fields;
}

/** A column's type: SERIAL/BIGSERIAL/SMALLSERIAL become their integer type with `serial` true. */
export function columnType(t: RawTypeName): { type: TypeName; serial: boolean } {
  const type = translateTypeName(t);
  const serialOf = SERIALS.get(type.name);
  if (serialOf === undefined || type.schema !== null || type.modifiers.length > 0 || type.arrayBounds > 0) return { type, serial: false };
  return { type: { ...type, name: serialOf }, serial: true };
}
