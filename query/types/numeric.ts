/**
 * NUMERIC at run time is its canonical text (core/values.ts): finite values as plain decimal text
 * with their display scale ('1.50'), plus 'NaN', 'Infinity', '-Infinity' (PostgreSQL 14+).
 * These functions take and return that text; the arithmetic is decimal.ts's, exact.
 * Special-value rules are PostgreSQL's: NaN wins, Inf - Inf = NaN, Inf * 0 = NaN, x / Inf = 0.
 */
import * as D from './decimal.js';
import type { Decimal } from './decimal.js';
import { dataError, divisionByZero, invalidInput, outOfRange } from './errors.js';

export type NumericText = string;
type Special = 'NaN' | 'Infinity' | '-Infinity';
type Num = Decimal | Special;

/** PostgreSQL's numeric storage limits (digits before / after the decimal point). */
const INTEGER_DIGITS_MAX = 131_072;
const SCALE_MAX = 16_383;

export const NUMERIC_NAN = 'NaN';

function special(s: string): Special | null {
  if (s === 'NaN' || s === 'Infinity' || s === '-Infinity') return s;
  return null;
}

/** Reads canonical numeric text (a run-time value). */
export function toNum(s: NumericText): Num {
  const sp = special(s);
  if (sp !== null) return sp;
  const d = D.parseDecimal(s);
  if (d === null) throw invalidInput('numeric', s);
  return d;
}

/** Writes a numeric as canonical text, refusing values beyond PostgreSQL's numeric range. */
export function fromNum(n: Num): NumericText {
  if (typeof n === 'string') return n;
  if (D.integerDigits(n) > INTEGER_DIGITS_MAX || n.scale > SCALE_MAX) throw outOfRange('value overflows numeric format');
  return D.formatDecimal(n);
}

export function fromDecimal(d: Decimal): NumericText {
  return fromNum(d);
}

/** PostgreSQL's numeric_in: surrounding whitespace, NaN, [+-]Infinity/inf, exponents. */
export function parseNumeric(text: string): NumericText {
  const s = text.trim();
  const lower = s.toLowerCase();
  if (lower === 'nan') return 'NaN';
  if (lower === 'infinity' || lower === '+infinity' || lower === 'inf' || lower === '+inf') return 'Infinity';
  if (lower === '-infinity' || lower === '-inf') return '-Infinity';
  const d = D.parseDecimal(s);
  if (d === null) throw invalidInput('numeric', text);
  return fromNum(d);
}

function isNeg(n: Num): boolean {
  return n === '-Infinity' || (typeof n !== 'string' && n.coef < 0n);
}

function signOf(n: Num): number {
  if (n === 'Infinity') return 1;
  if (n === '-Infinity') return -1;
  if (n === 'NaN') return 0;
  return D.sign(n);
}

function infOfSign(s: number): Special {
  return s < 0 ? '-Infinity' : 'Infinity';
}

export function numericAdd(a: NumericText, b: NumericText): NumericText {
  const x = toNum(a),
    y = toNum(b);
  if (x === 'NaN' || y === 'NaN') return 'NaN';
  if (typeof x === 'string') return typeof y === 'string' && y !== x ? 'NaN' : x;
  if (typeof y === 'string') return y;
  return fromNum(D.add(x, y));
}

export function numericSub(a: NumericText, b: NumericText): NumericText {
  return numericAdd(a, numericNeg(b));
}

export function numericNeg(a: NumericText): NumericText {
  const x = toNum(a);
  if (x === 'NaN') return x;
  if (x === 'Infinity') return '-Infinity';
  if (x === '-Infinity') return 'Infinity';
  return fromNum(D.neg(x));
}

export function numericAbs(a: NumericText): NumericText {
  return isNeg(toNum(a)) ? numericNeg(a) : a;
}

export function numericMul(a: NumericText, b: NumericText): NumericText {
  const x = toNum(a),
    y = toNum(b);
  if (x === 'NaN' || y === 'NaN') return 'NaN';
  if (typeof x === 'string' || typeof y === 'string') {
    const s = signOf(x) * signOf(y);
    return s === 0 ? 'NaN' : infOfSign(s);
  }
  return fromNum(D.mul(x, y));
}

export function numericDiv(a: NumericText, b: NumericText): NumericText {
  return divide(a, b, D.div);
}

/** div(a, b): the truncated integer quotient. */
export function numericDivTrunc(a: NumericText, b: NumericText): NumericText {
  return divide(a, b, D.divTrunc);
}

/** Division with PostgreSQL's NaN, infinity and division-by-zero rules around a finite quotient. */
function divide(a: NumericText, b: NumericText, quotient: (x: Decimal, y: Decimal) => Decimal): NumericText {
  const x = toNum(a),
    y = toNum(b);
  if (x === 'NaN' || y === 'NaN') return 'NaN';
  if (typeof x === 'string') {
    if (typeof y === 'string') return 'NaN';
    if (y.coef === 0n) throw divisionByZero();
    return infOfSign(signOf(x) * D.sign(y));
  }
  if (typeof y === 'string') return '0';
  if (y.coef === 0n) throw divisionByZero();
  return fromNum(quotient(x, y));
}

export function numericMod(a: NumericText, b: NumericText): NumericText {
  const x = toNum(a),
    y = toNum(b);
  if (x === 'NaN' || y === 'NaN') return 'NaN';
  if (typeof x === 'string') {
    if (typeof y !== 'string' && y.coef === 0n) throw divisionByZero();
    return 'NaN';
  }
  if (typeof y === 'string') return a;
  if (y.coef === 0n) throw divisionByZero();
  return fromNum(D.mod(x, y));
}

const PLAIN_RE = /^-?\d+(?:\.\d+)?$/;

/** |value| of plain decimal text as [integer digits without leading zeros, fraction without trailing zeros]. */
function magnitude(s: string): [string, string] {
  const body = s.charCodeAt(0) === 45 ? s.slice(1) : s;
  const dot = body.indexOf('.');
  const int = (dot < 0 ? body : body.slice(0, dot)).replace(/^0+/, '');
  const frac = dot < 0 ? '' : body.slice(dot + 1).replace(/0+$/, '');
  return [int, frac];
}

/** Sign and magnitude comparison of plain decimal texts, without building bigints (the sort path). */
function comparePlain(a: string, b: string): number {
  const [ia, fa] = magnitude(a),
    [ib, fb] = magnitude(b);
  const za = ia === '' && fa === '',
    zb = ib === '' && fb === '';
  const sa = za ? 0 : a.charCodeAt(0) === 45 ? -1 : 1;
  const sb = zb ? 0 : b.charCodeAt(0) === 45 ? -1 : 1;
  if (sa !== sb) return sa < sb ? -1 : 1;
  if (sa === 0) return 0;
  let m: number;
  if (ia.length !== ib.length) m = ia.length < ib.length ? -1 : 1;
  else if (ia !== ib) m = ia < ib ? -1 : 1;
  else m = fa === fb ? 0 : fa < fb ? -1 : 1; // no trailing zeros: plain string order is numeric order
  return m === 0 ? 0 : sa * m;
}

/** Total order: -Infinity < finite < Infinity < NaN (NaN equals NaN, as PostgreSQL sorts it). */
export function numericCompare(a: NumericText, b: NumericText): number {
  if (a === b) return 0;
  if (PLAIN_RE.test(a) && PLAIN_RE.test(b)) return comparePlain(a, b);
  const x = toNum(a),
    y = toNum(b);
  const rx = rank(x),
    ry = rank(y);
  if (rx !== ry) return rx < ry ? -1 : 1;
  if (rx !== 1) return 0;
  return D.compare(x as Decimal, y as Decimal);
}

function rank(n: Num): number {
  return n === '-Infinity' ? 0 : n === 'Infinity' ? 2 : n === 'NaN' ? 3 : 1;
}

/** A key equal for numerically equal values ('1.0' and '1.00'). */
export function numericHashKey(a: NumericText): string {
  if (PLAIN_RE.test(a)) {
    const [int, frac] = magnitude(a);
    if (int === '' && frac === '') return '0';
    return `${a.charCodeAt(0) === 45 ? '-' : ''}${int === '' ? '0' : int}${frac === '' ? '' : '.' + frac}`;
  }
  const x = toNum(a);
  return typeof x === 'string' ? x : D.formatDecimal(D.normalize(x));
}

export function numericSign(a: NumericText): NumericText {
  const x = toNum(a);
  if (x === 'NaN') return 'NaN';
  return String(signOf(x));
}

/** round(x, n) / trunc(x, n): scale max(n, 0); infinities and NaN pass through. */
export function numericRound(a: NumericText, digits: number, mode: 'round' | 'trunc'): NumericText {
  const x = toNum(a);
  if (typeof x === 'string') return x;
  return fromNum(D.roundDigits(x, digits, mode));
}

export function numericCeil(a: NumericText): NumericText {
  const x = toNum(a);
  if (typeof x === 'string') return x;
  const t = D.truncTo(x, 0);
  return fromNum(D.compare(t, x) < 0 ? D.add(t, D.dec(1n)) : t);
}

export function numericFloor(a: NumericText): NumericText {
  const x = toNum(a);
  if (typeof x === 'string') return x;
  const t = D.truncTo(x, 0);
  return fromNum(D.compare(t, x) > 0 ? D.sub(t, D.dec(1n)) : t);
}

/** sqrt with PostgreSQL's result scale (numeric_sqrt). */
export function numericSqrt(a: NumericText): NumericText {
  const x = toNum(a);
  if (x === 'NaN' || x === 'Infinity') return x;
  if (isNeg(x)) throw dataError('cannot take square root of a negative number', '2201F');
  const d = x as Decimal;
  const { weight } = D.base10000Head(d);
  const sweight = Math.trunc(((weight + 1) * 4) / 2) - 1;
  let rscale = D.MIN_SIG_DIGITS - sweight;
  rscale = Math.min(Math.max(rscale, d.scale, 0), D.DISPLAY_SCALE_MAX);
  return fromNum(D.sqrtToScale(d, rscale));
}

/**
 * NUMERIC(p,s) coercion: round to s fraction digits (half away from zero), then refuse values
 * needing more than p - s integer digits ('numeric field overflow'). NaN passes; infinities do not.
 */
export function applyNumericTypmod(a: NumericText, precision: number, scale: number): NumericText {
  const x = toNum(a);
  if (x === 'NaN') return x;
  if (typeof x === 'string') {
    throw outOfRange('numeric field overflow', `A field with precision ${precision}, scale ${scale} cannot hold an infinite value.`);
  }
  const r = D.roundDigits(x, scale, 'round');
  const maxDigits = precision - scale;
  // Digits before the decimal point, counting from the leading non-zero digit (0.00123 has -2).
  const digits = (r.coef < 0n ? -r.coef : r.coef).toString();
  const intDigits = digits.length - r.scale;
  if (r.coef !== 0n && intDigits > maxDigits) {
    const bound = maxDigits === 0 ? '1' : `10^${maxDigits}`;
    throw outOfRange('numeric field overflow', `A field with precision ${precision}, scale ${scale} must round to an absolute value less than ${bound}.`);
  }
  return fromNum(scale < 0 ? { coef: r.coef, scale: 0 } : r);
}

/** The nearest double. */
export function numericToFloat(a: NumericText): number {
  if (a === 'NaN') return NaN;
  if (a === 'Infinity') return Infinity;
  if (a === '-Infinity') return -Infinity;
  return Number(a);
}

/** Rounds half away from zero to an integer bigint; null for NaN/infinities (the caller names the error). */
export function numericToBigInt(a: NumericText): bigint | null {
  const x = toNum(a);
  if (typeof x === 'string') return null;
  return D.roundTo(x, 0).coef;
}

/** PostgreSQL's float8_numeric/float4_numeric: the value printed with 15 (float4: 6) significant digits. */
export function floatToNumeric(v: number, significantDigits: number): NumericText {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return 'Infinity';
  if (v === -Infinity) return '-Infinity';
  const text = v.toPrecision(significantDigits); // %.*g also strips trailing zeros: normalize does that below
  const d = D.parseDecimal(text);
  if (d === null) throw invalidInput('numeric', text);
  return fromNum(D.normalize(d));
}

export function intToNumeric(v: number | bigint): NumericText {
  return typeof v === 'bigint' ? v.toString() : String(v);
}

export function isNumericZero(a: NumericText): boolean {
  const x = toNum(a);
  return typeof x !== 'string' && x.coef === 0n;
}
