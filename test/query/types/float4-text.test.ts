import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { float4Number, formatFloat } from '../../../query/types/scalar-text.js';

/** The definition: the first of 1..9 significant digits whose decimal reads back as the float4. */
function shortestByDefinition(v: number): number {
  for (let p = 1; p <= 9; p++) {
    const n = Number(v.toPrecision(p));
    if (Math.fround(n) === v) return n;
  }
  throw new Error(`no decimal of 9 digits reads back as ${v}`);
}

const float4FromBits = (bits: number): number => new Float32Array(new Uint32Array([bits]).buffer)[0]!;

describe('float4 output (float4out: shortest round-trip digits)', () => {
  it('float4Number is the shortest decimal that reads back, for any float4 bit pattern', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffff_ffff }), (bits) => {
        const v = float4FromBits(bits);
        if (!Number.isFinite(v) || v === 0) return float4Number(v) === v || (Number.isNaN(v) && Number.isNaN(float4Number(v)));
        return float4Number(v) === shortestByDefinition(v);
      }),
      { numRuns: 50_000 },
    );
  });

  it('prints as PostgreSQL does', () => {
    expect(formatFloat(Math.fround(0.1), true)).toBe('0.1');
    expect(formatFloat(Math.fround(1 / 3), true)).toBe('0.33333334');
    expect(formatFloat(Math.fround(123456.7), true)).toBe('123456.7');
    expect(formatFloat(Math.fround(1234567), true)).toBe('1.234567e+06');
    expect(formatFloat(Math.fround(1e-5), true)).toBe('1e-05');
    expect(float4Number(Math.fround(0.5))).toBe(0.5);
    expect(float4Number(float4FromBits(1))).toBe(1e-45);
  });
});
