import { describe, expect, it } from 'vitest';
import { CosineRanker } from '../../query/fast-vector-dot.js';
import { cosineDistanceOfNorms, float32SquaredNorm } from '../../query/functions/vector-math.js';
import { seededRandom } from '../helpers/random.js';

const random = seededRandom(4096);
/** Float32 values of varied magnitudes (1e-6 .. 1e6) and signs, a few zeros, subnormals and huge ones: sums that round at every step. */
const valueOf = (): number => {
  const pick = random();
  if (pick < 0.03) return 0;
  if (pick < 0.05) return (random() * 2 - 1) * 1e-40;
  if (pick < 0.07) return (random() * 2 - 1) * 1e30;
  return (random() * 2 - 1) * 10 ** Math.floor(random() * 13 - 6);
};
const vectorOf = (dims: number): Float32Array => Float32Array.from({ length: dims }, valueOf);
const same = (a: number, b: number): boolean => Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));

describe('the direct top-k cosine ranking in WebAssembly (fast-vector-dot.ts)', () => {
  it('is the very number cosineDistanceOfNorms gives, and the query norm float32SquaredNorm, for every size and magnitude', () => {
    const ranker = new CosineRanker();
    for (let search = 0; search < 600; search++) {
      const dims = 1 + ((search * 7) % 300);
      const query = vectorOf(dims);
      const queryNorm = ranker.squaredNorm(query);
      expect(same(queryNorm, float32SquaredNorm(query))).toBe(true);
      for (let row = 0; row < 10; row++) {
        const vector = row === 0 ? query : vectorOf(dims);
        const norm = float32SquaredNorm(vector);
        expect(same(ranker.distance(vector, query, norm, queryNorm), cosineDistanceOfNorms(vector, query, norm, queryNorm))).toBe(true);
      }
    }
  });

  it('ranks against each search its own query, also when searches alternate and when the memory grows (wide vectors)', () => {
    const ranker = new CosineRanker();
    const [a, b] = [vectorOf(128), vectorOf(128)];
    const rows = Array.from({ length: 20 }, () => vectorOf(128));
    const expected = (query: Float32Array) => rows.map((r) => cosineDistanceOfNorms(r, query, float32SquaredNorm(r), float32SquaredNorm(query)));
    for (const query of [a, b, a, b]) {
      const queryNorm = ranker.squaredNorm(query);
      expect(rows.map((r) => ranker.distance(r, query, float32SquaredNorm(r), queryNorm))).toEqual(expected(query));
    }
    // A query changed in place and searched again is copied again.
    a[0] = a[0]! + 1;
    const changedNorm = ranker.squaredNorm(a);
    expect(rows.map((r) => ranker.distance(r, a, float32SquaredNorm(r), changedNorm))).toEqual(expected(a));
    // 16,000 floats: two of them do not fit the first page of memory.
    const wide = vectorOf(16_000);
    const wideRow = vectorOf(16_000);
    const wideNorm = ranker.squaredNorm(wide);
    expect(same(wideNorm, float32SquaredNorm(wide))).toBe(true);
    const norm = float32SquaredNorm(wideRow);
    expect(same(ranker.distance(wideRow, wide, norm, wideNorm), cosineDistanceOfNorms(wideRow, wide, norm, wideNorm))).toBe(true);
    // And narrow ones after it.
    const queryNorm = ranker.squaredNorm(b);
    expect(rows.map((r) => ranker.distance(r, b, float32SquaredNorm(r), queryNorm))).toEqual(expected(b));
  });

  it('answers NaN for a zero vector and the same error as cosineDistanceOfNorms for different dimensions', () => {
    const ranker = new CosineRanker();
    const zero = new Float32Array(4);
    const one = Float32Array.from([1, 2, 3, 4]);
    expect(ranker.distance(zero, one, 0, ranker.squaredNorm(one))).toBeNaN();
    const three = Float32Array.from([1, 2, 3]);
    expect(() => ranker.distance(three, one, float32SquaredNorm(three), ranker.squaredNorm(one))).toThrow('different vector dimensions 3 and 4');
  });
});
