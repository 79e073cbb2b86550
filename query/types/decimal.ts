/**
 * Exact finite decimals on bigint: value = coef / 10^scale. `scale` is PostgreSQL's display scale
 * (dscale): the number of fraction digits printed, kept through arithmetic by PostgreSQL's rules
 * (add/sub: max of the scales, mul: sum, div: select_div_scale). Never floats.
 * NaN and the infinities are NUMERIC's business (numeric.ts), not this module's.
 */
import { assert } from '../../core/errors.js';

export interface Decimal {
  /** The unscaled value (signed). */
  readonly coef: bigint;
  /** Fraction digits, >= 0. */
  readonly scale: number;
}

/** PostgreSQL: a quotient has at least this many significant digits (NUMERIC_MIN_SIG_DIGITS). */
export const MIN_SIG_DIGITS = 16;
/** PostgreSQL's NUMERIC_MAX_DISPLAY_SCALE. */
export const DISPLAY_SCALE_MAX = 1000;
/** An input exponent beyond this is refused (PostgreSQL refuses beyond its numeric range too). */
const INPUT_EXPONENT_ABS_MAX = 1_000_000;

const POW10: bigint[] = [1n];
/** 10^n as a bigint (cached). */
export function pow10(n: number): bigint {
  assert(n >= 0, 'pow10 of a negative exponent');
  while (POW10.length <= n) POW10.push(POW10[POW10.length - 1]! * 10n);
  return POW10[n]!;
}

export const ZERO: Decimal = { coef: 0n, scale: 0 };

export function dec(coef: bigint, scale = 0): Decimal {
  return { coef, scale };
}

const DECIMAL_RE = /^([+-])?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/** Parses decimal text ('-12.50', '1e5', '.5'); null when it is not decimal text. Whitespace is the caller's. */
export function parseDecimal(text: string): Decimal | null {
  const m = DECIMAL_RE.exec(text);
  if (!m) return null;
  const intDigits = m[2] ?? '';
  const fracDigits = m[3] ?? '';
  if (intDigits.length + fracDigits.length === 0) return null;
  const exp = m[4] === undefined ? 0 : Number(m[4]);
  if (!Number.isFinite(exp) || Math.abs(exp) > INPUT_EXPONENT_ABS_MAX) return null;
  let coef = BigInt(intDigits + fracDigits);
  let scale = fracDigits.length - exp;
  if (scale < 0) {
    coef *= pow10(-scale);
    scale = 0;
  }
  return { coef: m[1] === '-' ? -coef : coef, scale };
}

/** Plain text with exactly `d.scale` fraction digits ('-0.50'); never exponent notation. */
export function formatDecimal(d: Decimal): string {
  const negative = d.coef < 0n;
  let digits = (negative ? -d.coef : d.coef).toString();
  if (d.scale > 0) {
    if (digits.length <= d.scale) digits = '0'.repeat(d.scale - digits.length + 1) + digits;
    digits = `${digits.slice(0, digits.length - d.scale)}.${digits.slice(digits.length - d.scale)}`;
  }
  return negative ? `-${digits}` : digits;
}

/** The same value with `scale` fraction digits, rounding half away from zero (PostgreSQL's round_var). */
export function roundTo(d: Decimal, scale: number): Decimal {
  if (scale >= d.scale) return { coef: d.coef * pow10(scale - d.scale), scale };
  const divisor = pow10(d.scale - scale);
  return { coef: divRoundHalfAway(d.coef, divisor), scale };
}

/** Like roundTo, truncating toward zero. */
export function truncTo(d: Decimal, scale: number): Decimal {
  if (scale >= d.scale) return { coef: d.coef * pow10(scale - d.scale), scale };
  return { coef: d.coef / pow10(d.scale - scale), scale };
}

/** round(x, n) with n possibly negative (round to tens, hundreds...): result scale max(n, 0). */
export function roundDigits(d: Decimal, n: number, mode: 'round' | 'trunc'): Decimal {
  if (n >= 0) return mode === 'round' ? roundTo(d, n) : truncTo(d, n);
  const unit = pow10(d.scale - n);
  const q = mode === 'round' ? divRoundHalfAway(d.coef, unit) : d.coef / unit;
  return { coef: q * pow10(-n), scale: 0 };
}

/** a / b rounded half away from zero (b > 0 or < 0). */
export function divRoundHalfAway(a: bigint, b: bigint): bigint {
  const q = a / b;
  const r = a - q * b;
  if (r === 0n) return q;
  const twiceR = (r < 0n ? -r : r) * 2n;
  const absB = b < 0n ? -b : b;
  if (twiceR >= absB) return a < 0n !== b < 0n ? q - 1n : q + 1n;
  return q;
}

function align(a: Decimal, b: Decimal): [bigint, bigint, number] {
  if (a.scale === b.scale) return [a.coef, b.coef, a.scale];
  if (a.scale > b.scale) return [a.coef, b.coef * pow10(a.scale - b.scale), a.scale];
  return [a.coef * pow10(b.scale - a.scale), b.coef, b.scale];
}

export function add(a: Decimal, b: Decimal): Decimal {
  const [x, y, scale] = align(a, b);
  return { coef: x + y, scale };
}

export function sub(a: Decimal, b: Decimal): Decimal {
  const [x, y, scale] = align(a, b);
  return { coef: x - y, scale };
}

export function mul(a: Decimal, b: Decimal): Decimal {
  return { coef: a.coef * b.coef, scale: a.scale + b.scale };
}

export function neg(a: Decimal): Decimal {
  return { coef: -a.coef, scale: a.scale };
}

export function abs(a: Decimal): Decimal {
  return a.coef < 0n ? neg(a) : a;
}

export function sign(a: Decimal): number {
  return a.coef < 0n ? -1 : a.coef > 0n ? 1 : 0;
}

export function compare(a: Decimal, b: Decimal): number {
  const [x, y] = align(a, b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** a / b rounded half away from zero to `scale` digits. b must not be zero. */
export function divToScale(a: Decimal, b: Decimal, scale: number): Decimal {
  assert(b.coef !== 0n, 'decimal division by zero');
  // a/b * 10^scale = a.coef * 10^(b.scale + scale) / (b.coef * 10^a.scale)
  const shift = b.scale + scale - a.scale;
  const num = shift >= 0 ? a.coef * pow10(shift) : a.coef;
  const den = shift >= 0 ? b.coef : b.coef * pow10(-shift);
  return { coef: divRoundHalfAway(num, den), scale };
}

/** trunc(a / b) as an integer decimal (scale 0). */
export function divTrunc(a: Decimal, b: Decimal): Decimal {
  const [x, y] = align(a, b);
  return { coef: x / y, scale: 0 };
}

/** a - trunc(a/b)*b: the sign of a, scale max of the scales (PostgreSQL's mod_var). */
export function mod(a: Decimal, b: Decimal): Decimal {
  const [x, y, scale] = align(a, b);
  return { coef: x % y, scale };
}

/**
 * PostgreSQL's weight and first digit in base 10000 (its NumericVar digits): value ~ first x 10000^weight.
 * Zero gives weight 0, first digit 0.
 */
export function base10000Head(d: Decimal): { weight: number; first: number } {
  if (d.coef === 0n) return { weight: 0, first: 0 };
  const digits = (d.coef < 0n ? -d.coef : d.coef).toString();
  const e = digits.length - 1 - d.scale; // decimal exponent of the leading digit
  const weight = Math.floor(e / 4);
  const headLen = e - 4 * weight + 1; // 1..4 digits make the first base-10000 digit
  const head = digits.length >= headLen ? digits.slice(0, headLen) : digits + '0'.repeat(headLen - digits.length);
  return { weight, first: Number(head) };
}

/** |d| as PostgreSQL's NumericVar: base-10000 digits (no leading or trailing zero digits) and the first one's weight. */
export function base10000Digits(d: Decimal): { weight: number; digits: number[] } {
  if (d.coef === 0n) return { weight: 0, digits: [] };
  const abs = (d.coef < 0n ? -d.coef : d.coef).toString();
  // Pad the fraction to a multiple of 4 digits and the integer part on the left likewise.
  const fracPad = (4 - (d.scale % 4)) % 4;
  const digitsStr = abs + '0'.repeat(fracPad);
  const fracGroups = (d.scale + fracPad) / 4;
  const lead = (4 - (digitsStr.length % 4)) % 4;
  const padded = '0'.repeat(lead) + digitsStr;
  const groups: number[] = [];
  for (let i = 0; i < padded.length; i += 4) groups.push(Number(padded.slice(i, i + 4)));
  let weight = groups.length - fracGroups - 1;
  while (groups.length > 0 && groups[0] === 0) {
    groups.shift();
    weight--;
  }
  while (groups.length > 0 && groups[groups.length - 1] === 0) groups.pop();
  return { weight, digits: groups };
}

/** PostgreSQL's select_div_scale: at least 16 significant digits, never fewer than either input's scale. */
export function selectDivScale(a: Decimal, b: Decimal): number {
  const ha = base10000Head(a);
  const hb = base10000Head(b);
  let qweight = ha.weight - hb.weight;
  if (ha.first <= hb.first) qweight--;
  let rscale = MIN_SIG_DIGITS - qweight * 4;
  rscale = Math.max(rscale, a.scale, b.scale, 0);
  return Math.min(rscale, DISPLAY_SCALE_MAX);
}

/** a / b with PostgreSQL's result scale. */
export function div(a: Decimal, b: Decimal): Decimal {
  return divToScale(a, b, selectDivScale(a, b));
}

/** The same value with trailing fraction zeros removed (the canonical form for hashing). */
export function normalize(d: Decimal): Decimal {
  let { coef, scale } = d;
  if (coef === 0n) return ZERO;
  while (scale > 0 && coef % 10n === 0n) {
    coef /= 10n;
    scale--;
  }
  return { coef, scale };
}

/** Number of digits before the decimal point of |d| (0 for |d| < 1). */
export function integerDigits(d: Decimal): number {
  const a = d.coef < 0n ? -d.coef : d.coef;
  const n = a.toString().length - d.scale;
  return a === 0n || n < 0 ? 0 : n;
}

/** floor(sqrt(n)) for n >= 0 (Newton's method from an overestimate, so it decreases to the floor). */
export function isqrt(n: bigint): bigint {
  assert(n >= 0n, 'isqrt of a negative number');
  if (n < 2n) return n;
  let x = 1n << BigInt(Math.ceil(n.toString(2).length / 2)); // >= sqrt(n)
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x) return x;
    x = y;
  }
}

/** sqrt(d) rounded half away from zero to `scale` digits; d >= 0. */
export function sqrtToScale(d: Decimal, scale: number): Decimal {
  // sqrt(coef / 10^s) * 10^scale = sqrt(coef * 10^(2*scale - s)); compute with one extra digit to round.
  const extra = 2 * (scale + 1) - d.scale;
  const radicand = extra >= 0 ? d.coef * pow10(extra) : d.coef / pow10(-extra);
  const r = isqrt(radicand); // scale + 1 digits
  return { coef: divRoundHalfAway(r, 10n), scale };
}

/** The decimal as the nearest double (JavaScript's decimal parsing is correctly rounded). */
export function toNumber(d: Decimal): number {
  return Number(formatDecimal(d));
}
