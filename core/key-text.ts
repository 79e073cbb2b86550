/**
 * A key's bytes as a string of the same length, one char per byte (U+0000..U+00FF, as latin1
 * decodes them: every byte round-trips), used as a Map key that compares as the bytes do: the
 * point-read cache's and the pending overlay's name of a row key (projections/cached-row.ts), a
 * DML statement's maps of the keys it changed or read ahead (query/dml). keyBytes turns it back.
 */

/**
 * Keys up to this many bytes become text in one String.fromCharCode call; longer ones through a
 * latin1 decode of a Buffer view. fromCharCode costs ~60 ns at 9 bytes and ~4 ns more per byte;
 * the Buffer view costs ~140 ns whatever the length up to 1 KiB (it makes a Buffer object): they
 * meet at 32 bytes (s11-tidy, Node 20, views into a slab and standalone arrays alike; 1 KiB by
 * fromCharCode was 3.2 µs against 0.19). Either way the string is built flat in one call (a loop
 * of += builds a rope that a Map lookup flattens again: ~2x slower).
 */
const SHORT_KEY_BYTES_MAX = 32;

export function keyText(key: Uint8Array): string {
  if (key.length <= SHORT_KEY_BYTES_MAX) return String.fromCharCode.apply(null, key as unknown as number[]);
  return Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('latin1');
}

/** The bytes of a keyText string. */
export const keyBytes = (text: string): Buffer => Buffer.from(text, 'latin1');
