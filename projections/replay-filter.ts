/**
 * The filter block of the tables replay writes (replay-tables.ts): LevelDB's bloom filter, as the
 * store opens with it (classic-level sets `NewBloomFilterPolicy(10)` on every database), so a point
 * read that misses a table after a replay costs a filter probe, as after one of LevelDB's own
 * compactions, not an index lookup and a data block read. Formats and constants are LevelDB 1.20's
 * (util/hash.cc, util/bloom.cc, table/filter_block.cc, db/dbformat.cc's InternalFilterPolicy: the
 * filter holds user keys, without the internal key's 8 bytes).
 */

/** The metaindex key naming the filter block: "filter." and the policy's name. */
export const FILTER_META_KEY = new TextEncoder().encode('filter.leveldb.BuiltinBloomFilter2');

/** NewBloomFilterPolicy(10): bits per key, and probes per key (10 × 0.69, rounded down). */
const BITS_PER_KEY = 10;
const PROBES = 6;
/** A filter per 2 KiB of data-block offsets (kFilterBaseLg). */
const FILTER_BASE_LG = 11;
const BLOOM_SEED = 0xbc9f1d34;
const HASH_M = 0xc6a4a793;

/** LevelDB's Hash (util/hash.cc, murmur-like) of src[from, +length) with `seed`, as an unsigned 32-bit number. */
export function leveldbHash(src: Uint8Array, from: number, length: number, seed: number): number {
  const limit = from + length;
  let h = (seed ^ Math.imul(length, HASH_M)) >>> 0;
  let at = from;
  for (; at + 4 <= limit; at += 4) {
    const word = src[at]! | (src[at + 1]! << 8) | (src[at + 2]! << 16) | (src[at + 3]! << 24);
    h = Math.imul((h + word) | 0, HASH_M);
    h ^= h >>> 16;
  }
  const rest = limit - at;
  if (rest > 0) {
    if (rest === 3) h = (h + (src[at + 2]! << 16)) | 0;
    if (rest >= 2) h = (h + (src[at + 1]! << 8)) | 0;
    h = Math.imul((h + src[at]!) | 0, HASH_M);
    h ^= h >>> 24;
  }
  return h >>> 0;
}

/**
 * Builds a table's filter block as FilterBlockBuilder does: the user keys' hashes of the data blocks
 * starting in each 2 KiB of the file become one bloom filter (empty where no block starts), then
 * the filters' offsets, the offset of that array and the base's log.
 */
export class FilterBuilder {
  /** Hashes of the keys added since the last filter (reused: a table has ~10^5 keys). */
  private hashes = new Uint32Array(1024);
  private count = 0;
  private parts: Uint8Array[] = [];
  private bytes = 0;
  private offsets: number[] = [];

  /** A key of the data block being built: src[from, +length) is its user key. */
  addKey(src: Uint8Array, from: number, length: number): void {
    if (this.count === this.hashes.length) {
      const grown = new Uint32Array(this.count * 2);
      grown.set(this.hashes);
      this.hashes = grown;
    }
    this.hashes[this.count++] = leveldbHash(src, from, length, BLOOM_SEED);
  }

  /** The next data block starts at `offset` in the file: the filters of the offsets before it are made. */
  startBlock(offset: number): void {
    const index = Math.floor(offset / 2 ** FILTER_BASE_LG);
    while (index > this.offsets.length) this.generate();
  }

  /** The filter block's contents (without a trailer); the builder starts afresh. */
  finish(): Uint8Array {
    if (this.count > 0) this.generate();
    const out = new Uint8Array(this.bytes + 4 * this.offsets.length + 5);
    let at = 0;
    for (const part of this.parts) {
      out.set(part, at);
      at += part.length;
    }
    const view = new DataView(out.buffer);
    for (const offset of this.offsets) {
      view.setUint32(at, offset, true);
      at += 4;
    }
    view.setUint32(at, this.bytes, true);
    out[at + 4] = FILTER_BASE_LG;
    this.parts = [];
    this.bytes = 0;
    this.offsets = [];
    this.count = 0;
    return out;
  }

  /** BloomFilterPolicy::CreateFilter over the hashes held (none: an empty filter). */
  private generate(): void {
    this.offsets.push(this.bytes);
    const n = this.count;
    if (n === 0) return;
    const filterBytes = (Math.max(n * BITS_PER_KEY, 64) + 7) >>> 3;
    const bits = filterBytes * 8;
    const filter = new Uint8Array(filterBytes + 1);
    filter[filterBytes] = PROBES;
    for (let i = 0; i < n; i++) {
      let h = this.hashes[i]!;
      const delta = ((h >>> 17) | (h << 15)) >>> 0;
      for (let j = 0; j < PROBES; j++) {
        const bit = h % bits;
        filter[bit >>> 3]! |= 1 << (bit & 7);
        h = (h + delta) >>> 0;
      }
    }
    this.parts.push(filter);
    this.bytes += filter.length;
    this.count = 0;
  }
}
