import { describe, expect, it } from 'vitest';
import { cosineDistance, cosineDistanceOfNorms, float32SquaredNorm } from '../../query/functions/vector-math.js';
import { seededRandom } from '../helpers/random.js';

const random = seededRandom(128);
/** Float32 values of varied magnitudes (1e-6 .. 1e6) and signs: float sums that round at every step. */
const vectorOf = (dims: number): Float32Array => Float32Array.from({ length: dims }, () => (random() * 2 - 1) * 10 ** Math.floor(random() * 13 - 6));

describe('cosine distance with norms summed apart (the direct top-k ranks by it)', () => {
  it('is the very number cosineDistance gives, for vectors of every size and magnitude', () => {
    for (let i = 0; i < 3000; i++) {
      const dims = 1 + (i % 200);
      const a = vectorOf(dims);
      const b = i % 10 === 0 ? a : vectorOf(dims);
      expect(Object.is(cosineDistanceOfNorms(a, b, float32SquaredNorm(a), float32SquaredNorm(b)), cosineDistance(a, b))).toBe(true);
    }
  });

  it('answers NaN for a zero vector and the same error for different dimensions', () => {
    const zero = new Float32Array(4);
    const one = Float32Array.from([1, 2, 3, 4]);
    expect(cosineDistanceOfNorms(zero, one, float32SquaredNorm(zero), float32SquaredNorm(one))).toBeNaN();
    expect(cosineDistance(zero, one)).toBeNaN();
    const three = Float32Array.from([1, 2, 3]);
    const message = (fn: () => unknown): string => {
      try {
        fn();
      } catch (error) {
        return (error as Error).message;
      }
      return 'no error';
    };
    expect(message(() => cosineDistanceOfNorms(one, three, float32SquaredNorm(one), float32SquaredNorm(three)))).toBe(
      message(() => cosineDistance(one, three)),
    );
    expect(message(() => cosineDistance(one, three))).toBe('different vector dimensions 4 and 3');
  });
});
