/**
 * fast-check arbitraries for SQL values of every type, and independent SQL-order oracles
 * (BigInt arithmetic for integers and decimals, code points for text) for the codec tests.
 */
import fc from 'fast-check';
import type { JsonValue, SqlType, SqlTypeName, SqlValue } from '../../core/values.js';

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

const sign = (n: number | bigint): number => (n > 0 ? 1 : n < 0 ? -1 : 0);

/** Strings with many awkward characters: NUL, spaces, 2-, 3- and 4-byte UTF-8, U+FEFF, U+FFFF. */
export const textArb = fc.oneof(
  fc.string({
    unit: fc.constantFrom('\0', ' ', 'a', 'b', 'z', '\u007f', '\u0080', '\u00ff', '\u07ff', '\u0800', '\ufeff', '\uffff', '\u{10000}', '😀', '\u{10ffff}'),
    maxLength: 12,
  }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.string({ unit: 'binary', minLength: 40, maxLength: 120 }),
  fc.string({ maxLength: 20 }),
);

const digitString = (maxLength: number): fc.Arbitrary<string> =>
  fc.string({ unit: fc.constantFrom('0', '0', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9'), maxLength });

/** Decimal text: canonical-looking and not (leading zeros, trailing zeros, exponents), plus specials. */
export const numericTextArb: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .tuple(fc.constantFrom('', '-', '+'), digitString(24), digitString(24), fc.option(fc.integer({ min: -40, max: 40 }), { nil: undefined }))
      .map(([s, i, f, e]) => `${s === '+' && e === undefined ? '' : s}${i === '' ? '0' : i}${f === '' ? '' : '.' + f}${e === undefined ? '' : 'e' + e}`),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'NaN',
      'Infinity',
      '-Infinity',
      '0',
      '-0',
      '0.000',
      '1',
      '1.0',
      '1.00',
      '-1',
      '-1.0',
      '0.1',
      '-0.1',
      '100',
      '99.99',
      '1e5',
      '0.00001',
      '123456789012345678901234567890.5',
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.boolean(), fc.integer({ min: 1, max: 9 }), fc.integer({ min: 100, max: 400 }), fc.boolean())
      .map(([neg, d, zeros, big]) => (neg ? '-' : '') + (big ? `${d}${'0'.repeat(zeros)}` : `0.${'0'.repeat(zeros)}${d}`)),
  },
);

const int64Arb = fc.oneof(
  fc.bigInt({ min: -1000n, max: 1000n }),
  fc.bigInt({ min: INT64_MIN, max: INT64_MAX }),
  fc.constantFrom(INT64_MIN, INT64_MAX, 0n, -1n, 2n ** 52n, -(2n ** 52n), 2n ** 52n - 1n, -(2n ** 52n) - 1n, 2n ** 53n, 2n ** 62n),
);

const float8Arb = fc.oneof(fc.double(), fc.constantFrom(0, -0, NaN, Infinity, -Infinity, Number.MIN_VALUE, -Number.MIN_VALUE, Number.MAX_VALUE, 1e-50, -1e-50));
const float4Arb = fc.oneof(fc.float(), float8Arb);

export interface TypeCase {
  readonly type: SqlType;
  /** Values in the one run-time representation of core/values.ts (no NULL). */
  readonly value: fc.Arbitrary<SqlValue>;
  /** SQL comparison of two non-null values, or undefined when the type is not orderable. */
  readonly compare?: (a: SqlValue, b: SqlValue) => number;
}

export function compareDecimalText(a: string, b: string): number {
  const rank = (s: string): number => (s === 'NaN' ? 3 : s === 'Infinity' ? 2 : s === '-Infinity' ? -2 : 0);
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== 0 || rb !== 0) {
    if (ra === rb) return 0;
    if (ra === 0) return rb === -2 ? 1 : -1;
    if (rb === 0) return ra === -2 ? -1 : 1;
    return sign(ra - rb);
  }
  const pa = parseDecimal(a);
  const pb = parseDecimal(b);
  const e = Math.min(pa.exponent, pb.exponent);
  return sign(pa.mantissa * 10n ** BigInt(pa.exponent - e) - pb.mantissa * 10n ** BigInt(pb.exponent - e));
}

/** value = mantissa x 10^exponent */
function parseDecimal(s: string): { mantissa: bigint; exponent: number } {
  const [mant, exp] = s.toLowerCase().split('e') as [string, string | undefined];
  const negative = mant.startsWith('-');
  const unsigned = mant.replace(/^[-+]/, '');
  const [intPart, fracPart = ''] = unsigned.split('.') as [string, string | undefined];
  const mantissa = BigInt((intPart || '0') + fracPart);
  return { mantissa: negative ? -mantissa : mantissa, exponent: Number(exp ?? 0) - fracPart.length };
}

export function compareCodePoints(a: string, b: string): number {
  const ca = Array.from(a, (ch) => ch.codePointAt(0)!);
  const cb = Array.from(b, (ch) => ch.codePointAt(0)!);
  for (let i = 0; i < Math.min(ca.length, cb.length); i++) if (ca[i] !== cb[i]) return sign(ca[i]! - cb[i]!);
  return sign(ca.length - cb.length);
}

function compareFloat(a: number, b: number): number {
  if (Number.isNaN(a)) return Number.isNaN(b) ? 0 : 1;
  if (Number.isNaN(b)) return -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

const compareInt = (a: SqlValue, b: SqlValue): number => sign(BigInt(a as number | bigint) - BigInt(b as number | bigint));
const trimEndSpaces = (s: string): string => s.replace(/ +$/, '');

const t = (name: SqlTypeName, extra: Omit<SqlType, 'name'> = {}): SqlType => ({ name, ...extra });

export const TYPE_CASES: readonly TypeCase[] = [
  { type: t('bool'), value: fc.boolean(), compare: (a, b) => sign(Number(a) - Number(b)) },
  { type: t('int2'), value: fc.integer({ min: -32768, max: 32767 }), compare: compareInt },
  { type: t('int4'), value: fc.oneof(fc.integer(), fc.integer({ min: -5, max: 5 })), compare: compareInt },
  { type: t('int8'), value: int64Arb, compare: compareInt },
  { type: t('float4'), value: float4Arb, compare: (a, b) => compareFloat(Math.fround(a as number), Math.fround(b as number)) },
  { type: t('float8'), value: float8Arb, compare: (a, b) => compareFloat(a as number, b as number) },
  { type: t('numeric'), value: numericTextArb, compare: (a, b) => compareDecimalText(a as string, b as string) },
  { type: t('text'), value: textArb, compare: (a, b) => compareCodePoints(a as string, b as string) },
  { type: t('varchar', { length: 200 }), value: textArb, compare: (a, b) => compareCodePoints(a as string, b as string) },
  {
    type: t('char', { length: 6 }),
    value: fc.tuple(textArb, fc.integer({ min: 0, max: 3 })).map(([s, spaces]) => s + ' '.repeat(spaces)),
    compare: (a, b) => compareCodePoints(trimEndSpaces(a as string), trimEndSpaces(b as string)),
  },
  { type: t('uuid'), value: fc.uuid(), compare: (a, b) => ((a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0) },
  { type: t('timestamp'), value: int64Arb, compare: compareInt },
  { type: t('timestamptz'), value: int64Arb, compare: compareInt },
  { type: t('date'), value: fc.integer(), compare: compareInt },
  { type: t('jsonb'), value: fc.jsonValue() as fc.Arbitrary<JsonValue> },
  { type: t('vector', { dimension: 3 }), value: fc.float32Array({ minLength: 3, maxLength: 3 }) },
];

export const ORDERABLE_CASES = TYPE_CASES.filter((c) => c.compare !== undefined);

/** SQL comparison with NULLS LAST (ascending). */
export function compareNullable(c: TypeCase, a: SqlValue, b: SqlValue): number {
  if (a === null) return b === null ? 0 : 1;
  if (b === null) return -1;
  return c.compare!(a, b);
}

export const nullable = <T extends SqlValue>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | null> => fc.option(arb, { nil: null, freq: 6 });

export { sign };

/** What a stored value reads back as: REAL is rounded to float32, JSON goes through JSON text. */
export function stored(type: SqlType, v: SqlValue): SqlValue {
  if (v === null) return null;
  if (type.name === 'float4') return Math.fround(v as number);
  if (type.name === 'jsonb') return JSON.parse(JSON.stringify(v)) as SqlValue;
  return v;
}
