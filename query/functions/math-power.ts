/** Exponentiation: float8 ^ float8 (POSIX pow with PostgreSQL's errors) and numeric ^ numeric. */
import * as D from '../types/decimal.js';
import { dataError, outOfRange } from '../types/errors.js';
import * as N from '../types/numeric.js';
import { estimateLnDweight, numericLnAt, powerGeneral } from './numeric-transcendental.js';

/** PostgreSQL's float8pow. */
export function floatPower(a: number, b: number): number {
  if (Number.isNaN(a)) return b === 0 ? 1 : NaN;
  if (Number.isNaN(b)) return a === 1 ? 1 : NaN;
  if (a === 0 && b < 0) throw dataError('zero raised to a negative power is undefined', '2201F');
  if (a < 0 && Number.isFinite(b) && Math.floor(b) !== b) {
    throw dataError('a negative number raised to a non-integer power yields a complex result', '2201F');
  }
  if (Math.abs(a) === 1 && !Number.isFinite(b)) return 1; // POSIX: (-1)^±inf = 1, 1^anything = 1
  const r = Math.pow(a, b);
  if (!Number.isFinite(r) && Number.isFinite(a) && Number.isFinite(b)) throw outOfRange('value out of range: overflow');
  if (r === 0 && Number.isFinite(a) && Number.isFinite(b) && a !== 0) throw outOfRange('value out of range: underflow');
  return r;
}

/** power_var_int's estimate of the result's decimal weight: exp * log10(base) from its leading digits. */
function intPowerWeight(base: D.Decimal, exp: number): number {
  const { weight, digits } = D.base10000Digits(base);
  if (digits.length === 0) return 0;
  let f = digits[0]!;
  let p = weight * 4;
  for (let i = 1; i < digits.length && i * 4 < 16; i++) {
    f = f * 10000 + digits[i]!;
    p -= 4;
  }
  return exp * (Math.log10(f) + p);
}

function clampScale(r: number): number {
  return Math.min(Math.max(r, 0), D.DISPLAY_SCALE_MAX);
}

/** base ^ exp for an integer exponent (PostgreSQL's power_var_int): exact, rounded to its result scale. */
function powerInt(base: D.Decimal, exp: number, expScale: number): string {
  const f = intPowerWeight(base, exp);
  if (f > 32768 * 4) throw outOfRange('value overflows numeric format');
  if (f + 1 < -D.DISPLAY_SCALE_MAX) return N.fromDecimal({ coef: 0n, scale: D.DISPLAY_SCALE_MAX });
  const rscale = clampScale(Math.max(D.MIN_SIG_DIGITS - Math.trunc(f), base.scale, expScale));
  if (exp === 0) return N.fromDecimal(D.roundTo(D.dec(1n), rscale));
  if (base.coef === 0n) {
    if (exp < 0) throw dataError('zero raised to a negative power is undefined', '2201F');
    return N.fromDecimal({ coef: 0n, scale: rscale });
  }
  if (exp > 0) return N.fromDecimal(D.roundTo({ coef: base.coef ** BigInt(exp), scale: base.scale * exp }, rscale));
  const den = { coef: base.coef ** BigInt(-exp), scale: base.scale * -exp };
  return N.fromDecimal(D.divToScale(D.dec(1n), den, rscale));
}

/** The largest |exp * ln(base)| before PostgreSQL's power gives up (NUMERIC_MAX_RESULT_SCALE * 3.01). */
const LN_RESULT_ABS_MAX = 2000 * 3.01;

/** numeric ^ numeric (PostgreSQL's numeric_power / power_var). */
export function numericPower(a: string, b: string): string {
  const x = N.toNum(a),
    y = N.toNum(b);
  if (x === 'NaN') return N.isNumericZero(b) ? '1' : 'NaN';
  if (y === 'NaN') return typeof x !== 'string' && D.compare(x, D.dec(1n)) === 0 ? '1' : 'NaN';
  if (typeof x === 'string' || typeof y === 'string') {
    const r = floatPower(N.numericToFloat(a), N.numericToFloat(b));
    return Number.isFinite(r) ? N.floatToNumeric(r, 15) : r > 0 ? 'Infinity' : Number.isNaN(r) ? 'NaN' : '-Infinity';
  }
  if (x.coef === 0n && D.sign(y) < 0) throw dataError('zero raised to a negative power is undefined', '2201F');
  const yInt = D.compare(D.truncTo(y, 0), y) === 0;
  if (yInt) {
    const e = D.truncTo(y, 0).coef;
    if (e >= -2147483648n && e <= 2147483647n) return powerInt(x, Number(e), y.scale);
  }
  if (x.coef < 0n) throw dataError('a negative number raised to a non-integer power yields a complex result', '2201F');
  if (x.coef === 0n) return N.fromDecimal({ coef: 0n, scale: clampScale(Math.max(D.MIN_SIG_DIGITS, x.scale, y.scale)) });
  const lnDweight = estimateLnDweight(x);
  const localScale = Math.max(8 - lnDweight, 0);
  const lnBase = D.parseDecimal(numericLnAt(x, localScale))!;
  const val = D.toNumber(D.roundTo(D.mul(lnBase, y), localScale));
  if (Math.abs(val) > LN_RESULT_ABS_MAX) {
    if (val > 0) throw outOfRange('value overflows numeric format');
    return N.fromDecimal({ coef: 0n, scale: D.DISPLAY_SCALE_MAX });
  }
  const dweight = val * 0.434294481903252;
  const rscale = clampScale(Math.max(D.MIN_SIG_DIGITS - Math.trunc(dweight), x.scale, y.scale));
  return N.fromDecimal(powerGeneral(x, y, rscale, dweight));
}
