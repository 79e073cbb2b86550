/**
 * The bytes of svcdb's order-preserving key encoding that its writer (key-encoding.ts) and its
 * reader (key-decoding.ts) share: component markers and the text and array terminators.
 */

/** A component holding a value (then its payload). */
export const MARK_VALUE = 0x01;
/** A NULL component (after any value: NULLS LAST; complemented for DESC). */
export const MARK_NULL = 0x02;
/** Text: 0x00 inside the string is written 0x00 0xFF; the string ends with 0x00 0x01. */
export const TEXT_ESCAPE = 0xff;
export const TEXT_END = 0x01;
/** Ends an array body; below both markers, so a proper prefix sorts first. */
export const ARRAY_END = 0x00;
/** Marks an element that is itself an array (the next dimension). */
export const MARK_SUBARRAY = 0x03;

export const TWO_POW_32 = 4294967296;
