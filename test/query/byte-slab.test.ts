import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ByteSlab } from '../../query/dml/byte-slab.js';

describe('ByteSlab (bulk insert keys and images as views of shared chunks)', () => {
  it('every view keeps its own bytes, across chunk boundaries and later copies, and is a copy', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 200 }), (arrays) => {
        const slab = new ByteSlab(1024); // copies up to 64 bytes: all of these
        const originals = arrays.map((bytes) => Uint8Array.from(bytes));
        const views = arrays.map((bytes) => slab.copy(bytes));
        arrays.forEach((bytes) => bytes.fill(0xee));
        views.forEach((view, i) => expect([...view]).toEqual([...originals[i]!]));
      }),
    );
  });

  it('views do not overlap and do not change when the source changes; long arrays come back as they are', () => {
    const slab = new ByteSlab(64);
    const a = Uint8Array.from([1, 2, 3]);
    const va = slab.copy(a);
    a[0] = 9;
    const vb = slab.copy(Uint8Array.from([4, 5]));
    expect([...va, ...vb]).toEqual([1, 2, 3, 4, 5]);
    const long = new Uint8Array(5).fill(7); // over 64 / 16 bytes
    expect(slab.copy(long)).toBe(long);
  });

  it('copyPrefix copies only the first `length` bytes of a scratch buffer the encoder reuses, also when they are long', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 120 }), { maxLength: 100 }), (arrays) => {
        const slab = new ByteSlab(1024); // up to 64 bytes into chunks, longer ones into arrays of their own
        const scratch = new Uint8Array(256);
        const views = arrays.map((bytes) => {
          scratch.fill(0xaa);
          scratch.set(bytes);
          return slab.copyPrefix(scratch, bytes.length);
        });
        scratch.fill(0xee);
        views.forEach((view, i) => expect([...view]).toEqual([...arrays[i]!]));
      }),
    );
  });
});
