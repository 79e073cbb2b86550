/**
 * ln, log, exp on NUMERIC with PostgreSQL's result scales (numeric_ln, log_var, numeric_exp):
 * at least 16 significant digits, never fewer fraction digits than the input. The values are
 * computed in fixed point on bigint with guard digits and rounded half away from zero.
 */
import * as D from '../types/decimal.js';
import type { Decimal } from '../types/decimal.js';
import { dataError, divisionByZero, outOfRange } from '../types/errors.js';
import * as N from '../types/numeric.js';

const GUARD_DIGITS = 12;

function toFixed(d: Decimal, p: number): bigint {
  return D.roundTo(d, p).coef;
}

function fmul(a: bigint, b: bigint, one: bigint): bigint {
  return (a * b) / one;
}

/** ln(x) for x > 0 at precision p (fixed point 10^p): halve by square roots, then the atanh series. */
function lnFixed(x: Decimal, p: number): bigint {
  // x = m * 10^k with m in [1, 10)
  const digits = x.coef.toString();
  const k = digits.length - 1 - x.scale;
  const wp = p + GUARD_DIGITS;
  const one = D.pow10(wp);
  let m = toFixed({ coef: x.coef, scale: x.scale + k }, wp); // m / 10^wp in [1, 10)
  let halvings = 0;
  const near = one / 100n;
  while (m - one > near || one - m > near) {
    m = D.isqrt(m * one);
    halvings++;
  }
  const z = ((m - one) * one) / (m + one);
  const z2 = fmul(z, z, one);
  let term = z;
  let sum = 0n;
  for (let i = 1n; term !== 0n; i += 2n) {
    sum += term / i;
    term = fmul(term, z2, one);
  }
  let ln = 2n * sum * (1n << BigInt(halvings));
  if (k !== 0) ln += BigInt(k) * ln10Fixed(wp);
  return ln / D.pow10(GUARD_DIGITS);
}

const LN10_CACHE = new Map<number, bigint>();
function ln10Fixed(wp: number): bigint {
  let v = LN10_CACHE.get(wp);
  if (v === undefined) {
    // ln 10 = 3 ln 2 + ln 1.25, both from the series directly (no recursion through ln10Fixed).
    const one = D.pow10(wp + 10);
    const atanhLn = (num: bigint, den: bigint): bigint => {
      const z = (num * one) / den;
      const z2 = fmul(z, z, one);
      let term = z,
        sum = 0n;
      for (let i = 1n; term !== 0n; i += 2n) {
        sum += term / i;
        term = fmul(term, z2, one);
      }
      return 2n * sum;
    };
    const ln2 = atanhLn(1n, 3n); // ln 2 = 2 atanh(1/3)
    const ln125 = atanhLn(1n, 9n); // ln 1.25 = 2 atanh(1/9)
    v = (3n * ln2 + ln125) / D.pow10(10);
    LN10_CACHE.set(wp, v);
  }
  return v;
}

/** exp(x) at precision p: scale the argument down by 2^k, Taylor series, square k times. */
function expFixed(x: Decimal, p: number): bigint {
  const absInt = Math.abs(D.toNumber(x));
  const k = Math.max(0, Math.ceil(Math.log2(absInt + 1)) + 8);
  const wp = p + GUARD_DIGITS + Math.ceil(k * 0.31) + Math.ceil(absInt * 0.4343);
  const one = D.pow10(wp);
  const r = toFixed(x, wp) / (1n << BigInt(k));
  let term = one,
    sum = one;
  for (let i = 1n; term !== 0n; i++) {
    term = fmul(term, r, one) / i;
    sum += term;
  }
  for (let i = 0; i < k; i++) sum = fmul(sum, sum, one);
  return (sum * D.pow10(p)) / one;
}

/** PostgreSQL's estimate_ln_dweight: the decimal weight of ln(x). */
export function estimateLnDweight(x: Decimal): number {
  if (x.coef <= 0n) return 0;
  const v = D.toNumber(x);
  if (v >= 0.9 && v <= 1.1) {
    const y = D.sub(x, D.dec(1n));
    if (y.coef === 0n) return 0;
    const digits = (y.coef < 0n ? -y.coef : y.coef).toString();
    return digits.length - 1 - y.scale;
  }
  const { weight, digits } = D.base10000Digits(x);
  let digitsVal = digits[0]!;
  let dweight = weight * 4;
  if (digits.length > 1) {
    digitsVal = digitsVal * 10000 + digits[1]!;
    dweight -= 4;
  }
  const lnv = Math.log(digitsVal) + dweight * 2.302585092994046;
  return Math.trunc(Math.log10(Math.abs(lnv)));
}

function clampScale(r: number): number {
  return Math.min(Math.max(r, 0), D.DISPLAY_SCALE_MAX);
}

function finite(a: string): Decimal | 'NaN' | 'Infinity' | '-Infinity' {
  return N.toNum(a);
}

function lnChecks(x: Decimal): void {
  if (x.coef === 0n) throw dataError('cannot take logarithm of zero', '2201E');
  if (x.coef < 0n) throw dataError('cannot take logarithm of a negative number', '2201E');
}

export function numericLn(a: string): string {
  const x = finite(a);
  if (x === 'NaN' || x === 'Infinity') return x;
  if (x === '-Infinity') throw dataError('cannot take logarithm of a negative number', '2201E');
  lnChecks(x);
  const rscale = clampScale(Math.max(D.MIN_SIG_DIGITS - estimateLnDweight(x), x.scale));
  return N.fromDecimal(D.roundTo({ coef: lnFixed(x, rscale + 2), scale: rscale + 2 }, rscale));
}

/** log(base, x) = ln(x) / ln(base) (PostgreSQL's log_var). */
/** ln(x) rounded to `scale` digits, for callers choosing their own scale (power). */
export function numericLnAt(x: Decimal, scale: number): string {
  lnChecks(x);
  return N.fromDecimal(D.roundTo({ coef: lnFixed(x, scale + 2), scale: scale + 2 }, scale));
}

export function numericLog(b: string, a: string): string {
  const base = finite(b),
    x = finite(a);
  if (base === 'NaN' || x === 'NaN') return 'NaN';
  if (typeof base === 'string' || typeof x === 'string') {
    if (base === '-Infinity' || x === '-Infinity' || (typeof base !== 'string' && base.coef < 0n) || (typeof x !== 'string' && x.coef < 0n)) {
      throw dataError('cannot take logarithm of a negative number', '2201E');
    }
    if (typeof base !== 'string' && base.coef === 0n) throw dataError('cannot take logarithm of zero', '2201E');
    if (typeof x !== 'string' && x.coef === 0n) throw dataError('cannot take logarithm of zero', '2201E');
    if (base === 'Infinity' && x === 'Infinity') return 'NaN';
    if (base === 'Infinity') return '0';
    return 'Infinity';
  }
  lnChecks(base);
  lnChecks(x);
  const resultDweight = estimateLnDweight(x) - estimateLnDweight(base);
  const rscale = clampScale(Math.max(D.MIN_SIG_DIGITS - resultDweight, base.scale, x.scale));
  const wp = rscale + 20 + Math.max(0, -estimateLnDweight(base));
  const lnB = lnFixed(base, wp);
  if (lnB === 0n) throw divisionByZero();
  const lnX = lnFixed(x, wp);
  return N.fromDecimal(D.divToScale({ coef: lnX, scale: wp }, { coef: lnB, scale: wp }, rscale));
}

export function numericLog10(a: string): string {
  return numericLog('10', a);
}

/** The largest result scale exp accepts before 'value overflows numeric format' (PostgreSQL: NUMERIC_MAX_RESULT_SCALE * 3). */
const EXP_ARG_MAX = 6000;

export function numericExp(a: string): string {
  const x = finite(a);
  if (x === 'NaN' || x === 'Infinity') return x;
  if (x === '-Infinity') return '0';
  const val = D.toNumber(x);
  if (val > EXP_ARG_MAX) throw outOfRange('value overflows numeric format');
  let dweight = val * 0.434294481903252;
  dweight = Math.max(Math.min(dweight, 2000), -2000);
  const rscale = clampScale(Math.max(D.MIN_SIG_DIGITS - Math.trunc(dweight), x.scale));
  if (val < -EXP_ARG_MAX) return N.fromDecimal({ coef: 0n, scale: rscale });
  return N.fromDecimal(D.roundTo({ coef: expFixed(x, rscale + 2), scale: rscale + 2 }, rscale));
}

/** exp(y * ln(x)) at `rscale` digits: the general numeric power. */
export function powerGeneral(x: Decimal, y: Decimal, rscale: number, resultDweight: number): Decimal {
  const wp = rscale + Math.max(0, Math.ceil(resultDweight)) + 10 - Math.min(0, estimateLnDweight(x));
  const lnx = lnFixed(x, wp);
  const prod = D.truncTo(D.mul({ coef: lnx, scale: wp }, y), wp);
  return D.roundTo({ coef: expFixed(prod, rscale + 2), scale: rscale + 2 }, rscale);
}
