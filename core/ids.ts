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

let timeMs = -1;
let timeText = '';

function encodeTime(ms: number): string {
  let text = '';
  let rest = ms;
  for (let i = 0; i < TIME_CHARS; i++) {
    text = ALPHABET[rest % 32]! + text;
    rest = Math.floor(rest / 32);
  }
  return text;
}

/** A new ULID for the current time (not monotonic within a millisecond: ids are unique, not ordered there). */
export function newUlid(): string {
  const now = Date.now();
  if (now !== timeMs) {
    timeMs = now;
    timeText = encodeTime(now);
  }
  if (poolAt + RANDOM_CHARS > POOL_BYTES) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const p = pool;
  const i = poolAt;
  poolAt += RANDOM_CHARS;
  // One call with 16 codes: a flat string at once (a loop of += builds a rope, flattened later).
  const c = (k: number): number => CODES[p[i + k]! & 31]!;
  return timeText + String.fromCharCode(c(0), c(1), c(2), c(3), c(4), c(5), c(6), c(7), c(8), c(9), c(10), c(11), c(12), c(13), c(14), c(15));
}
