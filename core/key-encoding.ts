/**
 * Order-preserving, self-delimiting key encoding: LevelDB's bytewise order of encoded keys equals
 * SQL order of the values (PostgreSQL semantics, C collation for text). docs/encodings.md has the
 * per-type table. Each component is a marker byte (0x01 value, 0x02 NULL: NULLS LAST) and, for a
 * value, a payload whose encoding is prefix-free, so a composite key is the concatenation of its
 * components and a prefix of the components is a byte prefix of the key. A DESC component is the
 * bitwise complement of its ASC bytes (NULLS FIRST falls out).
 */
import { describeJsValue, readUtf8, readUuid, writeUtf8, writeUuid } from './codec-util.js';
import { SvcError, assert, isSvcError } from './errors.js';
import { numericKeyEnd, numericKeySizeMax, readNumericKey, writeNumericKey } from './numeric-text.js';
import { sqlTypeText, type SqlType, type SqlValue } from './values.js';

const MARK_VALUE = 0x01;
const MARK_NULL = 0x02;
/** Text: 0x00 inside the string is written 0x00 0xFF; the string ends with 0x00 0x01. */
const TEXT_ESCAPE = 0xff;
const TEXT_END = 0x01;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const TWO_POW_32 = 4294967296;
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
  assert(values.length <= types.length, `encodeKey: ${values.length} values for ${types.length} types`);
  pos = 0;
  try {
    for (let i = 0; i < values.length; i++) {
      const start = pos;
      encodeComponent(types[i]!, values[i]!, i);
      if (descending !== undefined && descending[i] === true) {
        for (let j = start; j < pos; j++) buf[j] = ~buf[j]! & 0xff;
      }
    }
    return buf.slice(0, pos);
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

/** Ends an array body; below both markers, so a proper prefix sorts first. */
const ARRAY_END = 0x00;
/** Marks an element that is itself an array (the next dimension). */
const MARK_SUBARRAY = 0x03;

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

function decodeArrayBody(type: SqlType, bytes: Uint8Array, p: number, mask: number, out: SqlValue[], i: number): number {
  const element = type.element ?? { name: 'text' };
  const items: SqlValue[] = [];
  for (;;) {
    if (p >= bytes.length) throw corrupt('unterminated array', p);
    const marker = bytes[p]! ^ mask;
    if (marker === ARRAY_END) {
      out[i] = items;
      return p + 1;
    }
    if (marker === MARK_NULL) {
      items.push(null);
      p++;
    } else if (marker === MARK_SUBARRAY) {
      p = decodeArrayBody(type, bytes, p + 1, mask, items, items.length);
    } else if (marker === MARK_VALUE) {
      p = decodeComponent(element, bytes, p + 1, mask, items, items.length);
    } else {
      throw corrupt(`bad array marker ${marker}`, p);
    }
  }
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

// Decoding: a fixed-size payload is copied (XOR the DESC mask) into this scratch and read there.
const scratch = new Uint8Array(8);
const scratchView = new DataView(scratch.buffer);

function corrupt(why: string, at: number): SvcError {
  return new SvcError('INTERNAL_ERROR', `corrupt key: ${why} at byte ${at}`, { offset: at });
}

/**
 * Decodes a key encoded with the same `types` and `descending` flags. Integers of int8 and the
 * timestamps come back as bigint, int2/int4/date as number; NUMERIC as canonical text (with the
 * type's scale when it has one: the key cannot keep "1.50" apart from "1.5"); CHAR(n) padded to n.
 */
export function decodeKey(types: readonly SqlType[], bytes: Uint8Array, descending?: readonly boolean[]): SqlValue[] {
  const out: SqlValue[] = new Array<SqlValue>(types.length);
  let p = 0;
  for (let i = 0; i < types.length; i++) {
    const mask = descending !== undefined && descending[i] === true ? 0xff : 0;
    if (p >= bytes.length) throw corrupt(`missing component ${i}`, p);
    const marker = bytes[p]! ^ mask;
    if (marker === MARK_NULL) {
      out[i] = null;
      p++;
      continue;
    }
    if (marker !== MARK_VALUE) throw corrupt(`bad marker ${marker}`, p);
    p = decodeComponent(types[i]!, bytes, p + 1, mask, out, i);
  }
  if (p !== bytes.length) throw corrupt('trailing bytes', p);
  return out;
}

function copyFixed(bytes: Uint8Array, p: number, size: number, mask: number): void {
  if (p + size > bytes.length) throw corrupt('truncated value', p);
  for (let j = 0; j < size; j++) scratch[j] = bytes[p + j]! ^ mask;
}

function decodeComponent(type: SqlType, bytes: Uint8Array, p: number, mask: number, out: SqlValue[], i: number): number {
  switch (type.name) {
    case 'bool':
      if (p >= bytes.length) throw corrupt('truncated value', p);
      out[i] = (bytes[p]! ^ mask) === 1;
      return p + 1;
    case 'int2':
    case 'int4':
    case 'int8':
    case 'date':
    case 'timestamp':
    case 'timestamptz':
      copyFixed(bytes, p, 8, mask);
      scratch[0] = scratch[0]! ^ 0x80;
      out[i] =
        type.name === 'int2' || type.name === 'int4' || type.name === 'date'
          ? scratchView.getInt32(0) * TWO_POW_32 + scratchView.getUint32(4)
          : scratchView.getBigInt64(0);
      return p + 8;
    case 'float4':
    case 'float8': {
      const size = type.name === 'float4' ? 4 : 8;
      copyFixed(bytes, p, size, mask);
      if ((scratch[0]! & 0x80) !== 0) scratch[0] = scratch[0]! & 0x7f;
      else for (let j = 0; j < size; j++) scratch[j] = ~scratch[j]! & 0xff;
      out[i] = size === 4 ? scratchView.getFloat32(0) : scratchView.getFloat64(0);
      return p + size;
    }
    case 'numeric': {
      const scale = type.scale ?? (type.precision !== undefined ? 0 : undefined);
      const text = readNumericKey(bytes, p, mask, scale);
      if (text === null) throw corrupt('bad NUMERIC', p);
      out[i] = text;
      return numericKeyEnd;
    }
    case 'text':
    case 'varchar':
    case 'char':
      return decodeText(type, bytes, p, mask, out, i);
    case 'uuid':
      if (p + 16 > bytes.length) throw corrupt('truncated value', p);
      out[i] = readUuid(bytes, p, mask);
      return p + 16;
    case 'jsonb':
    case 'vector':
      throw new SvcError('TYPE_MISMATCH', `${sqlTypeText(type)} values cannot be part of a key`, { type: sqlTypeText(type) });
    case 'array':
      return decodeArrayBody(type, bytes, p, mask, out, i);
  }
}

function decodeText(type: SqlType, bytes: Uint8Array, p: number, mask: number, out: SqlValue[], i: number): number {
  const zero = mask; // an encoded 0x00 byte as stored
  let end = bytes.indexOf(zero, p);
  if (end < 0 || end + 1 >= bytes.length) throw corrupt('unterminated text', p);
  let text: string;
  let next: number;
  if ((bytes[end + 1]! ^ mask) === TEXT_END && mask === 0) {
    text = readUtf8(bytes, p, end);
    next = end + 2;
  } else {
    // Escaped zeros or DESC: unescape (and un-complement) into a copy.
    const plain = new Uint8Array(bytes.length - p);
    let n = 0;
    for (end = p; ; end++) {
      if (end >= bytes.length) throw corrupt('unterminated text', p);
      const b = bytes[end]! ^ mask;
      if (b !== 0) {
        plain[n++] = b;
        continue;
      }
      const after = end + 1 < bytes.length ? bytes[end + 1]! ^ mask : -1;
      if (after === TEXT_END) break;
      if (after !== TEXT_ESCAPE) throw corrupt('bad text escape', end);
      plain[n++] = 0;
      end++;
    }
    text = readUtf8(plain, 0, n);
    next = end + 2;
  }
  out[i] = type.name === 'char' ? padChar(text, type.length ?? 1) : text;
  return next;
}

/** CHAR(n) values are blank-padded to n characters (code points), as PostgreSQL shows them. */
function padChar(s: string, length: number): string {
  let codePoints = 0;
  for (let j = 0; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c < 0xdc00 || c > 0xdfff) codePoints++;
  }
  return codePoints >= length ? s : s + ' '.repeat(length - codePoints);
}
