import { crc32c as nativeCrc32c } from '@node-rs/crc32';

/**
 * CRC-32C (Castagnoli) of buf[start, end). A short span is computed here, eight bytes a step
 * (slice-by-8 tables): the native call costs more than the bytes of a small record (a single-row
 * record's frame is ~80 bytes; replay checks 200,000 of them a second). A long span goes native.
 */
export function crc32cOf(buf: Uint8Array, start: number, end: number): number {
  if (end - start > JS_SPAN_BYTES_MAX) return nativeCrc32c(new Uint8Array(buf.buffer, buf.byteOffset + start, end - start)) >>> 0;
  let crc = ~0;
  let i = start;
  for (; i + 8 <= end; i += 8) {
    const low = crc ^ (buf[i]! | (buf[i + 1]! << 8) | (buf[i + 2]! << 16) | (buf[i + 3]! << 24));
    crc =
      T[7 * 256 + (low & 0xff)]! ^
      T[6 * 256 + ((low >>> 8) & 0xff)]! ^
      T[5 * 256 + ((low >>> 16) & 0xff)]! ^
      T[4 * 256 + (low >>> 24)]! ^
      T[3 * 256 + buf[i + 4]!]! ^
      T[2 * 256 + buf[i + 5]!]! ^
      T[256 + buf[i + 6]!]! ^
      T[buf[i + 7]!]!;
  }
  for (; i < end; i++) crc = T[(crc ^ buf[i]!) & 0xff]! ^ (crc >>> 8);
  return ~crc >>> 0;
}

/** Above this many bytes the native call is the cheaper one. */
const JS_SPAN_BYTES_MAX = 160;

/** T[k * 256 + b]: the CRC of byte b followed by k zero bytes (reflected polynomial 0x82f63b78). */
const T = new Int32Array(8 * 256);
for (let b = 0; b < 256; b++) {
  let crc = b;
  for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  T[b] = crc;
}
for (let k = 1; k < 8; k++) for (let b = 0; b < 256; b++) T[k * 256 + b] = (T[(k - 1) * 256 + b]! >>> 8) ^ T[T[(k - 1) * 256 + b]! & 0xff]!;
