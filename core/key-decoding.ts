/**
 * Reads keys written by key-encoding.ts (the format is described there and in docs/encodings.md):
 * each component's marker, then its payload, complemented for a DESC component.
 */
import { readUtf8, readUuid } from './codec-util.js';
import { SvcError } from './errors.js';
import { ARRAY_END, MARK_NULL, MARK_SUBARRAY, MARK_VALUE, TEXT_END, TEXT_ESCAPE, TWO_POW_32 } from './key-format.js';
import { numericKeyEnd, readNumericKey } from './numeric-text.js';
import { sqlTypeText, type SqlType, type SqlValue } from './values.js';

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
