/**
 * Properties (fast-check): exact decimal arithmetic against a BigInt rational oracle, and for every
 * type: the comparator is a total order consistent with hashKey (equal <=> same key), and text
 * output reads back to an equal value.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as D from '../../../query/types/decimal.js';
import { T, typeSystem, arrayOf, type Interval, type QType, type QValue } from '../../../query/types/index.js';
import { numericTextArb, textArb } from '../../core/sql-arbitraries.js';

/** value = n / d, d > 0. */
interface Rat {
  n: bigint;
  d: bigint;
}
const rat = (x: D.Decimal): Rat => ({ n: x.coef, d: 10n ** BigInt(x.scale) });
const cmpRat = (a: Rat, b: Rat): number => {
  const l = a.n * b.d,
    r = b.n * a.d;
  return l < r ? -1 : l > r ? 1 : 0;
};
/** round(n/d * 10^s) half away from zero. */
function roundRat(a: Rat, s: number): bigint {
  const num = a.n * 10n ** BigInt(s);
  const q = num / a.d,
    r = num % a.d;
  const twice = (r < 0n ? -r : r) * 2n;
  return twice >= a.d ? (num < 0n ? q - 1n : q + 1n) : q;
}

const decArb: fc.Arbitrary<D.Decimal> = fc.oneof(
  fc.record({ coef: fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }), scale: fc.integer({ min: 0, max: 30 }) }),
  fc.record({ coef: fc.bigInt({ min: -1000n, max: 1000n }), scale: fc.integer({ min: 0, max: 4 }) }),
);
const nonZero = decArb.filter((d) => d.coef !== 0n);

describe('decimal arithmetic against a rational oracle', () => {
  it('add, sub, mul are exact with PostgreSQL result scales', () => {
    fc.assert(
      fc.property(decArb, decArb, (a, b) => {
        const s = D.add(a, b),
          d = D.sub(a, b),
          m = D.mul(a, b);
        expect(s.scale).toBe(Math.max(a.scale, b.scale));
        expect(m.scale).toBe(a.scale + b.scale);
        const ra = rat(a),
          rb = rat(b);
        expect(cmpRat(rat(s), { n: ra.n * rb.d + rb.n * ra.d, d: ra.d * rb.d })).toBe(0);
        expect(cmpRat(rat(d), { n: ra.n * rb.d - rb.n * ra.d, d: ra.d * rb.d })).toBe(0);
        expect(cmpRat(rat(m), { n: ra.n * rb.n, d: ra.d * rb.d })).toBe(0);
      }),
      { numRuns: 500 },
    );
  });

  it('div rounds the exact quotient half away from zero at select_div_scale', () => {
    fc.assert(
      fc.property(decArb, nonZero, (a, b) => {
        const q = D.div(a, b);
        expect(q.scale).toBe(D.selectDivScale(a, b));
        const ra = rat(a),
          rb = rat(b);
        const exact: Rat = rb.n < 0n ? { n: -ra.n * rb.d, d: -rb.n * ra.d } : { n: ra.n * rb.d, d: rb.n * ra.d };
        expect(q.coef).toBe(roundRat(exact, q.scale));
      }),
      { numRuns: 500 },
    );
  });

  it('compare, round, trunc, mod agree with the oracle; parse(format(x)) = x', () => {
    fc.assert(
      fc.property(decArb, nonZero, fc.integer({ min: -5, max: 35 }), (a, b, s) => {
        expect(D.compare(a, b)).toBe(cmpRat(rat(a), rat(b)));
        if (s >= 0) {
          expect(D.roundTo(a, s).coef).toBe(roundRat(rat(a), s));
          const t = D.truncTo(a, s);
          expect(t.coef).toBe((a.coef * 10n ** BigInt(s)) / 10n ** BigInt(a.scale));
        }
        const m = D.mod(a, b);
        const k = D.divTrunc(a, b);
        expect(D.compare(D.add(D.mul(k, b), m), a)).toBe(0);
        expect(D.sign(m) === 0 || D.sign(m) === D.sign(a)).toBe(true);
        const back = D.parseDecimal(D.formatDecimal(a))!;
        expect(back).toEqual(a);
      }),
      { numRuns: 500 },
    );
  });

  it('sqrt is the correctly rounded root', () => {
    fc.assert(
      fc.property(
        decArb.map((d) => D.abs(d)),
        fc.integer({ min: 0, max: 30 }),
        (a, s) => {
          const r = D.sqrtToScale(a, s);
          // r - 0.5ulp <= sqrt(a) < r + 0.5ulp  <=>  (2r - 1)^2 <= 4a*10^(2s) < (2r + 1)^2 (in units of 10^-s / 2)
          const four = 4n * a.coef * 10n ** BigInt(2 * s);
          const den = 10n ** BigInt(a.scale);
          const lo = (2n * r.coef - 1n) ** 2n * den,
            hi = (2n * r.coef + 1n) ** 2n * den;
          expect(r.coef === 0n || lo <= four).toBe(true);
          expect(four < hi).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});

const f64 = fc.oneof(fc.double(), fc.constantFrom(0, -0, NaN, Infinity, -Infinity, 1, 1.5, 0.1));
const f32 = fc.oneof(fc.float(), fc.constantFrom(0, -0, NaN, Infinity, 0.1)).map((x) => Math.fround(x));
const intervalArb: fc.Arbitrary<Interval> = fc.oneof(
  fc.record({
    months: fc.integer({ min: -3, max: 3 }),
    days: fc.integer({ min: -90, max: 90 }),
    micros: fc.constantFrom(0n, 86_400_000_000n, -86_400_000_000n, 1n, 3_600_000_000n),
  }),
  fc.record({
    months: fc.integer({ min: -1000, max: 1000 }),
    days: fc.integer({ min: -1000, max: 1000 }),
    micros: fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n }),
  }),
);
const tsArb = fc.bigInt({ min: -210_000_000_000_000_000n, max: 9_000_000_000_000_000_000n });
const jsonArb = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.parse(JSON.stringify(v)) as QValue);

interface Case {
  type: QType;
  arb: fc.Arbitrary<QValue>;
  roundTrip?: boolean;
}
const CASES: Record<string, Case> = {
  bool: { type: T.bool, arb: fc.boolean() },
  int2: { type: T.int2, arb: fc.integer({ min: -32768, max: 32767 }) },
  int4: { type: T.int4, arb: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }) },
  int8: { type: T.int8, arb: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }) },
  float4: { type: T.float4, arb: f32 },
  float8: { type: T.float8, arb: f64 },
  numeric: { type: T.numeric, arb: numericTextArb.map((s) => typeSystem.parseText(T.numeric, s)) },
  'numeric (any spelling)': {
    type: T.numeric,
    arb: fc.oneof(
      numericTextArb,
      numericTextArb.map((s) => typeSystem.parseText(T.numeric, s)),
    ),
  },
  text: { type: T.text, arb: textArb },
  char: { type: { name: 'char', length: 4 }, arb: fc.string({ maxLength: 4, unit: fc.constantFrom('a', ' ', 'b') }).map((s) => s.padEnd(4)) },
  uuid: { type: T.uuid, arb: fc.uuid() },
  jsonb: { type: T.jsonb, arb: jsonArb },
  timestamp: { type: T.timestamp, arb: tsArb },
  timestamptz: { type: T.timestamptz, arb: tsArb },
  date: { type: T.date, arb: fc.integer({ min: -2_400_000, max: 2_900_000 }) },
  interval: { type: T.interval, arb: intervalArb },
  vector: {
    type: { name: 'vector', dimension: 3 },
    arb: fc.array(fc.float({ noNaN: true, noDefaultInfinity: true }), { minLength: 3, maxLength: 3 }).map((a) => Float32Array.from(a)),
  },
  'int4[]': { type: arrayOf(T.int4), arb: fc.array(fc.option(fc.integer({ min: -5, max: 5 }), { nil: null }), { maxLength: 4 }) },
  'text[]': { type: arrayOf(T.text), arb: fc.array(fc.option(textArb, { nil: null }), { maxLength: 3 }) },
  'numeric[]': { type: arrayOf(T.numeric), arb: fc.array(fc.constantFrom('1', '1.0', '-2.50', '0'), { maxLength: 3 }) },
};

describe('comparator, hashKey and text I/O for every type', () => {
  for (const [name, c] of Object.entries(CASES)) {
    it(`${name}: equal <=> same hash key; a total order; formatText reads back equal`, () => {
      const cmp = typeSystem.comparator(c.type);
      const key = typeSystem.hashKey(c.type);
      fc.assert(
        fc.property(c.arb, c.arb, c.arb, (a, b, x) => {
          const ab = cmp(a, b);
          expect(Math.sign(ab) + Math.sign(cmp(b, a))).toBe(0);
          expect(cmp(a, a)).toBe(0);
          expect(ab === 0).toBe(key(a) === key(b));
          if (ab <= 0 && cmp(b, x) <= 0) expect(cmp(a, x)).toBeLessThanOrEqual(0);
          const text = typeSystem.formatText(c.type, a);
          const back = typeSystem.parseText(c.type.name === 'char' ? { name: 'char', length: 4 } : c.type, text);
          expect(cmp(back, a)).toBe(0);
        }),
        { numRuns: 300 },
      );
    });
  }

  it('equal values of different scales or spellings share keys', () => {
    const nk = typeSystem.hashKey(T.numeric);
    expect(nk('1.0')).toBe(nk('1.00'));
    expect(nk('0.000')).toBe(nk('0'));
    const fk = typeSystem.hashKey(T.float8);
    expect(fk(-0)).toBe(fk(0));
    expect(fk(NaN)).toBe(fk(NaN));
    const ik = typeSystem.hashKey(T.interval);
    expect(ik({ months: 1, days: 0, micros: 0n })).toBe(ik({ months: 0, days: 30, micros: 0n }));
    expect(ik({ months: 0, days: 1, micros: 0n })).toBe(ik({ months: 0, days: 0, micros: 86_400_000_000n }));
    const ck = typeSystem.hashKey({ name: 'char', length: 3 });
    expect(ck('a  ')).toBe(ck('a'));
    const jk = typeSystem.hashKey(T.jsonb);
    expect(jk({ b: 1, a: [1, 2] })).toBe(jk({ a: [1, 2], b: 1 }));
  });

  it('float order: NaN above Infinity, -0 = 0', () => {
    const cmp = typeSystem.comparator(T.float8);
    expect([NaN, Infinity, 1, -Infinity, -0].sort(cmp)).toEqual([-Infinity, -0, 1, Infinity, NaN]);
    expect(cmp(-0, 0)).toBe(0);
    expect(cmp(NaN, NaN)).toBe(0);
  });

  it('text order is code point order (C collation), not UTF-16 order', () => {
    const cmp = typeSystem.comparator(T.text);
    expect(cmp('\uffff', '\u{10000}')).toBe(-1);
    expect(cmp('B', 'a')).toBe(-1);
    expect(cmp('a', 'ab')).toBe(-1);
  });
});
