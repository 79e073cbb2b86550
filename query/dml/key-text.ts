/**
 * A key as a map key: one latin1 char per byte of a view on the bytes (no copy, half the length of
 * hex; latin1 round-trips every byte). keyBytes turns it back.
 */
export const keyText = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');

/** The bytes of a keyText string. */
export const keyBytes = (text: string): Buffer => Buffer.from(text, 'latin1');
