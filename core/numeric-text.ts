/**
 * NUMERIC values are decimal text (core/values.ts). This module scans that text without
 * allocating and writes/reads its order-preserving key form:
 *
 *   class byte: 0x01 -Infinity | 0x02 negative | 0x03 zero | 0x04 positive | 0x05 +Infinity | 0x06 NaN
 *   positive:   exponent E, then the significant digits d1 d2 ... (value = 0.d1d2... x 10^E,
 *               d1 != 0, no trailing zeros) packed two per byte as 1 + 10*a + b (odd count: b = 0),
 *               then a 0x00 terminator (smaller than any digit byte: a shorter mantissa is smaller)
 *   negative:   as positive, with the exponent and digit bytes (and terminator) complemented,
 *               so a larger magnitude sorts first
 *   exponent:   0x10..0xEF = E + 0x80 for -112 <= E <= 111; 0xF0 + u32 BE (E) above; 0x0F + u32 BE
 *               (E + 2^31) below. Prefix-free and order-preserving.
 *
 * Numerically equal texts ("1.0", "1.00", "01", "1e0") scan to the same sign, exponent and digits,
 * so they encode to the same bytes. NaN sorts above +Infinity, as in PostgreSQL.
 */
import { SvcError } from './errors.js';

export const NUMERIC_NEG_INF = 0x01;
export const NUMERIC_NEG = 0x02;
export const NUMERIC_ZERO = 0x03;
export const NUMERIC_POS = 0x04;
export const NUMERIC_POS_INF = 0x05;
export const NUMERIC_NAN = 0x06;

/** An explicit exponent ("1e5") beyond this magnitude is refused; PostgreSQL's range is far smaller. */
const EXPONENT_ABS_MAX = 1_000_000_000;
const EXP_ONE_BYTE_MIN = -112;
const EXP_ONE_BYTE_MAX = 111;
const EXP_BIAS = 0x80;
const EXP_LARGE = 0xf0;
const EXP_SMALL = 0x0f;
const TWO_POW_31 = 2147483648;

// Results of the last scan (module state: scanning allocates nothing).
let scanFirst = 0; // index in the text of the first significant (non-zero) digit
let scanLast = 0; // index of the last significant digit
let scanExponent = 0; // value = 0.d1d2... x 10^scanExponent

/** Classifies `s`, filling the scan state; 0 when it is not numeric text. */
function scan(s: string): number {
  const n = s.length;
  let i = 0;
  let negative = false;
  let c = n > 0 ? s.charCodeAt(0) : 0;
  if (c === 45 || c === 43) {
    negative = c === 45;
    i = 1;
    c = i < n ? s.charCodeAt(i) : 0;
  }
  if (!(c >= 48 && c <= 57) && c !== 46) return scanSpecial(s, i, negative);
  let dot = -1;
  let first = -1;
  let last = -1;
  let digitCount = 0;
  for (; i < n; i++) {
    c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      digitCount++;
      if (c !== 48) {
        if (first < 0) first = i;
        last = i;
      }
    } else if (c === 46 && dot < 0) {
      dot = i;
    } else {
      break;
    }
  }
  if (digitCount === 0) return 0;
  const mantissaEnd = i;
  let exponent = 0;
  if (i < n) {
    if (c !== 101 && c !== 69) return 0;
    i++;
    let expNegative = false;
    c = i < n ? s.charCodeAt(i) : 0;
    if (c === 45 || c === 43) {
      expNegative = c === 45;
      i++;
    }
    if (i >= n) return 0;
    for (; i < n; i++) {
      c = s.charCodeAt(i);
      if (c < 48 || c > 57) return 0;
      exponent = exponent * 10 + (c - 48);
      if (exponent > EXPONENT_ABS_MAX) return 0;
    }
    if (expNegative) exponent = -exponent;
  }
  if (first < 0) return NUMERIC_ZERO;
  const dotAt = dot < 0 ? mantissaEnd : dot;
  scanFirst = first;
  scanLast = last;
  scanExponent = (first < dotAt ? dotAt - first : -(first - dotAt - 1)) + exponent;
  return negative ? NUMERIC_NEG : NUMERIC_POS;
}

function scanSpecial(s: string, from: number, negative: boolean): number {
  const word = s.slice(from).toLowerCase();
  if (word === 'infinity' || word === 'inf') return negative ? NUMERIC_NEG_INF : NUMERIC_POS_INF;
  if (word === 'nan' && from === 0) return NUMERIC_NAN;
  return 0;
}

/** True when `s` is decimal text NUMERIC accepts: [+-]digits[.digits][e[+-]digits], NaN, [+-]Infinity. */
export function isNumericText(s: string): boolean {
  return scan(s) !== 0;
}

/** The most bytes writeNumericKey can write for `s`. */
export function numericKeySizeMax(s: string): number {
  return s.length + 8;
}

/**
 * Writes the key form of numeric text `s` at `pos` (room: numericKeySizeMax(s)); returns the new
 * position. Throws TYPE_MISMATCH when `s` is not numeric text.
 */
export function writeNumericKey(buf: Uint8Array, pos: number, s: string): number {
  const cls = scan(s);
  if (cls === 0) {
    throw new SvcError('TYPE_MISMATCH', `invalid NUMERIC text ${JSON.stringify(s.slice(0, 40))}`, { type: 'NUMERIC' });
  }
  buf[pos++] = cls;
  if (cls !== NUMERIC_POS && cls !== NUMERIC_NEG) return pos;
  const flip = cls === NUMERIC_NEG ? 0xff : 0;
  pos = writeExponent(buf, pos, scanExponent, flip);
  let pending = -1;
  for (let i = scanFirst; i <= scanLast; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) continue;
    if (pending < 0) {
      pending = c - 48;
    } else {
      buf[pos++] = (1 + pending * 10 + (c - 48)) ^ flip;
      pending = -1;
    }
  }
  if (pending >= 0) buf[pos++] = (1 + pending * 10) ^ flip;
  buf[pos++] = flip; // terminator 0x00, complemented for negatives
  return pos;
}

function writeExponent(buf: Uint8Array, pos: number, e: number, flip: number): number {
  if (e >= EXP_ONE_BYTE_MIN && e <= EXP_ONE_BYTE_MAX) {
    buf[pos++] = (e + EXP_BIAS) ^ flip;
    return pos;
  }
  const u = e > 0 ? e : e + TWO_POW_31;
  buf[pos++] = (e > 0 ? EXP_LARGE : EXP_SMALL) ^ flip;
  buf[pos++] = ((u >>> 24) & 0xff) ^ flip;
  buf[pos++] = ((u >>> 16) & 0xff) ^ flip;
  buf[pos++] = ((u >>> 8) & 0xff) ^ flip;
  buf[pos++] = (u & 0xff) ^ flip;
  return pos;
}

/** Position after the numeric key read by the last readNumericKey call. */
export let numericKeyEnd = 0;

/**
 * Reads a numeric key at `pos` (each byte XOR `mask`) and returns its canonical text with
 * `scale` fraction digits when given (NUMERIC(p,s)), else the fewest digits. Sets numericKeyEnd.
 * Returns null when the bytes are not a numeric key.
 */
export function readNumericKey(buf: Uint8Array, pos: number, mask: number, scale: number | undefined): string | null {
  const cls = (buf[pos++]! ^ mask) & 0xff;
  numericKeyEnd = pos;
  switch (cls) {
    case NUMERIC_NEG_INF:
      return '-Infinity';
    case NUMERIC_POS_INF:
      return 'Infinity';
    case NUMERIC_NAN:
      return 'NaN';
    case NUMERIC_ZERO:
      return scale !== undefined && scale > 0 ? '0.' + '0'.repeat(scale) : '0';
    case NUMERIC_POS:
    case NUMERIC_NEG:
      break;
    default:
      return null;
  }
  const flip = mask ^ (cls === NUMERIC_NEG ? 0xff : 0);
  const head = buf[pos++]! ^ flip;
  let exponent: number;
  if (head === EXP_LARGE || head === EXP_SMALL) {
    if (pos + 4 > buf.length) return null;
    const u = (((buf[pos]! ^ flip) << 24) | ((buf[pos + 1]! ^ flip) << 16) | ((buf[pos + 2]! ^ flip) << 8) | (buf[pos + 3]! ^ flip)) >>> 0;
    pos += 4;
    exponent = head === EXP_LARGE ? u : u - TWO_POW_31;
  } else {
    exponent = head - EXP_BIAS;
  }
  let digits = '';
  for (;;) {
    if (pos >= buf.length) return null;
    const b = buf[pos++]! ^ flip;
    if (b === 0) break;
    if (b > 100) return null;
    const v = b - 1;
    digits += String.fromCharCode(48 + ((v / 10) | 0), 48 + (v % 10));
  }
  numericKeyEnd = pos;
  if (digits.length === 0) return null;
  if (digits.charCodeAt(digits.length - 1) === 48) digits = digits.slice(0, -1);
  return formatDecimal(cls === NUMERIC_NEG, digits, exponent, scale);
}

/** Text of (-)0.digits x 10^exponent, with at least `scale` fraction digits. */
export function formatDecimal(negative: boolean, digits: string, exponent: number, scale: number | undefined): string {
  const n = digits.length;
  let intPart: string;
  let fracPart: string;
  if (exponent <= 0) {
    intPart = '0';
    fracPart = '0'.repeat(-exponent) + digits;
  } else if (exponent >= n) {
    intPart = digits + '0'.repeat(exponent - n);
    fracPart = '';
  } else {
    intPart = digits.slice(0, exponent);
    fracPart = digits.slice(exponent);
  }
  if (scale !== undefined && fracPart.length < scale) fracPart += '0'.repeat(scale - fracPart.length);
  const text = fracPart.length > 0 ? `${intPart}.${fracPart}` : intPart;
  return negative ? '-' + text : text;
}
