import { randomBytes } from 'node:crypto';

/** Any RFC 9562 UUID in its text form (PostgreSQL also accepts upper case; so do we). */
const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a value is a UUID in the canonical 8-4-4-4-12 hex form. */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_TEXT.test(value);
}

/** The 12-bit rand_a field as a counter within one millisecond (RFC 9562, method 1). */
const SEQUENCE_MAX = 0xfff;

/**
 * UUIDv7s (RFC 9562): 48 bits of Unix milliseconds, a 12-bit counter, then 62 random bits. The
 * ids the collection interface generates sort by creation time (within this process, strictly),
 * so listing in id order (the primary key's order, which needs no sort) is listing oldest first.
 */
export class UuidV7Source {
  private lastMs = 0;
  private sequence = 0;

  /** The next id; `nowMs` is passed in so tests are deterministic. */
  next(nowMs: number = Date.now()): string {
    if (nowMs > this.lastMs) {
      this.lastMs = nowMs;
      this.sequence = 0;
    } else if (this.sequence < SEQUENCE_MAX) {
      this.sequence += 1;
    } else {
      // 4096 ids in one millisecond: borrow the next one rather than repeat an order.
      this.lastMs += 1;
      this.sequence = 0;
    }
    const bytes = randomBytes(16);
    let ms = BigInt(this.lastMs);
    for (let i = 5; i >= 0; i--) {
      bytes[i] = Number(ms & 0xffn);
      ms >>= 8n;
    }
    bytes[6] = 0x70 | (this.sequence >> 8);
    bytes[7] = this.sequence & 0xff;
    bytes[8] = (bytes[8]! & 0x3f) | 0x80;
    const hex = bytes.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
}
