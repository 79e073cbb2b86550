/**
 * Decoding of row images and tagged values (the format is in core/row-codec.ts and
 * docs/encodings.md). A malformed image is storage corruption: SvcError('INTERNAL_ERROR').
 */
import type { ColumnId } from './catalog.js';
import { HOST_IS_LITTLE_ENDIAN, readAscii, readUtf8, readUuid } from './codec-util.js';
import { SvcError, fail } from './errors.js';
import { ROW_IMAGE_VERSION, ROW_IMAGE_VERSION_V1, ROW_TAG, TYPE_NAME_OF_ROW_TAG } from './row-format.js';
import { parseJsonExact } from './json-exact.js';
import type { SqlTypeName, SqlValue } from './values.js';

const UINT64_MAX = 2n ** 64n - 1n;
const VARINT_BYTES_MAX = 10;

// Reader state for the image being decoded (decoding is synchronous, so one set suffices).
const EMPTY = new Uint8Array(0);
let rb: Uint8Array = EMPTY;
let rp = 0;
const floatScratch = new Float64Array(1);
const floatScratchBytes = new Uint8Array(floatScratch.buffer);
const float32Scratch = new Float32Array(floatScratch.buffer, 0, 1);

function corrupt(why: string): SvcError {
  return new SvcError('INTERNAL_ERROR', `corrupt row image: ${why} at byte ${rp}`, { offset: rp });
}

function readVarUint(): number {
  const first = rb[rp];
  if (first !== undefined && first < 0x80) {
    rp++;
    return first;
  }
  let result = 0;
  let mul = 1;
  for (let k = 0; k < 8; k++) {
    const b = rb[rp++];
    if (b === undefined) throw corrupt('truncated varint');
    result += (b & 0x7f) * mul;
    if ((b & 0x80) === 0) {
      if (result > Number.MAX_SAFE_INTEGER) break;
      return result;
    }
    mul *= 128;
  }
  throw corrupt('varint too large');
}

function readInt64(): bigint {
  const start = rp;
  let result = 0;
  let mul = 1;
  for (let k = 0; k < 8; k++) {
    const b = rb[rp++];
    if (b === undefined) throw corrupt('truncated varint');
    result += (b & 0x7f) * mul;
    if ((b & 0x80) === 0) {
      if (result > Number.MAX_SAFE_INTEGER) break;
      return BigInt(result % 2 === 0 ? result / 2 : -(result + 1) / 2);
    }
    mul *= 128;
  }
  rp = start;
  let z = 0n;
  let shift = 0n;
  for (let k = 0; ; k++) {
    const b = rb[rp++];
    if (b === undefined || k >= VARINT_BYTES_MAX) throw corrupt('bad 64-bit varint');
    z |= BigInt(b & 0x7f) << shift;
    shift += 7n;
    if ((b & 0x80) === 0) break;
  }
  if (z > UINT64_MAX) throw corrupt('64-bit varint out of range');
  return (z & 1n) === 0n ? z >> 1n : -((z + 1n) >> 1n);
}

function need(bytes: number): void {
  if (rp + bytes > rb.length) throw corrupt('truncated value');
}

function readFloat(size: 4 | 8): number {
  need(size);
  if (HOST_IS_LITTLE_ENDIAN) for (let j = 0; j < size; j++) floatScratchBytes[j] = rb[rp + j]!;
  else for (let j = 0; j < size; j++) floatScratchBytes[size - 1 - j] = rb[rp + j]!;
  rp += size;
  return size === 4 ? float32Scratch[0]! : floatScratch[0]!;
}

function readLength(): number {
  const length = readVarUint();
  need(length);
  return length;
}

function readVector(): Float32Array {
  const n = readVarUint();
  need(n * 4);
  const out = new Float32Array(n);
  if (HOST_IS_LITTLE_ENDIAN) {
    new Uint8Array(out.buffer).set(rb.subarray(rp, rp + n * 4));
  } else {
    const v = new DataView(rb.buffer, rb.byteOffset + rp, n * 4);
    for (let j = 0; j < n; j++) out[j] = v.getFloat32(j * 4, true);
  }
  rp += n * 4;
  return out;
}

function unzigzag32(z: number): number {
  if (z > 0xffffffff) throw corrupt('32-bit varint out of range');
  return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
}

function readTagged(tag: number): SqlValue {
  switch (tag) {
    case ROW_TAG.null:
      return null;
    case ROW_TAG.false:
      return false;
    case ROW_TAG.true:
      return true;
    case ROW_TAG.int2:
    case ROW_TAG.int4:
    case ROW_TAG.date:
      return unzigzag32(readVarUint());
    case ROW_TAG.int8:
    case ROW_TAG.timestamp:
    case ROW_TAG.timestamptz:
      return readInt64();
    case ROW_TAG.float4:
      return readFloat(4);
    case ROW_TAG.float8:
      return readFloat(8);
    case ROW_TAG.numeric: {
      const length = readLength();
      rp += length;
      return readAscii(rb, rp - length, rp);
    }
    case ROW_TAG.text:
    case ROW_TAG.varchar:
    case ROW_TAG.char: {
      const length = readLength();
      rp += length;
      return readUtf8(rb, rp - length, rp);
    }
    case ROW_TAG.uuid:
      need(16);
      rp += 16;
      return readUuid(rb, rp - 16);
    case ROW_TAG.jsonb: {
      const length = readLength();
      rp += length;
      try {
        return parseJsonExact(readUtf8(rb, rp - length, rp));
      } catch (err) {
        throw new SvcError('INTERNAL_ERROR', `corrupt row image: bad JSONB at byte ${rp - length}`, { offset: rp - length }, err);
      }
    }
    case ROW_TAG.vector:
      return readVector();
    case ROW_TAG.array:
      return readArray();
    default:
      throw corrupt(`unknown tag ${tag}`);
  }
}

/** An array's elements (row-codec.ts writeArray); each element needs at least its tag byte. */
function readArray(): SqlValue[] {
  const n = readVarUint();
  need(n);
  const out = new Array<SqlValue>(n);
  for (let j = 0; j < n; j++) out[j] = readTagged(readTag());
  return out;
}

function skipArray(): void {
  const n = readVarUint();
  need(n);
  for (let j = 0; j < n; j++) skipTagged(readTag());
}

function skipTagged(tag: number): void {
  switch (tag) {
    case ROW_TAG.null:
    case ROW_TAG.false:
    case ROW_TAG.true:
      return;
    case ROW_TAG.int2:
    case ROW_TAG.int4:
    case ROW_TAG.date:
    case ROW_TAG.int8:
    case ROW_TAG.timestamp:
    case ROW_TAG.timestamptz:
      for (let k = 0; ; k++) {
        const b = rb[rp++];
        if (b === undefined || k >= VARINT_BYTES_MAX) throw corrupt('bad varint');
        if ((b & 0x80) === 0) return;
      }
    case ROW_TAG.float4:
      need(4);
      rp += 4;
      return;
    case ROW_TAG.float8:
      need(8);
      rp += 8;
      return;
    case ROW_TAG.uuid:
      need(16);
      rp += 16;
      return;
    case ROW_TAG.numeric:
    case ROW_TAG.text:
    case ROW_TAG.varchar:
    case ROW_TAG.char:
    case ROW_TAG.jsonb: {
      const length = readLength(); // not `rp += readLength()`: that adds to the stale rp
      rp += length;
      return;
    }
    case ROW_TAG.vector: {
      const n = readVarUint();
      need(n * 4);
      rp += n * 4;
      return;
    }
    case ROW_TAG.array:
      skipArray();
      return;
    default:
      throw corrupt(`unknown tag ${tag}`);
  }
}

/** Columns left to read in the image being decoded; -1 for a version 1 image (up to its end). */
let columnsLeft = -1;

function beginImage(bytes: Uint8Array): void {
  rb = bytes;
  rp = 0;
  const version = bytes[0];
  if (version !== ROW_IMAGE_VERSION && version !== ROW_IMAGE_VERSION_V1) throw corrupt(`unknown row image version ${version ?? 'none'}`);
  rp = 1;
  columnsLeft = version === ROW_IMAGE_VERSION_V1 ? -1 : readVarUint();
}

/** True while the image has another column; refuses an image shorter or longer than its count. */
function moreColumns(): boolean {
  if (columnsLeft < 0) return rp < rb.length;
  if (columnsLeft === 0) {
    if (rp !== rb.length) throw corrupt('trailing bytes after the last column');
    return false;
  }
  if (rp >= rb.length) throw corrupt(`truncated image: ${columnsLeft} more column(s) expected`);
  columnsLeft--;
  return true;
}

function readTag(): number {
  const tag = rb[rp++];
  if (tag === undefined) throw corrupt('missing tag');
  return tag;
}

/** Every column of an image, by column id. */
export function decodeRow(bytes: Uint8Array): Map<ColumnId, SqlValue> {
  const out = new Map<ColumnId, SqlValue>();
  try {
    beginImage(bytes);
    while (moreColumns()) {
      const id = readVarUint();
      out.set(id, readTagged(readTag()));
    }
    return out;
  } finally {
    rb = EMPTY; // do not pin the caller's buffer
  }
}

export interface InspectedColumn {
  readonly columnId: ColumnId;
  /** The SQL type the value was written as; null for a NULL. */
  readonly typeName: SqlTypeName | null;
  readonly value: SqlValue;
}

/** Every column of an image in stored order, with the type its tag names (CDC, debugging). */
export function inspectRow(bytes: Uint8Array): InspectedColumn[] {
  const out: InspectedColumn[] = [];
  try {
    beginImage(bytes);
    while (moreColumns()) {
      const columnId = readVarUint();
      const tag = readTag();
      out.push({ columnId, typeName: TYPE_NAME_OF_ROW_TAG[tag] ?? null, value: readTagged(tag) });
    }
    return out;
  } finally {
    rb = EMPTY;
  }
}

/** Decodes one value written by encodeValue. */
export function decodeValue(bytes: Uint8Array): SqlValue {
  rb = bytes;
  rp = 0;
  try {
    const value = readTagged(readTag());
    if (rp !== bytes.length) throw corrupt('trailing bytes after value');
    return value;
  } finally {
    rb = EMPTY;
  }
}

interface Layout {
  /** Column id -> first position in columnIds. */
  readonly positions: Map<ColumnId, number>;
  /** Per first position, the later positions asking for the same id; null when ids are distinct. */
  readonly repeats: (number[] | undefined)[] | null;
}

// Keyed by the caller's columnIds array: plans and compiled indexes pass the same array per row.
const layouts = new WeakMap<readonly ColumnId[], Layout>();

function layoutOf(columnIds: readonly ColumnId[]): Layout {
  let layout = layouts.get(columnIds);
  if (layout !== undefined) return layout;
  const positions = new Map<ColumnId, number>();
  let repeats: (number[] | undefined)[] | null = null;
  for (let i = 0; i < columnIds.length; i++) {
    const id = columnIds[i]!;
    const first = positions.get(id);
    if (first === undefined) {
      positions.set(id, i);
    } else {
      repeats ??= [];
      (repeats[first] ??= []).push(i);
    }
  }
  layout = { positions, repeats };
  layouts.set(columnIds, layout);
  return layout;
}

/**
 * The values of `columnIds` in an image, aligned with columnIds: `missing[i]` where the image has
 * no such column (added after the row was written); ids in the image not asked for are skipped.
 * Reuses `out` when given. Do not mutate a columnIds array after passing it (its layout is cached).
 */
export function decodeRowInto(bytes: Uint8Array, columnIds: readonly ColumnId[], missing: readonly SqlValue[], out?: SqlValue[]): SqlValue[] {
  const n = columnIds.length;
  // The message built only on failure: a template passed to assert() is a new string per decoded row.
  if (missing.length !== n) fail(`decodeRowInto: ${missing.length} missing values for ${n} columns`);
  const result = out ?? new Array<SqlValue>(n);
  if (result.length !== n) result.length = n;
  for (let i = 0; i < n; i++) result[i] = missing[i]!;
  const layout = layoutOf(columnIds);
  const repeats = layout.repeats;
  try {
    beginImage(bytes);
    for (let k = 0; moreColumns(); k++) {
      const id = readVarUint();
      const tag = readTag();
      const at = repeats === null && k < n && columnIds[k] === id ? k : (layout.positions.get(id) ?? -1);
      if (at < 0) {
        skipTagged(tag);
        continue;
      }
      const value = readTagged(tag);
      result[at] = value;
      const others = repeats?.[at];
      if (others !== undefined) for (const j of others) result[j] = value;
    }
  } finally {
    rb = EMPTY;
  }
  return result;
}
