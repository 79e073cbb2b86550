/**
 * Text input/output of booleans, integers and floats, as PostgreSQL's boolin/int4in/float8in and
 * their output functions (PostgreSQL 15: no hex/underscore integer input, shortest-exact floats).
 */
import { invalidInput, outOfRange } from './errors.js';

export const INT2_MIN = -32768;
export const INT2_MAX = 32767;
export const INT4_MIN = -2147483648;
export const INT4_MAX = 2147483647;
export const INT8_MIN = -9223372036854775808n;
export const INT8_MAX = 9223372036854775807n;

const BOOL_WORDS: readonly [string, boolean, number][] = [
  // word, value, shortest accepted prefix
  ['true', true, 1],
  ['false', false, 1],
  ['yes', true, 1],
  ['no', false, 1],
  ['on', true, 2],
  ['off', false, 2],
  ['1', true, 1],
  ['0', false, 1],
];

/** boolin: t/f, true/false, yes/no, on/off, 1/0 and unique prefixes, any case, trimmed. */
export function parseBool(text: string): boolean {
  const s = text.trim().toLowerCase();
  if (s.length > 0) {
    for (const [word, value, prefixMin] of BOOL_WORDS) {
      if (s.length >= prefixMin && word.startsWith(s)) return value;
    }
  }
  throw invalidInput('boolean', text);
}

export function formatBool(v: boolean): string {
  return v ? 'true' : 'false';
}

const INT_RE = /^\s*([+-]?\d+)\s*$/;

function parseIntText(text: string, typeName: string, min: bigint, max: bigint): bigint {
  const m = INT_RE.exec(text);
  if (!m) throw invalidInput(typeName, text);
  const v = BigInt(m[1]!);
  if (v < min || v > max) throw outOfRange(`value "${text}" is out of range for type ${typeName}`);
  return v;
}

export function parseInt2(text: string): number {
  return Number(parseIntText(text, 'smallint', BigInt(INT2_MIN), BigInt(INT2_MAX)));
}

export function parseInt4(text: string): number {
  return Number(parseIntText(text, 'integer', BigInt(INT4_MIN), BigInt(INT4_MAX)));
}

export function parseInt8(text: string): bigint {
  return parseIntText(text, 'bigint', INT8_MIN, INT8_MAX);
}

const FLOAT_RE = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const FLOAT_SPECIAL: Record<string, number> = {
  nan: NaN,
  '+nan': NaN,
  '-nan': NaN,
  infinity: Infinity,
  '+infinity': Infinity,
  inf: Infinity,
  '+inf': Infinity,
  '-infinity': -Infinity,
  '-inf': -Infinity,
};

function parseFloatText(text: string, typeName: string, round: (v: number) => number): number {
  const s = text.trim();
  const sp = FLOAT_SPECIAL[s.toLowerCase()];
  if (sp !== undefined) return sp;
  if (!FLOAT_RE.test(s)) throw invalidInput(typeName, text);
  const v = round(Number(s));
  const mantissaNonZero = /[1-9]/.test(s.replace(/[eE].*$/, ''));
  if (!Number.isFinite(v) || (v === 0 && mantissaNonZero)) {
    throw outOfRange(`"${s}" is out of range for type ${typeName}`);
  }
  return v;
}

export function parseFloat8(text: string): number {
  return parseFloatText(text, 'double precision', (v) => v);
}

export function parseFloat4(text: string): number {
  return parseFloatText(text, 'real', Math.fround);
}

/**
 * A float4 as the double that prints (JSON, JS) as its shortest round-trip digits, as float4out
 * does: the nearest decimal of the fewest significant digits (1..9) that reads back as `v`.
 * Reading back is monotone in the digit count (the nearest (p+1)-digit decimal is no farther from
 * v than the p-digit one) and 9 digits always do, so the probes may go in any order: 7 first, as
 * ~95% of float4 values need 7 or 8. Vectors print 128+ of these per row.
 */
export function float4Number(v: number): number {
  if (v === 0 || !Number.isFinite(v)) return v;
  let shortest = Number(v.toPrecision(7));
  if (Math.fround(shortest) !== v) {
    const eight = Number(v.toPrecision(8));
    return Math.fround(eight) === v ? eight : Number(v.toPrecision(9));
  }
  for (let p = 6; p >= 1; p--) {
    const fewer = Number(v.toPrecision(p));
    if (Math.fround(fewer) !== v) break;
    shortest = fewer;
  }
  return shortest;
}

/** Shortest round-trip digits of a finite, non-zero double: digits and decimal exponent of the first. */
function shortestDigits(v: number, float4: boolean): { digits: string; exp: number } {
  const e = float4 ? float4Number(v).toExponential() : v.toExponential();
  const m = /^-?(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(e)!;
  return { digits: m[1]! + (m[2] ?? ''), exp: Number(m[3]) };
}

/** float8out/float4out (PostgreSQL 12+): shortest exact digits, exponent form outside 1e-4 <= |v| < 1e15 (float4: 1e6). */
export function formatFloat(v: number, float4 = false): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return 'Infinity';
  if (v === -Infinity) return '-Infinity';
  if (v === 0) return Object.is(v, -0) ? '-0' : '0';
  const sign = v < 0 ? '-' : '';
  const { digits, exp } = shortestDigits(Math.abs(v), float4);
  const fixedMax = float4 ? 6 : 15;
  if (exp >= -4 && exp < fixedMax) {
    if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
    if (digits.length <= exp + 1) return sign + digits + '0'.repeat(exp + 1 - digits.length);
    return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
  }
  const mant = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  const absExp = Math.abs(exp);
  return `${sign}${mant}e${exp < 0 ? '-' : '+'}${absExp < 10 ? '0' : ''}${absExp}`;
}

/** Checks an integer result against its type's range ('integer out of range'). */
export function checkInt4(v: number): number {
  if (!(v >= INT4_MIN && v <= INT4_MAX)) throw outOfRange('integer out of range');
  return v;
}

export function checkInt2(v: number): number {
  if (!(v >= INT2_MIN && v <= INT2_MAX)) throw outOfRange('smallint out of range');
  return v;
}

export function checkInt8(v: bigint): bigint {
  if (v < INT8_MIN || v > INT8_MAX) throw outOfRange('bigint out of range');
  return v;
}

/** float4 results: overflow to infinity from finite inputs is an error in PostgreSQL. */
export function checkFloat4(v: number, inputsFinite: boolean): number {
  const r = Math.fround(v);
  if (!Number.isFinite(r) && !Number.isNaN(r) && inputsFinite) throw outOfRange('value out of range: overflow');
  return r;
}

export function checkFloat8(v: number, inputsFinite: boolean): number {
  if (!Number.isFinite(v) && !Number.isNaN(v) && inputsFinite) throw outOfRange('value out of range: overflow');
  return v;
}
