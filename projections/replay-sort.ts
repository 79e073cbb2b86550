/**
 * Replay writes each chunk of records as one LevelDB batch. LevelDB inserts a batch's entries into
 * its memtable (a skip list) one by one: in key order each insert walks the part of the list the
 * previous one just walked, so it stays in the CPU cache, where random order misses it at every
 * level (index entries come in the order of their column's values, rows in primary key order,
 * interleaved). A batch is atomic and nothing reads between its ops, so sorting them by key and
 * keeping only the last op of each key leaves exactly the same state. The workers sort; the main
 * thread and LevelDB's thread are the busy ones.
 */
import { PACKED_DEL, PACKED_PUT } from './state-store.js';

/** Up to this many bytes a JS loop copies faster than a native call. */
const SMALL_COPY_BYTES_MAX = 64;

const packedLength = (ops: Uint8Array, at: number): number => ((ops[at]! << 24) | (ops[at + 1]! << 16) | (ops[at + 2]! << 8) | ops[at + 3]!) >>> 0;

/**
 * The packed ops (state-store.ts PACKED_PUT) sorted by key, one op per key: the last one given
 * for it. Applying the result in order leaves the same key/value state as applying `ops` in order.
 */
export function sortPackedOps(ops: Uint8Array): Uint8Array {
  const sorted = sortedOps(ops);
  const out = new Uint8Array(ops.length);
  let outAt = 0;
  for (let k = 0; k < sorted.n; k++) {
    if (!sorted.kept(k)) continue;
    const i = sorted.order[k]!;
    const start = sorted.starts[i]!;
    const length = sorted.starts[i + 1]! - start;
    if (length <= SMALL_COPY_BYTES_MAX) for (let b = 0; b < length; b++) out[outAt + b] = ops[start + b]!;
    else out.set(ops.subarray(start, start + length), outAt);
    outAt += length;
  }
  return outAt === ops.length ? out : out.slice(0, outAt);
}

/** A LevelDB WriteBatch rep (db/write_batch.cc) built by a replay worker; the main thread numbers it. */
export interface SortedBatch {
  /** 12 header bytes (sequence left 0, the count set), the entries up to `end`, then `BATCH_TAIL_BYTES` spare for one more short put. */
  readonly rep: Uint8Array;
  readonly end: number;
  /** Entries in it. */
  readonly count: number;
}

export const BATCH_HEADER_BYTES = 12;
/** Room after a batch's entries for a put of a key of up to 5 bytes with an empty value (replay-bulk.ts's probe). */
export const BATCH_TAIL_BYTES = 8;
/** WriteBatch entry tags (db/dbformat.h kTypeDeletion, kTypeValue). */
export const TAG_DEL = 0;
export const TAG_PUT = 1;

/**
 * sortPackedOps, written as a LevelDB WriteBatch instead of packed ops: what the bulk loader
 * writes, so the main thread only numbers it (the conversion was a tenth of its time).
 */
export function sortedBatch(ops: Uint8Array): SortedBatch {
  const sorted = sortedOps(ops);
  // Packed lengths take 4 bytes where varints take at most 5 (lengths under 2^28 take at most 4).
  const rep = new Uint8Array(BATCH_HEADER_BYTES + ops.length + sorted.n + BATCH_TAIL_BYTES);
  let at = BATCH_HEADER_BYTES;
  let count = 0;
  for (let k = 0; k < sorted.n; k++) {
    if (!sorted.kept(k)) continue;
    const from = sorted.starts[sorted.order[k]!]!;
    const put = ops[from] !== PACKED_DEL;
    const keyLength = packedLength(ops, from + 1);
    rep[at++] = put ? TAG_PUT : TAG_DEL;
    at = copyWithVarint(rep, at, ops, from + 5, keyLength);
    if (put) {
      const valueAt = from + 5 + keyLength;
      at = copyWithVarint(rep, at, ops, valueAt + 4, packedLength(ops, valueAt));
    }
    count += 1;
  }
  new DataView(rep.buffer).setUint32(8, count, true);
  return { rep, end: at, count };
}

/** A batch's entries as packed ops (state-store.ts PACKED_PUT), for an ordinary write. */
export function packedFromBatch(batch: SortedBatch): Uint8Array {
  const { rep, end } = batch;
  // A varint length takes one byte or more where a packed one takes four.
  const out = new Uint8Array(end + 6 * batch.count);
  let outAt = 0;
  let at = BATCH_HEADER_BYTES;
  const field = (): void => {
    let length = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = rep[at++]!;
      length += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) break;
    }
    out[outAt] = length >>> 24;
    out[outAt + 1] = (length >>> 16) & 0xff;
    out[outAt + 2] = (length >>> 8) & 0xff;
    out[outAt + 3] = length & 0xff;
    out.set(rep.subarray(at, at + length), outAt + 4);
    outAt += 4 + length;
    at += length;
  };
  while (at < end) {
    const put = rep[at++] === TAG_PUT;
    out[outAt++] = put ? PACKED_PUT : PACKED_DEL;
    field();
    if (put) field();
  }
  return out.subarray(0, outAt);
}

/** n as a varint32 (LevelDB's length encoding) at `at` in out; returns the end. */
export function writeVarint(out: Uint8Array, at: number, n: number): number {
  while (n >= 0x80) {
    out[at++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  out[at++] = n;
  return at;
}

/** A varint32 length then the bytes src[from, from + length), at `at` in out; returns the end. */
export function copyWithVarint(out: Uint8Array, at: number, src: Uint8Array, from: number, length: number): number {
  at = writeVarint(out, at, length);
  if (length <= SMALL_COPY_BYTES_MAX) for (let i = 0; i < length; i++) out[at + i] = src[from + i]!;
  else out.set(src.subarray(from, from + length), at);
  return at + length;
}

/** The order in which ops are written (order[k]), and which are kept (the last op of each key). */
function sortedOps(ops: Uint8Array): { n: number; order: Int32Array; starts: Int32Array; kept: (k: number) => boolean } {
  let n = 0;
  for (let at = 0; at < ops.length; n++) at = opEnd(ops, at);
  // Op i spans [starts[i], starts[i + 1]); its key starts 5 bytes in.
  const starts = new Int32Array(n + 1);
  const keyStarts = new Int32Array(n);
  const keyLengths = new Int32Array(n);
  for (let i = 0, at = 0; i < n; i++) {
    starts[i] = at;
    keyStarts[i] = at + 5;
    keyLengths[i] = packedLength(ops, at + 1);
    at = opEnd(ops, at);
  }
  starts[n] = ops.length;
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  new KeySorter(ops, keyStarts, keyLengths, order).sort(0, n, 0);
  // Equal keys keep their log order (the sort is stable): the last of a run is the op that wins.
  const kept = (k: number): boolean => k + 1 >= n || !sameKey(ops, keyStarts, keyLengths, order[k]!, order[k + 1]!);
  return { n, order, starts, kept };
}

function opEnd(ops: Uint8Array, at: number): number {
  const end = at + 5 + packedLength(ops, at + 1);
  return ops[at] === PACKED_DEL ? end : end + 4 + packedLength(ops, end);
}

function sameKey(ops: Uint8Array, keyStarts: Int32Array, keyLengths: Int32Array, a: number, b: number): boolean {
  const length = keyLengths[a]!;
  if (keyLengths[b] !== length) return false;
  const aStart = keyStarts[a]!;
  const bStart = keyStarts[b]!;
  // From the end: neighbours in key order share a long prefix (space, table, index value) and differ last (the primary key's low bytes).
  for (let i = length - 1; i >= 0; i--) if (ops[aStart + i] !== ops[bStart + i]) return false;
  return true;
}

/** Below this many keys a range is insertion-sorted instead of split by its next byte. */
const INSERTION_SORT_KEYS_MAX = 24;

/**
 * A stable most-significant-byte radix sort of op indexes by key (keys share long prefixes: a
 * comparison sort compared them from the first byte every time, and cost more than it saved).
 * Bytes every key of a range shares are skipped in one pass (an index's keys share the value's
 * tag and leading bytes), not counted one depth at a time.
 */
export class KeySorter {
  private scratch: Int32Array = new Int32Array(0);
  private readonly counts = new Int32Array(258);

  constructor(
    private readonly ops: Uint8Array,
    private readonly keyStarts: Int32Array,
    private readonly keyLengths: Int32Array,
    private order: Int32Array | null,
  ) {
    if (order !== null) this.scratch = new Int32Array(order.length);
  }

  /** Sorts `order` (op indexes) from now on. */
  useOrder(order: Int32Array): this {
    this.order = order;
    this.scratch = new Int32Array(order.length);
    return this;
  }

  /** True when ops lo..hi-1, as given, have strictly increasing keys (which agree on their first `depth` bytes). */
  strictlyIncreasing(lo: number, hi: number, depth: number): boolean {
    for (let i = lo + 1; i < hi; i++) if (this.compare(i - 1, i, depth) >= 0) return false;
    return true;
  }

  /** Ops a and b have the same key. */
  sameKey(a: number, b: number): boolean {
    const length = this.keyLengths[a]!;
    if (this.keyLengths[b] !== length) return false;
    const ops = this.ops;
    const aStart = this.keyStarts[a]!;
    const bStart = this.keyStarts[b]!;
    // From the end: neighbours in key order share a long prefix (space, table, index value) and differ last (the primary key's low bytes).
    for (let i = length - 1; i >= 0; i--) if (ops[aStart + i] !== ops[bStart + i]) return false;
    return true;
  }

  /** Sorts order[lo, hi), whose keys agree on their first `depth` bytes. */
  sort(lo: number, hi: number, depth: number): void {
    const order = this.order!;
    for (;;) {
      if (hi - lo <= INSERTION_SORT_KEYS_MAX) return this.insertionSort(lo, hi, depth);
      // Rows written in primary key order (serial ids, time-ordered keys) come sorted already.
      if (this.inOrder(lo, hi, depth)) return;
      depth = this.commonDepth(lo, hi, depth);
      // Bucket 0: keys that end at depth (they sort first, and are all equal); b + 1: next byte b.
      const counts = this.counts.fill(0);
      for (let k = lo; k < hi; k++) counts[this.bucket(order[k]!, depth) + 1]! += 1;
      if (counts[this.bucket(order[lo]!, depth) + 1] === hi - lo) {
        if (this.bucket(order[lo]!, depth) === 0) return; // all equal: already in log order
        depth += 1; // every key has the same byte here: look at the next one
        continue;
      }
      for (let b = 1; b < 258; b++) counts[b]! += counts[b - 1]!;
      // Bucket x is [bounds[x], bounds[x + 1]) from lo once distributed.
      const bounds = counts.slice();
      for (let k = lo; k < hi; k++) {
        const i = order[k]!;
        this.scratch[lo + counts[this.bucket(i, depth)]!++] = i;
      }
      order.set(this.scratch.subarray(lo, hi), lo);
      for (let x = 1; x < 257; x++) if (bounds[x + 1]! - bounds[x]! > 1) this.sort(lo + bounds[x]!, lo + bounds[x + 1]!, depth + 1);
      return;
    }
  }

  /** The bytes (from `depth`) every key of order[lo, hi) shares with the first, up to the shortest key's length. */
  private commonDepth(lo: number, hi: number, depth: number): number {
    const order = this.order!;
    const ops = this.ops;
    const first = order[lo]!;
    const firstStart = this.keyStarts[first]!;
    let common = this.keyLengths[first]!;
    for (let k = lo + 1; k < hi && common > depth; k++) {
      const i = order[k]!;
      const start = this.keyStarts[i]!;
      const limit = Math.min(common, this.keyLengths[i]!);
      let d = depth;
      while (d < limit && ops[start + d] === ops[firstStart + d]) d += 1;
      common = d;
    }
    return common;
  }

  /** 0 when the key has no byte at depth, else the byte + 1. */
  private bucket(i: number, depth: number): number {
    return depth < this.keyLengths[i]! ? this.ops[this.keyStarts[i]! + depth]! + 1 : 0;
  }

  private inOrder(lo: number, hi: number, depth: number): boolean {
    const order = this.order!;
    for (let k = lo + 1; k < hi; k++) if (this.compare(order[k - 1]!, order[k]!, depth) > 0) return false;
    return true;
  }

  private insertionSort(lo: number, hi: number, depth: number): void {
    const order = this.order!;
    for (let k = lo + 1; k < hi; k++) {
      const i = order[k]!;
      let j = k - 1;
      while (j >= lo && this.compare(order[j]!, i, depth) > 0) {
        order[j + 1] = order[j]!;
        j -= 1;
      }
      order[j + 1] = i;
    }
  }

  private compare(a: number, b: number, depth: number): number {
    const aStart = this.keyStarts[a]!;
    const bStart = this.keyStarts[b]!;
    const aLength = this.keyLengths[a]!;
    const bLength = this.keyLengths[b]!;
    const common = Math.min(aLength, bLength);
    for (let i = depth; i < common; i++) {
      const d = this.ops[aStart + i]! - this.ops[bStart + i]!;
      if (d !== 0) return d;
    }
    return aLength - bLength;
  }
}
