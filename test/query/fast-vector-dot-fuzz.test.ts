import { describe, expect, it } from 'vitest';
import { CosineRanker } from '../../query/fast-vector-dot.js';
import { cosineDistanceOfNorms, float32SquaredNorm } from '../../query/functions/vector-math.js';

describe('wasm dot vs JS on random float32 bit patterns', () => {
  it('same numbers', () => {
    let s = 12345;
    const rnd = () => ((s = (s * 1103515245 + 12345) >>> 0), s);
    const ranker = new CosineRanker();
    const bits = new Uint32Array(1);
    const f = new Float32Array(bits.buffer);
    const val = (mode: number): number => {
      if (mode === 0) {
        bits[0] = rnd();
        return f[0]!;
      } // any pattern incl NaN, Inf, subnormal
      if (mode === 1) {
        bits[0] = (rnd() & 0x807fffff) | (((rnd() % 40) + 100) << 23);
        return f[0]!;
      } // near-equal exponents: cancellation
      bits[0] = (rnd() & 0x807fffff) | (((rnd() % 20) + 230) << 23);
      return f[0]!; // huge: overflow
    };
    let mismatches = 0;
    for (let t = 0; t < 20000; t++) {
      const n = 1 + (rnd() % 37);
      const mode = t % 3;
      const q = Float32Array.from({ length: n }, () => val(mode));
      const r = Float32Array.from({ length: n }, () => val(mode));
      const qn = ranker.squaredNorm(q);
      if (!Object.is(qn, float32SquaredNorm(q)) && !(Number.isNaN(qn) && Number.isNaN(float32SquaredNorm(q)))) mismatches++;
      const rn = float32SquaredNorm(r);
      const a = ranker.distance(r, q, rn, qn);
      const b = cosineDistanceOfNorms(r, q, rn, qn);
      if (!Object.is(a, b) && !(Number.isNaN(a) && Number.isNaN(b))) mismatches++;
    }
    expect(mismatches).toBe(0);
  });
});
