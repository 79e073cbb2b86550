/**
 * Row images: a compact binary image of a row keyed by column id (ids survive renames; a row
 * written before ADD COLUMN simply lacks the new id). Every value carries a one-byte tag, so an
 * image decodes without the schema (CDC, inspection); encoding takes the column types because a
 * JS string may be TEXT or NUMERIC and a JSON document may look like anything.
 *
 *   image := 0x02 (format version), varuint columnCount, { varuint columnId, tag, payload } * columnCount
 *   (version 0x01, still read: no column count, columns up to the end of the image)
 *   value := tag, payload                      (encodeValue: ColumnDef.missingValue)
 *
 * docs/encodings.md lists the tags and payloads.
 */
import type { ColumnId } from './catalog.js';
import { HOST_IS_LITTLE_ENDIAN, describeJsValue, varUintSize, writeUtf8, writeUuid, writeVarUint, writeZigZagBig, zigzag } from './codec-util.js';
import { SvcError, assert, fail } from './errors.js';
import { isNumericText } from './numeric-text.js';
import { ROW_IMAGE_VERSION, ROW_TAG } from './row-format.js';
import { JSON_NULL, JsonNumber, stringifyJson } from './json-exact.js';
import { sqlTypeText, type JsonValue, type SqlType, type SqlValue } from './values.js';

/** Nesting deeper than this in a JSONB value is refused (also stops a cyclic object). */
export const JSON_DEPTH_MAX = 1000;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const TWO_POW_52 = 4503599627370496;

// ---------------------------------------------------------------------------------------------
// Encoding: one module-level growable buffer, copied out once per image.

const BUFFER_BYTES_INITIAL = 1024;
/** A buffer grown past this by a huge row is dropped after use instead of being kept. */
const BUFFER_BYTES_RETAINED_MAX = 1024 * 1024;
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

function finish(): Uint8Array {
  const out = buf.slice(0, pos);
  releaseLargeBuffer();
  return out;
}

function releaseLargeBuffer(): void {
  if (buf.length > BUFFER_BYTES_RETAINED_MAX) {
    buf = new Uint8Array(BUFFER_BYTES_INITIAL);
    view = new DataView(buf.buffer);
  }
}

/**
 * Encodes a row image; `values[i]` belongs to `columns[i]`. Throws TYPE_MISMATCH (naming the
 * column id) when a value's JS type does not match its column's SQL type.
 */
export function encodeRow(columns: readonly { readonly id: ColumnId; readonly type: SqlType }[], values: readonly SqlValue[]): Uint8Array {
  try {
    writeRow(columns, values);
    return finish();
  } catch (err) {
    releaseLargeBuffer();
    throw err;
  }
}

/**
 * encodeRow, handing the image to `take` as the first `length` bytes of a scratch buffer that is
 * valid only during the call: a caller that copies the image somewhere (a bulk insert's shared
 * chunks) skips the array of its own that encodeRow would allocate per row.
 */
export function encodeRowWith<T>(
  columns: readonly { readonly id: ColumnId; readonly type: SqlType }[],
  values: readonly SqlValue[],
  take: (scratch: Uint8Array, length: number) => T,
): T {
  try {
    writeRow(columns, values);
    return take(buf, pos);
  } finally {
    releaseLargeBuffer();
  }
}

function writeRow(columns: readonly { readonly id: ColumnId; readonly type: SqlType }[], values: readonly SqlValue[]): void {
  // Each message is built only when its check fails: a template literal passed to assert() is
  // a new string per call (four per row here, 40,000 per 10,000-row bulk insert).
  if (columns.length !== values.length) fail(`encodeRow: ${values.length} values for ${columns.length} columns`);
  pos = 0;
  ensure(11);
  buf[pos++] = ROW_IMAGE_VERSION;
  pos = writeVarUint(buf, pos, columns.length);
  for (let i = 0; i < columns.length; i++) {
    const column = columns[i]!;
    if (!(Number.isSafeInteger(column.id) && column.id >= 0)) fail(`encodeRow: bad column id ${column.id}`);
    ensure(32);
    pos = writeVarUint(buf, pos, column.id);
    writeValue(column.type, values[i]!, column.id);
  }
}

/** Encodes one tagged value (ColumnDef.missingValue in the catalog). */
export function encodeValue(type: SqlType, value: SqlValue): Uint8Array {
  pos = 0;
  try {
    ensure(32);
    writeValue(type, value, null);
    return finish();
  } catch (err) {
    releaseLargeBuffer();
    throw err;
  }
}

function mismatch(type: SqlType, value: unknown, columnId: ColumnId | null, why?: string): SvcError {
  const expected = sqlTypeText(type);
  const where = columnId === null ? 'value' : `column id ${columnId}`;
  const message = `${where}: ${why ?? `expected ${expected}, got ${describeJsValue(value)}`}`;
  return new SvcError('TYPE_MISMATCH', message, columnId === null ? { type: expected } : { columnId, type: expected });
}

function writeValue(type: SqlType, value: SqlValue, columnId: ColumnId | null): void {
  if (value === null) {
    buf[pos++] = ROW_TAG.null;
    return;
  }
  switch (type.name) {
    case 'bool':
      if (typeof value !== 'boolean') throw mismatch(type, value, columnId);
      buf[pos++] = value ? ROW_TAG.true : ROW_TAG.false;
      return;
    case 'int2':
    case 'int4':
    case 'date': {
      const min = type.name === 'int2' ? -32768 : -2147483648;
      const max = type.name === 'int2' ? 32767 : 2147483647;
      if (typeof value !== 'number' || !Number.isInteger(value)) throw mismatch(type, value, columnId);
      if (value < min || value > max) throw mismatch(type, value, columnId, `${value} is out of range for ${sqlTypeText(type)}`);
      buf[pos++] = ROW_TAG[type.name];
      pos = writeVarUint(buf, pos, ((value << 1) ^ (value >> 31)) >>> 0);
      return;
    }
    case 'int8':
    case 'timestamp':
    case 'timestamptz':
      if (typeof value !== 'bigint') throw mismatch(type, value, columnId);
      buf[pos++] = ROW_TAG[type.name];
      if (!writeInt64(value)) throw mismatch(type, value, columnId, `value is out of range for ${sqlTypeText(type)}`);
      return;
    case 'float4':
    case 'float8':
      if (typeof value !== 'number') throw mismatch(type, value, columnId);
      buf[pos++] = ROW_TAG[type.name];
      if (type.name === 'float4') view.setFloat32(pos, value, true);
      else view.setFloat64(pos, value, true);
      pos += type.name === 'float4' ? 4 : 8;
      return;
    case 'numeric':
      if (typeof value !== 'string' || !isNumericText(value)) throw mismatch(type, value, columnId, `expected NUMERIC text, got ${describeJsValue(value)}`);
      buf[pos++] = ROW_TAG.numeric;
      ensure(10 + value.length);
      pos = writeVarUint(buf, pos, value.length);
      for (let j = 0; j < value.length; j++) buf[pos++] = value.charCodeAt(j); // ASCII: checked above
      return;
    case 'text':
    case 'varchar':
    case 'char':
      if (typeof value !== 'string') throw mismatch(type, value, columnId);
      buf[pos++] = ROW_TAG[type.name];
      writeString(value);
      return;
    case 'uuid':
      if (typeof value !== 'string' || !writeUuid(buf, pos + 1, value)) {
        throw mismatch(type, value, columnId, `expected UUID text, got ${describeJsValue(value)}`);
      }
      buf[pos] = ROW_TAG.uuid;
      pos += 17;
      return;
    case 'jsonb':
      if (!isJsonValue(value, 0)) throw mismatch(type, value, columnId, 'expected a JSON value (finite numbers, plain objects and arrays)');
      buf[pos++] = ROW_TAG.jsonb;
      writeString(stringifyJson(value));
      return;
    case 'vector':
      writeVector(type, value, columnId);
      return;
    case 'array':
      writeArray(type, value, columnId, 0);
      return;
  }
}

// ---------------------------------------------------------------------------------------------
// Arrays (kept apart from the scalar hot paths above).

/** PostgreSQL's MAXDIM: an array nested deeper is refused. */
export const ARRAY_DIMENSIONS_MAX = 6;

/**
 * tag 18, varuint count, then each element as a tagged value of the element type (NULL tag for a
 * NULL element, a nested array for the next dimension). jsonb elements that are JSON arrays are
 * jsonb values, not dimensions.
 */
function writeArray(type: SqlType, value: SqlValue, columnId: ColumnId | null, depth: number): void {
  if (!Array.isArray(value)) throw mismatch(type, value, columnId);
  if (depth >= ARRAY_DIMENSIONS_MAX) throw mismatch(type, value, columnId, `number of array dimensions exceeds the maximum allowed (${ARRAY_DIMENSIONS_MAX})`);
  const element = type.element;
  assert(element !== undefined && element.name !== 'array', 'writeArray: an array type needs a scalar element type');
  const items = value as readonly SqlValue[];
  ensure(11);
  buf[pos++] = ROW_TAG.array;
  pos = writeVarUint(buf, pos, items.length);
  const nested = element.name !== 'jsonb';
  for (let j = 0; j < items.length; j++) {
    const item = items[j]!;
    ensure(32);
    if (nested && Array.isArray(item)) writeArray(type, item, columnId, depth + 1);
    else writeValue(element, item, columnId);
  }
}

/**
 * Zigzag varint of a signed 64-bit integer; false (nothing written) when out of 64-bit range.
 * Values within 2^52 (ids, timestamps) use number arithmetic and skip BigInt range checks.
 */
function writeInt64(value: bigint): boolean {
  const n = Number(value);
  if (n >= -TWO_POW_52 && n < TWO_POW_52) {
    pos = writeVarUint(buf, pos, zigzag(n));
    return true;
  }
  if (value < INT64_MIN || value > INT64_MAX) return false;
  pos = writeZigZagBig(buf, pos, value);
  return true;
}

/** varuint byte length, then UTF-8. The length is reserved for the worst case, then shifted. */
function writeString(s: string): void {
  const bytesMax = s.length * 3;
  const reserved = varUintSize(bytesMax);
  ensure(reserved + bytesMax);
  const start = pos + reserved;
  const end = writeUtf8(buf, start, s);
  const length = end - start;
  const needed = varUintSize(length);
  if (needed !== reserved) buf.copyWithin(pos + needed, start, end);
  pos = writeVarUint(buf, pos, length) + length;
}

function writeVector(type: SqlType, value: SqlValue, columnId: ColumnId | null): void {
  if (!(value instanceof Float32Array)) throw mismatch(type, value, columnId);
  if (type.dimension !== undefined && value.length !== type.dimension) {
    throw mismatch(type, value, columnId, `expected ${type.dimension} dimensions, got ${value.length}`);
  }
  ensure(11 + value.length * 4);
  buf[pos++] = ROW_TAG.vector;
  pos = writeVarUint(buf, pos, value.length);
  if (HOST_IS_LITTLE_ENDIAN) {
    buf.set(new Uint8Array(value.buffer, value.byteOffset, value.byteLength), pos);
  } else {
    for (let j = 0; j < value.length; j++) view.setFloat32(pos + j * 4, value[j]!, true);
  }
  pos += value.length * 4;
}

function isJsonValue(value: unknown, depth: number): value is JsonValue {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (value === null || value === JSON_NULL || value instanceof JsonNumber) return true;
      if (depth >= JSON_DEPTH_MAX) return false;
      if (Array.isArray(value)) {
        for (let j = 0; j < value.length; j++) if (!isJsonValue(value[j], depth + 1)) return false;
        return true;
      }
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return false;
      for (const key in value) if (!isJsonValue((value as Record<string, unknown>)[key], depth + 1)) return false;
      return true;
    }
    default:
      return false;
  }
}

export { decodeRow, decodeRowInto, decodeValue, inspectRow, type InspectedColumn } from './row-decode.js';
export { ROW_IMAGE_VERSION, ROW_TAG } from './row-format.js';
