import { describe, expect, it } from 'vitest';
import { keyBytes, keyText } from '../../core/key-text.js';

// keyText makes short keys with String.fromCharCode and longer ones with a latin1 decode of a
// Buffer view: the two must give the same text (one char per byte) on either side of the threshold,
// for every byte value, whatever buffer and offset the key is a view into.
describe('keyText', () => {
  const bytesOf = (length: number, salt: number): Uint8Array => Uint8Array.from({ length }, (_v, i) => (i * 37 + salt * 101 + 0x80) & 0xff);
  const view = (bytes: Uint8Array, offset: number): Uint8Array => {
    const holder = new Uint8Array(bytes.length + offset + 3).fill(0x41);
    holder.set(bytes, offset);
    return holder.subarray(offset, offset + bytes.length);
  };

  it('is one char per byte, the latin1 text of the bytes, for lengths around the threshold and past it', () => {
    for (const length of [0, 1, 9, 14, 31, 32, 33, 44, 64, 65, 256, 1024, 1025, 5000]) {
      for (const salt of [0, 1, 2]) {
        const bytes = bytesOf(length, salt);
        const expected = Array.from(bytes, (b) => String.fromCharCode(b)).join('');
        for (const key of [bytes, view(bytes, 1), view(bytes, 13)]) {
          const text = keyText(key);
          expect(text.length, `${length}/${salt}`).toBe(length);
          expect(text === expected, `${length}/${salt}`).toBe(true);
          expect([...keyBytes(text)], `${length}/${salt}`).toEqual([...bytes]);
        }
      }
    }
  });

  it('covers every byte value, and different bytes make different texts', () => {
    const all = Uint8Array.from({ length: 256 }, (_v, i) => i);
    for (const length of [16, 32, 33, 256]) {
      const part = all.subarray(256 - length);
      expect([...keyText(part)].map((c) => c.charCodeAt(0))).toEqual([...part]);
      const other = Uint8Array.from(part);
      other[length - 1] = other[length - 1]! ^ 1;
      expect(keyText(other)).not.toBe(keyText(part));
    }
  });
});
