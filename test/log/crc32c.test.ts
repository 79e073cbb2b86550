import { crc32c } from '@node-rs/crc32';
import { describe, expect, it } from 'vitest';
import { crc32cOf } from '../../log/crc32c.js';

describe('crc32cOf (short spans in JS, long ones native)', () => {
  it('is CRC-32C: the check value, and the native CRC of every span length around the switch', () => {
    expect(crc32cOf(Buffer.from('123456789'), 0, 9)).toBe(0xe3069283);
    expect(crc32cOf(new Uint8Array(4), 2, 2)).toBe(0);
    const buf = new Uint8Array(4096);
    let state = 7;
    for (let i = 0; i < buf.length; i++) buf[i] = (state = (state * 1103515245 + 12345) % 2 ** 31) >>> 16;
    // A view that does not start at its buffer's first byte, as a Buffer from the pool does not.
    const inner = buf.subarray(3);
    for (let length = 0; length <= 600; length++) {
      for (const start of [0, 1, 5, 8, 1000 + length]) {
        expect(crc32cOf(inner, start, start + length), `length ${length} at ${start}`).toBe(crc32c(inner.subarray(start, start + length)) >>> 0);
      }
    }
  });
});
