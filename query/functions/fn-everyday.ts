/**
 * Functions PostgreSQL clients and everyday SQL call that belong to no other family: to_char of a
 * number, version(), current_setting() of the settings clients ask for, width_bucket().
 */
import { SVC_VERSION } from '../../core/version.js';
import type { QType, QValue } from '../types/contract.js';
import { dataError } from '../types/errors.js';
import * as N from '../types/numeric.js';
import { T } from '../types/qtype.js';
import type { FnDef, Impl } from './registry.js';
import { toCharNumber } from './to-char-number.js';
import { SvcError } from '../../core/errors.js';

function fn(name: string, params: QType[], ret: QType, impl: Impl): FnDef {
  return { name, params, ret, make: () => impl };
}

/** The PostgreSQL release whose semantics svcdb follows (docs/sql.md), as clients read it. */
const PG_VERSION = '15.0';

/**
 * The settings current_setting() answers (names case-insensitive, as PostgreSQL's): those
 * drivers and tools ask for at connect, with svcdb's fixed values (the session zone is UTC, dates
 * print ISO, text is UTF-8). svcdb has no SET, so they never change.
 */
const SETTINGS = new Map<string, string>([
  ['timezone', 'UTC'],
  ['server_version', PG_VERSION],
  ['server_version_num', '150000'],
  ['datestyle', 'ISO, MDY'],
  ['intervalstyle', 'postgres'],
  ['search_path', '"$user", public'],
  ['server_encoding', 'UTF8'],
  ['client_encoding', 'UTF8'],
  ['standard_conforming_strings', 'on'],
  ['integer_datetimes', 'on'],
  ['max_identifier_length', '63'],
  ['application_name', ''],
]);

function currentSetting(name: string, missingOk: boolean): QValue {
  const value = SETTINGS.get(name.toLowerCase());
  if (value !== undefined) return value;
  if (missingOk) return null;
  throw new SvcError('INVALID_QUERY', `unrecognized configuration parameter "${name}"`, { sqlstate: '42704' });
}

/**
 * width_bucket(operand, low, high, count) over numeric, exactly: 0 below the range, count + 1 at or
 * past its end, else the 1-based bucket of equal width (a range given high to low counts downwards).
 */
function widthBucketNumeric(operand: string, low: string, high: string, count: number): number {
  if (count <= 0) throw dataError('count must be greater than zero', '2201G');
  if ([operand, low, high].includes('NaN')) throw dataError('operand, lower bound, and upper bound cannot be NaN', '2201G');
  if ([low, high].some((b) => b.endsWith('Infinity'))) throw dataError('lower and upper bounds must be finite', '2201G');
  const cmp = N.numericCompare(low, high);
  if (cmp === 0) throw dataError('lower bound cannot equal upper bound', '2201G');
  const ascending = cmp < 0;
  const [from, to, at] = ascending ? [low, high, operand] : [N.numericNeg(low), N.numericNeg(high), N.numericNeg(operand)];
  if (N.numericCompare(at, from) < 0) return 0;
  if (N.numericCompare(at, to) >= 0) return count + 1;
  const scaled = N.numericMul(N.numericSub(at, from), N.intToNumeric(count));
  return Number(N.numericToBigInt(N.numericDivTrunc(scaled, N.numericSub(to, from)))) + 1;
}

function widthBucketFloat(operand: number, low: number, high: number, count: number): number {
  if (count <= 0) throw dataError('count must be greater than zero', '2201G');
  if ([operand, low, high].some(Number.isNaN)) throw dataError('operand, lower bound, and upper bound cannot be NaN', '2201G');
  if (!Number.isFinite(low) || !Number.isFinite(high)) throw dataError('lower and upper bounds must be finite', '2201G');
  if (low === high) throw dataError('lower bound cannot equal upper bound', '2201G');
  if (low < high) {
    if (operand < low) return 0;
    if (operand >= high) return count + 1;
    return Math.floor(((operand - low) * count) / (high - low)) + 1;
  }
  if (operand > low) return 0;
  if (operand <= high) return count + 1;
  return Math.floor(((low - operand) * count) / (low - high)) + 1;
}

/** A float's text for toCharNumber, -0 keeping its sign (printf prints '-0'). */
const floatText = (v: number): string => (Object.is(v, -0) ? '-0' : String(v));

export const EVERYDAY_FN_DEFS: readonly FnDef[] = [
  fn('to_char', [T.int4, T.text], T.text, ([v, f]) => toCharNumber(String(v as number), f as string)),
  fn('to_char', [T.int8, T.text], T.text, ([v, f]) => toCharNumber(String(v as bigint), f as string)),
  fn('to_char', [T.numeric, T.text], T.text, ([v, f]) => toCharNumber(v as string, f as string)),
  // PostgreSQL prints a float through C's printf, to DBL_DIG (15) or FLT_DIG (6) significant digits.
  fn('to_char', [T.float8, T.text], T.text, ([v, f]) => toCharNumber(floatText(v as number), f as string, 15)),
  fn('to_char', [T.float4, T.text], T.text, ([v, f]) => toCharNumber(floatText(v as number), f as string, 6)),
  fn('version', [], T.text, () => `PostgreSQL ${PG_VERSION} (svcdb ${SVC_VERSION})`),
  fn('current_setting', [T.text], T.text, ([name]) => currentSetting(name as string, false)),
  {
    name: 'current_setting',
    params: [T.text, T.bool],
    ret: T.text,
    strict: false,
    make:
      () =>
      ([name, ok]) =>
        name === null ? null : currentSetting(name as string, ok === true),
  },
  fn('width_bucket', [T.numeric, T.numeric, T.numeric, T.int4], T.int4, ([v, lo, hi, n]) =>
    widthBucketNumeric(v as string, lo as string, hi as string, n as number),
  ),
  fn('width_bucket', [T.float8, T.float8, T.float8, T.int4], T.int4, ([v, lo, hi, n]) =>
    widthBucketFloat(v as number, lo as number, hi as number, n as number),
  ),
];
