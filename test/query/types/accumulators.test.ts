import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countState, floatSumState, intAvgState, intSumState, NumericSum } from '../../../query/functions/accumulators.js';
import * as D from '../../../query/types/decimal.js';
import * as N from '../../../query/types/numeric.js';

/** The reference: every value through exact bigint Decimals, specials through NUMERIC text rules. */
function referenceSum(values: readonly string[]): string | null {
  if (values.length === 0) return null;
  let acc: string = '0';
  let scale = 0;
  for (const v of values) {
    acc = N.numericAdd(acc, v);
    const d = D.parseDecimal(v);
    if (d) scale = Math.max(scale, d.scale);
  }
  // numericAdd('0', v) keeps v's scale; the sum's scale is the largest input scale.
  const d = D.parseDecimal(acc);
  return d ? N.fromDecimal(D.add(d, D.dec(0n, scale))) : acc;
}

const digits = (min: number, max: number) => fc.stringMatching(new RegExp(`^[0-9]{${min},${max}}$`));
const decimalText = fc.oneof(
  fc
    .tuple(fc.boolean(), digits(1, 6), fc.option(digits(0, 4), { nil: undefined }))
    .map(([neg, i, f]) => `${neg ? '-' : ''}${i}${f === undefined ? '' : `.${f}`}`),
  fc.tuple(fc.boolean(), digits(14, 22), digits(0, 8)).map(([neg, i, f]) => `${neg ? '-' : ''}${i}.${f}`),
  fc.constantFrom('0', '-0.00', '.5', '5.', '999999999999999', '9007199254740993', '0.000000000000001', '123456789012345.67'),
);

describe('NumericSum', () => {
  it('sums NUMERIC text exactly, with the largest input scale', () => {
    fc.assert(
      fc.property(fc.array(decimalText, { maxLength: 60 }), (values) => {
        const s = new NumericSum();
        for (const v of values) s.add(v);
        expect(s.text()).toBe(referenceSum(values));
        expect(s.n).toBe(values.length);
      }),
      { numRuns: 500 },
    );
  });

  it('follows NUMERIC rules once NaN or an infinity arrives', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(decimalText, fc.constantFrom('NaN', 'Infinity', '-Infinity')), { maxLength: 20 }), (values) => {
        const s = new NumericSum();
        for (const v of values) s.add(v);
        expect(s.text()).toBe(referenceSum(values));
      }),
      { numRuns: 300 },
    );
  });

  it('stays exact past 2^53 units', () => {
    const s = new NumericSum();
    for (let i = 0; i < 2000; i++) s.add('99999999999999.99');
    expect(s.text()).toBe('199999999999999980.00');
  });
});

describe('integer, float and count states', () => {
  it('sum and avg of integers are exact past 2^53', () => {
    const sum = intSumState();
    const avg = intAvgState();
    for (let i = 0; i < 5000; i++) {
      sum.step([2_147_483_647]);
      avg.step([2_147_483_647]);
    }
    sum.step([-1]);
    expect(sum.result()).toBe(5000n * 2_147_483_647n - 1n);
    expect(avg.result()).toBe('2147483647.00000000'); // PostgreSQL's division scale (checked on PGlite)
    const bigAvg = intAvgState();
    bigAvg.step([9_007_199_254_740_993n]);
    bigAvg.step([1n]);
    expect(bigAvg.result()).toBe('4503599627370497.0000');
  });

  it('count, float sum and avg', () => {
    const count = countState();
    expect(count.result()).toBe(0n);
    count.step([]);
    count.step([]);
    expect(count.result()).toBe(2n);
    const f = floatSumState(true);
    expect(f.result()).toBeNull();
    f.step([1.5]);
    f.step([2.5]);
    expect(f.result()).toBe(2);
  });
});
