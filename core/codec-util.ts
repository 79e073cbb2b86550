/**
 * Byte-level helpers shared by the key encoding and the row codec: UTF-8 without per-call
 * allocations for short strings, UUID text <-> 16 bytes, unsigned varints, and the wording of a
 * value's JS kind in TYPE_MISMATCH messages. Pure functions over caller-owned buffers.
 */

const encoder = new TextEncoder();
// ignoreBOM: a leading U+FEFF is data, not a byte-order mark, or text would not round-trip.
const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

/** Below this many UTF-16 units a JS loop beats the native call (and its subarray). */
const SHORT_STRING_UNITS_MAX = 48;

/** True on little-endian hosts (every platform Node ships for but s390x). */
export const HOST_IS_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Writes `s` as UTF-8 at `pos` and returns the position after it. The caller guarantees
 * `s.length * 3` bytes of room. Lone surrogates become U+FFFD, exactly as TextEncoder does.
 */
export function writeUtf8(buf: Uint8Array, pos: number, s: string): number {
  const n = s.length;
  if (n > SHORT_STRING_UNITS_MAX) return pos + encoder.encodeInto(s, buf.subarray(pos)).written;
  for (let i = 0; i < n; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      buf[pos++] = c;
    } else if (c < 0x800) {
      buf[pos++] = 0xc0 | (c >> 6);
      buf[pos++] = 0x80 | (c & 0x3f);
    } else {
      if (c >= 0xd800 && c < 0xe000) {
        const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
        if (c < 0xdc00 && d >= 0xdc00 && d < 0xe000) {
          const cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          i++;
          buf[pos++] = 0xf0 | (cp >> 18);
          buf[pos++] = 0x80 | ((cp >> 12) & 0x3f);
          buf[pos++] = 0x80 | ((cp >> 6) & 0x3f);
          buf[pos++] = 0x80 | (cp & 0x3f);
          continue;
        }
        c = 0xfffd;
      }
      buf[pos++] = 0xe0 | (c >> 12);
      buf[pos++] = 0x80 | ((c >> 6) & 0x3f);
      buf[pos++] = 0x80 | (c & 0x3f);
    }
  }
  return pos;
}

/** Bytes writeUtf8 (and TextEncoder) writes for `s`: a lone surrogate is U+FFFD, 3 bytes. */
export function utf8Length(s: string): number {
  const n = s.length;
  let bytes = n;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < n && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) < 0xe000) {
      bytes += 2; // a pair: 4 bytes for its 2 units
      i++;
    } else bytes += 2;
  }
  return bytes;
}

/** Decodes UTF-8 bytes `buf[start, end)`; short ASCII runs skip the native decoder. */
export function readUtf8(buf: Uint8Array, start: number, end: number): string {
  if (end - start > SHORT_STRING_UNITS_MAX) return decoder.decode(buf.subarray(start, end));
  let s = '';
  for (let i = start; i < end; i++) {
    const b = buf[i]!;
    if (b >= 0x80) return decoder.decode(buf.subarray(start, end));
    s += String.fromCharCode(b);
  }
  return s;
}

/** Decodes bytes known to be ASCII (numeric text). */
export function readAscii(buf: Uint8Array, start: number, end: number): string {
  if (end - start > SHORT_STRING_UNITS_MAX) return decoder.decode(buf.subarray(start, end));
  let s = '';
  for (let i = start; i < end; i++) s += String.fromCharCode(buf[i]!);
  return s;
}

/** Bytes an unsigned varint (7 bits a byte, little-endian groups) of `v` takes. */
export function varUintSize(v: number): number {
  let size = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 0x80);
    size++;
  }
  return size;
}

/** Writes an unsigned varint of a non-negative safe integer; returns the new position. */
export function writeVarUint(buf: Uint8Array, pos: number, v: number): number {
  while (v >= 0x80) {
    buf[pos++] = (v & 0x7f) | 0x80;
    v = Math.floor(v / 0x80);
  }
  buf[pos++] = v;
  return pos;
}

/** Zigzag of a signed safe integer (0, -1, 1, -2 … -> 0, 1, 2, 3 …), as Avro and the row codec write longs. */
export const zigzag = (n: number): number => (n >= 0 ? n * 2 : -n * 2 - 1);

/** Zigzag of a signed 64-bit bigint (the caller checks the range). */
const zigzagBig = (v: bigint): bigint => (v < 0n ? (-v << 1n) - 1n : v << 1n);

/**
 * Below this magnitude a bigint's zigzag is a safe integer: it is written by the number path, the
 * same bytes without a bigint allocated per step (a timestamp in microseconds is ~2^51).
 */
const SAFE_ZIGZAG_MAX = 2n ** 52n - 1n;
const fitsSafeZigzag = (v: bigint): boolean => v <= SAFE_ZIGZAG_MAX && v >= -SAFE_ZIGZAG_MAX;

/** Bytes the zigzag varint of a 64-bit bigint takes. */
export function zigzagBigSize(v: bigint): number {
  if (fitsSafeZigzag(v)) return varUintSize(zigzag(Number(v)));
  let z = zigzagBig(v);
  let size = 1;
  while (z >= 0x80n) {
    z >>= 7n;
    size += 1;
  }
  return size;
}

/** Writes the zigzag varint of a signed 64-bit bigint; returns the new position. */
export function writeZigZagBig(buf: Uint8Array, pos: number, v: bigint): number {
  if (fitsSafeZigzag(v)) return writeVarUint(buf, pos, zigzag(Number(v)));
  let z = zigzagBig(v);
  while (z >= 0x80n) {
    buf[pos++] = Number(z & 0x7fn) | 0x80;
    z >>= 7n;
  }
  buf[pos++] = Number(z);
  return pos;
}

const HEX_OF_BYTE: readonly string[] = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));
const NIBBLE_OF_CHAR = new Int8Array(128).fill(-1);
for (let d = 0; d < 10; d++) NIBBLE_OF_CHAR[48 + d] = d;
for (let d = 0; d < 6; d++) {
  NIBBLE_OF_CHAR[97 + d] = 10 + d;
  NIBBLE_OF_CHAR[65 + d] = 10 + d;
}

/**
 * Writes the 16 bytes of a UUID in its canonical 8-4-4-4-12 text form (either hex case) at
 * `pos`. Returns false, having written garbage, when `s` is not such a text.
 */
export function writeUuid(buf: Uint8Array, pos: number, s: string): boolean {
  if (s.length !== 36) return false;
  let i = 0;
  for (let b = 0; b < 16; b++) {
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (s.charCodeAt(i) !== 45) return false;
      i++;
    }
    const hi = s.charCodeAt(i);
    const lo = s.charCodeAt(i + 1);
    const h = hi < 128 ? NIBBLE_OF_CHAR[hi]! : -1;
    const l = lo < 128 ? NIBBLE_OF_CHAR[lo]! : -1;
    if (h < 0 || l < 0) return false;
    buf[pos + b] = (h << 4) | l;
    i += 2;
  }
  return true;
}

/** The canonical lower-case text of the UUID in `buf[pos, pos + 16)`, each byte XOR `mask`. */
export function readUuid(buf: Uint8Array, pos: number, mask = 0): string {
  let s = '';
  for (let b = 0; b < 16; b++) {
    if (b === 4 || b === 6 || b === 8 || b === 10) s += '-';
    s += HEX_OF_BYTE[buf[pos + b]! ^ mask]!;
  }
  return s;
}

/** A short description of a value's JS kind for TYPE_MISMATCH messages (never the value itself). */
export function describeJsValue(value: unknown): string {
  if (value === null) return 'null';
  if (value instanceof Float32Array) return 'Float32Array';
  if (ArrayBuffer.isView(value)) return value.constructor.name;
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return 'number NaN';
    if (!Number.isFinite(value)) return 'number Infinity';
    return Number.isInteger(value) ? 'number (integer)' : 'number (fractional)';
  }
  return typeof value;
}
