/**
 * Order-preserving, self-delimiting key encoding: LevelDB's bytewise order of encoded keys equals
 * SQL order of the values (PostgreSQL semantics, C collation for text). docs/encodings.md has the
 * per-type table. Each component is a marker byte (0x01 value, 0x02 NULL: NULLS LAST) and, for a
 * value, a payload whose encoding is prefix-free, so a composite key is the concatenation of its
 * components and a prefix of the components is a byte prefix of the key. A DESC component is the
 * bitwise complement of its ASC bytes (NULLS FIRST falls out).
 */
import { describeJsValue, writeUtf8, writeUuid } from './codec-util.js';
import { SvcError, assert, fail, isSvcError } from './errors.js';
import { ARRAY_END, MARK_NULL, MARK_SUBARRAY, MARK_VALUE, TEXT_END, TEXT_ESCAPE, TWO_POW_32 } from './key-format.js';
import { numericKeySizeMax, writeNumericKey } from './numeric-text.js';
import { sqlTypeText, type SqlType, type SqlValue } from './values.js';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const TWO_POW_63 = 9223372036854775808;
const CANONICAL_NAN_HI = 0x7ff80000;

// One growable output buffer for the module: encodeKey copies the bytes out at the end.
const BUFFER_BYTES_INITIAL = 256;
/** A buffer grown past this by a huge key is dropped after use instead of being kept. */
const BUFFER_BYTES_RETAINED_MAX = 64 * 1024;
let buf = new Uint8Array(BUFFER_BYTES_INITIAL);
let view = new DataView(buf.buffer);
let pos = 0;

function ensure(extra: number): void {
  if (pos + extra <= buf.length) return;
  const next = new Uint8Array(Math.max(buf.length * 2, pos + extra));
  next.set(buf.subarray(0, pos));
  buf = next;
  view = new DataView(buf.buffer);
}

/**
 * Encodes the first `values.length` components of a key of `types` (pass fewer values than types
 * for a prefix to range-scan). `descending[i]` complements component i. Throws TYPE_MISMATCH for a
 * value of the wrong JS type and for types that are not orderable keys (jsonb, vector).
 */
export function encodeKey(types: readonly SqlType[], values: readonly SqlValue[], descending?: readonly boolean[]): Uint8Array {
  return encodeKeyWith(types, values, copyOut, descending);
}

const copyOut = (scratch: Uint8Array, length: number): Uint8Array => scratch.slice(0, length);

/**
 * encodeKey, handing the key to `take` as the first `length` bytes of a scratch buffer that is
 * valid only during the call (a bulk insert copies its keys into shared chunks: no array per key).
 */
export function encodeKeyWith<T>(
  types: readonly SqlType[],
  values: readonly SqlValue[],
  take: (scratch: Uint8Array, length: number) => T,
  descending?: readonly boolean[],
): T {
  // The message built only on failure (a template per key is a string per row of a bulk insert).
  if (values.length > types.length) fail(`encodeKey: ${values.length} values for ${types.length} types`);
  pos = 0;
  try {
    for (let i = 0; i < values.length; i++) {
      const start = pos;
      encodeComponent(types[i]!, values[i]!, i);
      if (descending !== undefined && descending[i] === true) {
        for (let j = start; j < pos; j++) buf[j] = ~buf[j]! & 0xff;
      }
    }
    return take(buf, pos);
  } finally {
    if (buf.length > BUFFER_BYTES_RETAINED_MAX) {
      buf = new Uint8Array(BUFFER_BYTES_INITIAL);
      view = new DataView(buf.buffer);
    }
  }
}

function mismatch(type: SqlType, value: unknown, index: number, why?: string): SvcError {
  const expected = sqlTypeText(type);
  const message = why ?? `expected ${expected}, got ${describeJsValue(value)}`;
  return new SvcError('TYPE_MISMATCH', `key component ${index}: ${message}`, { component: index, type: expected });
}

function encodeComponent(type: SqlType, value: SqlValue, index: number): void {
  if (value === null) {
    ensure(1);
    buf[pos++] = MARK_NULL;
    return;
  }
  switch (type.name) {
    case 'bool':
      if (typeof value !== 'boolean') throw mismatch(type, value, index);
      ensure(2);
      buf[pos++] = MARK_VALUE;
      buf[pos++] = value ? 1 : 0;
      return;
    case 'int2':
    case 'int4':
    case 'int8':
    case 'date':
    case 'timestamp':
    case 'timestamptz':
      ensure(9);
      buf[pos++] = MARK_VALUE;
      writeInt64(type, value, index);
      return;
    case 'float4':
    case 'float8':
      if (typeof value !== 'number') throw mismatch(type, value, index);
      ensure(9);
      buf[pos++] = MARK_VALUE;
      writeFloat(value, type.name === 'float4');
      return;
    case 'numeric':
      writeNumeric(type, value, index);
      return;
    case 'text':
    case 'varchar':
    case 'char':
      if (typeof value !== 'string') throw mismatch(type, value, index);
      writeText(type.name === 'char' ? trimTrailingSpaces(value) : value);
      return;
    case 'uuid':
      if (typeof value !== 'string') throw mismatch(type, value, index);
      ensure(17);
      buf[pos++] = MARK_VALUE;
      if (!writeUuid(buf, pos, value)) throw mismatch(type, value, index, 'expected UUID text like 0f8e6a1c-...');
      pos += 16;
      return;
    case 'jsonb':
    case 'vector':
      throw mismatch(type, value, index, `${sqlTypeText(type)} values are not orderable and cannot be part of a key`);
    case 'array':
      if (!Array.isArray(value)) throw mismatch(type, value, index);
      ensure(1);
      buf[pos++] = MARK_VALUE;
      writeArrayBody(type, value as readonly SqlValue[], index);
      return;
  }
}

// ---------------------------------------------------------------------------------------------
// Arrays: PostgreSQL's array order (query/types/compare.ts arrayComparator): element by element,
// a NULL element after any value, then the shorter array first.

/** Each element as a key component (NULL: MARK_NULL), a sub-array as MARK_SUBARRAY + its body, then ARRAY_END. */
function writeArrayBody(type: SqlType, items: readonly SqlValue[], index: number): void {
  const element = type.element;
  assert(element !== undefined && element.name !== 'array', 'encodeKey: an array type needs a scalar element type');
  for (let j = 0; j < items.length; j++) {
    const item = items[j]!;
    if (Array.isArray(item) && element.name !== 'jsonb') {
      ensure(1);
      buf[pos++] = MARK_SUBARRAY;
      writeArrayBody(type, item as readonly SqlValue[], index);
    } else {
      encodeComponent(element, item, index);
    }
  }
  ensure(1);
  buf[pos++] = ARRAY_END;
}

/** 8 bytes big-endian two's complement with the sign bit flipped (offset binary). */
function writeInt64(type: SqlType, value: SqlValue, index: number): void {
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < -TWO_POW_63 || value >= TWO_POW_63) throw mismatch(type, value, index);
    const hi = Math.floor(value / TWO_POW_32);
    view.setUint32(pos, (hi ^ 0x80000000) >>> 0);
    view.setUint32(pos + 4, value - hi * TWO_POW_32);
  } else if (typeof value === 'bigint') {
    if (value < INT64_MIN || value > INT64_MAX) throw mismatch(type, value, index, `${sqlTypeText(type)} value out of 64-bit range`);
    view.setBigInt64(pos, value);
    buf[pos] = buf[pos]! ^ 0x80;
  } else {
    throw mismatch(type, value, index);
  }
  pos += 8;
}

/**
 * IEEE 754 order transform: positive numbers get the sign bit set, negative numbers are
 * complemented. -0 is 0, and every NaN is one NaN that sorts above +Infinity (PostgreSQL).
 * REAL is rounded to float32 and written in 4 bytes, as the row codec stores it.
 */
function writeFloat(value: number, single: boolean): void {
  const rounded = single ? Math.fround(value) : value;
  const v = rounded === 0 ? 0 : rounded; // -0 (also a tiny negative REAL) is 0
  const size = single ? 4 : 8;
  if (Number.isNaN(v)) {
    view.setUint32(pos, single ? 0x7fc00000 : CANONICAL_NAN_HI);
    if (!single) view.setUint32(pos + 4, 0);
  } else if (single) {
    view.setFloat32(pos, v);
  } else {
    view.setFloat64(pos, v);
  }
  if ((buf[pos]! & 0x80) === 0) {
    buf[pos] = buf[pos]! | 0x80;
  } else {
    for (let j = pos; j < pos + size; j++) buf[j] = ~buf[j]! & 0xff;
  }
  pos += size;
}

function writeNumeric(type: SqlType, value: SqlValue, index: number): void {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'bigint') text = value.toString();
  else if (typeof value === 'number') text = Number.isNaN(value) ? 'NaN' : String(value);
  else throw mismatch(type, value, index);
  ensure(1 + numericKeySizeMax(text));
  buf[pos++] = MARK_VALUE;
  try {
    pos = writeNumericKey(buf, pos, text);
  } catch (err) {
    if (!isSvcError(err)) throw err;
    throw mismatch(type, value, index, err.message);
  }
}

function writeText(s: string): void {
  ensure(3 + s.length * 3);
  buf[pos++] = MARK_VALUE;
  const start = pos;
  pos = writeUtf8(buf, pos, s);
  // Escape 0x00 bytes. Only U+0000 encodes to one, and it is rare: look for it in the string.
  if (s.indexOf('\0') >= 0) {
    let zeros = 0;
    for (let j = start; j < pos; j++) if (buf[j] === 0) zeros++;
    // Room: a U+0000 is 1 of the 3 bytes per unit reserved, so 2 bytes fit.
    let to = pos + zeros;
    for (let from = pos - 1; from >= start; from--) {
      const b = buf[from]!;
      if (b === 0) buf[--to] = TEXT_ESCAPE;
      buf[--to] = b;
    }
    pos += zeros;
  }
  buf[pos++] = 0;
  buf[pos++] = TEXT_END;
}

/** CHAR(n) compares ignoring trailing spaces (PostgreSQL bpchar), so the key drops them. */
function trimTrailingSpaces(s: string): string {
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 32) end--;
  return end === s.length ? s : s.slice(0, end);
}

/** Bytewise comparison: negative, zero or positive like LevelDB's default comparator. */
export function compareKeys(a: Uint8Array, b: Uint8Array): number {
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    const d = a[i]! - b[i]!;
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

/**
 * The smallest byte string greater than every string starting with `prefix` (for an exclusive
 * upper bound of a prefix scan); null when there is none (empty or all 0xFF).
 */
export function prefixUpperBound(prefix: Uint8Array): Uint8Array | null {
  let end = prefix.length;
  while (end > 0 && prefix[end - 1] === 0xff) end--;
  if (end === 0) return null;
  const out = prefix.slice(0, end);
  out[end - 1] = out[end - 1]! + 1;
  return out;
}

/** Decoding lives in key-decoding.ts; re-exported here so callers keep one module for keys. */
export { decodeKey } from './key-decoding.js';
