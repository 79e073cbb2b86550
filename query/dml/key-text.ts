/** Keys up to this many bytes are turned into a string directly (faster than making a Buffer view for them). */
const SHORT_KEY_BYTES_MAX = 64;

/**
 * A key as a map key: one char per byte (U+0000..U+00FF, as latin1 decodes it: every byte
 * round-trips), no hex copy and half its length. keyBytes turns it back.
 */
export function keyText(bytes: Uint8Array): string {
  if (bytes.length <= SHORT_KEY_BYTES_MAX) return String.fromCharCode.apply(null, bytes as unknown as number[]);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}

/** The bytes of a keyText string. */
export const keyBytes = (text: string): Buffer => Buffer.from(text, 'latin1');
