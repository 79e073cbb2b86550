import type { Interval, QType } from '../types/contract.js';
import { constant, INT4, INT8, NUMERIC, UNKNOWN, type Expr } from '../plan/expr.js';
import type { SqlExpr } from '../parse/ast/index.js';
import { coerce } from './coerce.js';
import { invalid, type BindContext } from './context.js';

const USECS_PER_SECOND = 1_000_000n;
const USECS_PER_MINUTE = 60n * USECS_PER_SECOND;
const USECS_PER_HOUR = 60n * USECS_PER_MINUTE;

/** A numeric constant's text (sign included) typed as PostgreSQL types it: int4, else int8, else numeric (make_const). */
export function exactNumber(ctx: BindContext, written: string): Expr {
  const text = written.replace(/_/g, '');
  const integer = integerValue(text);
  if (integer !== null) {
    if (integer >= -2147483648n && integer <= 2147483647n) return constant(INT4, Number(integer));
    if (integer >= -9223372036854775808n && integer <= 9223372036854775807n) return constant(INT8, integer);
    if (!/^-?[0-9]+$/.test(text)) return constant(NUMERIC, ctx.types.parseText(NUMERIC, integer.toString()));
  }
  return constant(NUMERIC, ctx.types.parseText(NUMERIC, text));
}

/** Decimal, 0x, 0o and 0b integer literals; null for anything with a fraction or exponent. */
function integerValue(text: string): bigint | null {
  const m = /^(-?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|[0-9]+)$/.exec(text);
  if (!m) return null;
  const magnitude = BigInt(m[2]!.replace(/^0[oO]/, '0o'));
  return m[1] === '-' ? -magnitude : magnitude;
}

/**
 * The text of a numeric constant under prefix minuses, or null: PostgreSQL folds a minus into a
 * numeric constant before typing it, so -9223372036854775808 is an int8 (doNegate in gram.y).
 */
export function numericConstantText(node: SqlExpr): string | null {
  if (node.kind === 'number') return node.text;
  if (node.kind === 'op' && node.op === '-' && node.left === null) {
    const inner = numericConstantText(node.right);
    return inner === null ? null : inner.startsWith('-') ? inner.slice(1) : `-${inner}`;
  }
  return null;
}

/** `TYPE 'text'`: the string typed directly by the type's input function (INTERVAL '1' DAY reads '1' as days). */
export function typedLiteral(ctx: BindContext, type: QType, text: string, intervalFields: string | null): Expr {
  if (type.name === 'interval' && intervalFields !== null) return constant(type, intervalLiteral(ctx, type, text, intervalFields));
  return coerce(ctx, constant(UNKNOWN, text), type, 'explicit');
}

const FIELD_ORDER = ['year', 'month', 'day', 'hour', 'minute', 'second'] as const;
type Field = (typeof FIELD_ORDER)[number];

/**
 * An interval literal with a field qualifier, as PostgreSQL reads one: a bare number counts
 * the qualifier's last field, 'm:s' under MINUTE TO SECOND is minutes and seconds, and the
 * value is truncated below the last field (INTERVAL '1 day 2 hours' DAY is 1 day).
 */
function intervalLiteral(ctx: BindContext, type: QType, text: string, qualifier: string): Interval {
  const fields = qualifier.split(/\s+to\s+/).map((f) => f.replace(/\(.*\)$/, '').trim());
  if (!fields.every((f): f is Field => (FIELD_ORDER as readonly string[]).includes(f))) {
    throw invalid(`invalid interval field qualifier: ${qualifier}`);
  }
  const first = fields[0] as Field;
  const last = fields[fields.length - 1] as Field;
  let input = text.trim();
  if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(input)) input = `${input} ${last}`;
  else if (first === 'minute' && last === 'second' && /^[+-]?\d+:\d+(\.\d*)?$/.test(input)) input = input.replace(/^([+-]?)/, '$10:');
  const value = ctx.types.parseText(type, input) as Interval;
  return truncateInterval(value, last);
}

function truncateInterval(v: Interval, last: Field): Interval {
  switch (last) {
    case 'year':
      return { months: Math.trunc(v.months / 12) * 12, days: 0, micros: 0n };
    case 'month':
      return { months: v.months, days: 0, micros: 0n };
    case 'day':
      return { months: v.months, days: v.days, micros: 0n };
    case 'hour':
      return { ...v, micros: v.micros - (v.micros % USECS_PER_HOUR) };
    case 'minute':
      return { ...v, micros: v.micros - (v.micros % USECS_PER_MINUTE) };
    case 'second':
      return v;
  }
}
