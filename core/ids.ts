import { randomFillSync } from 'node:crypto';

/**
 * ULIDs for request and query ids (every request gets one): 48 bits of milliseconds then 80
 * random bits, as 26 characters of Crockford's base32. Written here rather than through the ulid
 * package because it runs once per request: the package validates and encodes the time digit by
 * digit and asks for one random number per character (~1.5 µs an id under load); this encodes the
 * time once per millisecond and draws the random characters from a pool of cryptographic bytes
 * refilled 4 KiB at a time (each byte's low 5 bits: 256 is a multiple of 32, so each is uniform).
 */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const CODES = Uint16Array.from(ALPHABET, (c) => c.charCodeAt(0));
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;
const POOL_BYTES = 4096;
const pool = new Uint8Array(POOL_BYTES);
let poolAt = POOL_BYTES;

/** Where `bytes` random bytes of the pool start that no id has used yet (the pool refilled when too few are left). */
function takeRandom(bytes: number): number {
  if (poolAt + bytes > POOL_BYTES) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const at = poolAt;
  poolAt += bytes;
  return at;
}

let timeMs = -1;
/** The time part's 10 character codes, for the millisecond `timeMs`. */
const timeCodes = new Uint16Array(TIME_CHARS);

function encodeTime(ms: number): void {
  let rest = ms;
  for (let i = TIME_CHARS - 1; i >= 0; i--) {
    timeCodes[i] = CODES[rest % 32]!;
    rest = Math.floor(rest / 32);
  }
}

/** A new ULID for the current time (not monotonic within a millisecond: ids are unique, not ordered there). */
export function newUlid(): string {
  const now = Date.now();
  if (now !== timeMs) {
    timeMs = now;
    encodeTime(now);
  }
  const p = pool;
  const i = takeRandom(RANDOM_CHARS);
  const t = timeCodes;
  // One call with all 26 codes: a flat string at once. (The time's text + the random part's was a
  // rope, flattened again by each reader: node's header check on the X-Request-ID value, the write;
  // ~70 ns more per request.)
  return String.fromCharCode(
    t[0]!,
    t[1]!,
    t[2]!,
    t[3]!,
    t[4]!,
    t[5]!,
    t[6]!,
    t[7]!,
    t[8]!,
    t[9]!,
    CODES[p[i]! & 31]!,
    CODES[p[i + 1]! & 31]!,
    CODES[p[i + 2]! & 31]!,
    CODES[p[i + 3]! & 31]!,
    CODES[p[i + 4]! & 31]!,
    CODES[p[i + 5]! & 31]!,
    CODES[p[i + 6]! & 31]!,
    CODES[p[i + 7]! & 31]!,
    CODES[p[i + 8]! & 31]!,
    CODES[p[i + 9]! & 31]!,
    CODES[p[i + 10]! & 31]!,
    CODES[p[i + 11]! & 31]!,
    CODES[p[i + 12]! & 31]!,
    CODES[p[i + 13]! & 31]!,
    CODES[p[i + 14]! & 31]!,
    CODES[p[i + 15]! & 31]!,
  );
}

const HEX_CODES = Uint16Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
const UUID_BYTES = 16;
/** The character codes of one UUID's text, dashes in place; the hex digits are written per id. */
const uuidCodes: number[] = Array.from('00000000-0000-4000-8000-000000000000', (c) => c.charCodeAt(0));
/** Where each of the 16 bytes' two hex digits go in that text. */
const UUID_DIGITS_AT = Uint8Array.of(0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34);

/**
 * A random (version 4) UUID, the text crypto.randomUUID gives: lowercase, with dashes. Written here
 * because every write statement's log record takes one (query/ddl/common.ts txnRecord): node's
 * randomUUID joins its 36 characters with 20 string concatenations, ~0.7 KB of short-lived strings
 * an id (a sampling heap profile of single-row inserts), where one fromCharCode call makes the flat
 * text at once. The 122 random bits come from the same cryptographic pool as newUlid's characters.
 */
export function newUuid(): string {
  const p = pool;
  const at = takeRandom(UUID_BYTES);
  const codes = uuidCodes;
  for (let i = 0; i < UUID_BYTES; i++) {
    let byte = p[at + i]!;
    // RFC 9562: the version (4) in the high nibble of byte 6, the variant (10) in the top bits of byte 8.
    if (i === 6) byte = (byte & 0x0f) | 0x40;
    else if (i === 8) byte = (byte & 0x3f) | 0x80;
    const digit = UUID_DIGITS_AT[i]!;
    codes[digit] = HEX_CODES[byte >> 4]!;
    codes[digit + 1] = HEX_CODES[byte & 15]!;
  }
  return String.fromCharCode.apply(null, codes);
}
