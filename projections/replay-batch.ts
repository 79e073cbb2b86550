/**
 * A replay worker's chunk of key/value ops, built straight into the sorted LevelDB WriteBatch the
 * main thread writes (replay-sort.ts's SortedBatch: the last op of each key, in key order). Until
 * session 10 the ops were packed one after another (4-byte lengths) and then parsed, sorted from
 * their first byte and copied once more into the batch with varint lengths: a quarter of the
 * worker's time. Here each op is written once, already as a WriteBatch entry, into a group of the
 * key's space and id (its first 5 bytes: a table's rows, one index's entries), and where it starts
 * is noted as it is written. At the end the groups follow in the order of their prefixes (their
 * keys cannot interleave); a group whose keys came in increasing order (rows inserted in primary
 * key order) is copied whole, another is sorted from its sixth byte (the prefix is the same for
 * all) and its entries copied in that order, each entry one span. Keys shorter than 5 bytes (no
 * row or index key is) put every op in one group sorted from the first byte.
 */
import { BATCH_HEADER_BYTES, BATCH_TAIL_BYTES, KeySorter, TAG_DEL, TAG_PUT, writeVarint, type SortedBatch } from './replay-sort.js';

const PREFIX_BYTES = 5;
/** Up to this many bytes a JS loop copies faster than a native call. */
const SMALL_COPY_BYTES_MAX = 32;
/** A varint32 takes at most this many bytes. */
const VARINT_BYTES_MAX = 5;

/** The ops of one key prefix (or of every key, in the fallback group), as WriteBatch entries in the order given. */
class Group {
  buf: Uint8Array;
  end = 0;
  count = 0;
  /** Entry i spans [starts[i], starts[i + 1]) (starts[count] is written at the end); its key [keyStarts[i], +keyLengths[i]). */
  starts: Int32Array;
  keyStarts: Int32Array;
  keyLengths: Int32Array;

  constructor(
    /** space * 2^32 + id: the order of the groups; -1 for the fallback group. */
    readonly prefix: number,
    readonly id: number,
    bytes: number,
  ) {
    this.buf = new Uint8Array(bytes);
    this.starts = new Int32Array(1024);
    this.keyStarts = new Int32Array(1024);
    this.keyLengths = new Int32Array(1024);
  }

  /** Room for an entry of `bytes` at `end` and for one more entry's offsets; returns `end`. */
  reserve(bytes: number): number {
    if (this.end + bytes > this.buf.length) {
      const grown = new Uint8Array(Math.max(this.buf.length * 2, this.end + bytes));
      grown.set(this.buf.subarray(0, this.end));
      this.buf = grown;
    }
    if (this.count + 1 >= this.starts.length) {
      const size = this.starts.length * 2;
      this.starts = grownInts(this.starts, size);
      this.keyStarts = grownInts(this.keyStarts, size);
      this.keyLengths = grownInts(this.keyLengths, size);
    }
    return this.end;
  }
}

/** Builds a chunk's sorted WriteBatch from ops given in log order (ops of one key: the last wins). */
export class BatchBuilder {
  private readonly groups = new Map<number, Group>();
  /** The last group used per key space: rows and index entries alternate, each space mostly one id. */
  private readonly lastBySpace: (Group | undefined)[] = [];
  private fallback: Group | null = null;
  private bytes = 0;

  /** bytesHint: about how many bytes of entries to expect (the first two groups' buffers start at half of it, at least 64 KiB). */
  constructor(private readonly bytesHint: number) {}

  /**
   * An op whose key is `space` + u32 BE `id` + a[aAt, +aLength) + b[bAt, +bLength); a put's value is
   * value[valueAt, +valueLength), a delete's null (the fast path passes where the bytes are, not views).
   */
  keyOp(
    space: number,
    id: number,
    a: Uint8Array,
    aAt: number,
    aLength: number,
    b: Uint8Array,
    bAt: number,
    bLength: number,
    value: Uint8Array | null,
    valueAt: number,
    valueLength: number,
  ): void {
    if (this.fallback !== null) {
      this.op(prefixedKey(space, id, a.subarray(aAt, aAt + aLength), b.subarray(bAt, bAt + bLength)), value?.subarray(valueAt, valueAt + valueLength) ?? null);
      return;
    }
    const group = this.groupOf(space, id);
    const keyLength = PREFIX_BYTES + aLength + bLength;
    const need = 1 + VARINT_BYTES_MAX + keyLength + (value === null ? 0 : VARINT_BYTES_MAX + valueLength);
    let at = group.reserve(need);
    const buf = group.buf;
    const n = group.count;
    group.starts[n] = at;
    buf[at++] = value === null ? TAG_DEL : TAG_PUT;
    at = writeVarint(buf, at, keyLength);
    group.keyStarts[n] = at;
    group.keyLengths[n] = keyLength;
    buf[at] = space;
    buf[at + 1] = id >>> 24;
    buf[at + 2] = (id >>> 16) & 0xff;
    buf[at + 3] = (id >>> 8) & 0xff;
    buf[at + 4] = id & 0xff;
    at = copyRange(buf, at + PREFIX_BYTES, a, aAt, aLength);
    at = copyRange(buf, at, b, bAt, bLength);
    if (value !== null) at = copyRange(buf, writeVarint(buf, at, valueLength), value, valueAt, valueLength);
    this.bytes += at - group.end;
    group.end = at;
    group.count = n + 1;
  }

  /** An op of any key (the general path: row-ops.ts's ops); value null: a delete. */
  op(key: Uint8Array, value: Uint8Array | null): void {
    if (key.length >= PREFIX_BYTES && this.fallback === null) {
      const id = ((key[1]! << 24) | (key[2]! << 16) | (key[3]! << 8) | key[4]!) >>> 0;
      this.keyOp(key[0]!, id, key, PREFIX_BYTES, key.length - PREFIX_BYTES, key, 0, 0, value, 0, value === null ? 0 : value.length);
      return;
    }
    const group = this.fallbackGroup();
    const need = 1 + VARINT_BYTES_MAX + key.length + (value === null ? 0 : VARINT_BYTES_MAX + value.length);
    let at = group.reserve(need);
    const n = group.count;
    group.starts[n] = at;
    group.buf[at++] = value === null ? TAG_DEL : TAG_PUT;
    at = writeVarint(group.buf, at, key.length);
    group.keyStarts[n] = at;
    group.keyLengths[n] = key.length;
    at = copyRange(group.buf, at, key, 0, key.length);
    if (value !== null) at = copyRange(group.buf, writeVarint(group.buf, at, value.length), value, 0, value.length);
    this.bytes += at - group.end;
    group.end = at;
    group.count = n + 1;
  }

  /** The batch: 12 header bytes (sequence 0, the count), the kept entries in key order, BATCH_TAIL_BYTES spare. */
  finish(): SortedBatch {
    const rep = new Uint8Array(BATCH_HEADER_BYTES + this.bytes + BATCH_TAIL_BYTES);
    let at = BATCH_HEADER_BYTES;
    let count = 0;
    const groups = this.fallback !== null ? [this.fallback] : [...this.groups.values()].sort((a, b) => a.prefix - b.prefix);
    for (const group of groups) {
      const written = writeSorted(group, group === this.fallback ? 0 : PREFIX_BYTES, rep, at);
      at = written.at;
      count += written.count;
    }
    new DataView(rep.buffer).setUint32(8, count, true);
    return { rep, end: at, count };
  }

  private groupOf(space: number, id: number): Group {
    const last = this.lastBySpace[space];
    if (last !== undefined && last.id === id) return last;
    const prefix = space * 2 ** 32 + id;
    let group = this.groups.get(prefix);
    if (group === undefined) {
      // The first two groups (a table's rows, its first index) start at half the expected bytes; any
      // more start small and grow (a chunk touching many tables or indexes must not reserve the chunk's size for each).
      const bytes = this.groups.size < 2 ? Math.floor(this.bytesHint / 2) : 0;
      group = new Group(prefix, id, Math.max(64 * 1024, bytes));
      this.groups.set(prefix, group);
    }
    this.lastBySpace[space] = group;
    return group;
  }

  /**
   * A key shorter than the prefix: from here on every op goes into one group sorted from the first
   * byte (such a key may sort between two prefixes), the ops written so far moved into it in order.
   */
  private fallbackGroup(): Group {
    if (this.fallback !== null) return this.fallback;
    const all = new Group(-1, -1, Math.max(64 * 1024, this.bytes));
    const byFirst: { group: Group; i: number }[] = [];
    for (const group of this.groups.values()) for (let i = 0; i < group.count; i++) byFirst.push({ group, i });
    // Log order across groups is lost, but only the order of ops of the same key matters, and a key is in one group.
    for (const { group, i } of byFirst) {
      const start = group.starts[i]!;
      const end = i + 1 < group.count ? group.starts[i + 1]! : group.end;
      const at = all.reserve(end - start);
      all.buf.set(group.buf.subarray(start, end), at);
      all.starts[all.count] = at;
      all.keyStarts[all.count] = at + (group.keyStarts[i]! - start);
      all.keyLengths[all.count] = group.keyLengths[i]!;
      all.count += 1;
      all.end = at + end - start;
    }
    this.groups.clear();
    this.lastBySpace.length = 0;
    this.fallback = all;
    return all;
  }
}

function prefixedKey(space: number, id: number, first: Uint8Array, second: Uint8Array): Uint8Array {
  const key = new Uint8Array(PREFIX_BYTES + first.length + second.length);
  key[0] = space;
  key[1] = id >>> 24;
  key[2] = (id >>> 16) & 0xff;
  key[3] = (id >>> 8) & 0xff;
  key[4] = id & 0xff;
  key.set(first, PREFIX_BYTES);
  key.set(second, PREFIX_BYTES + first.length);
  return key;
}

/**
 * The group's entries in key order at `at` in rep, the last of each key only; returns where they
 * end and how many were written. `depth`: the bytes every key of the group shares.
 */
function writeSorted(group: Group, depth: number, rep: Uint8Array, at: number): { at: number; count: number } {
  const n = group.count;
  if (n === 0) return { at, count: 0 };
  const { buf, starts, keyStarts, keyLengths } = group;
  starts[n] = group.end;
  const sorter = new KeySorter(buf, keyStarts, keyLengths, null);
  // Increasing keys (rows inserted in primary key order): the group is the batch's part as it is.
  if (sorter.strictlyIncreasing(0, n, depth)) {
    rep.set(buf.subarray(0, group.end), at);
    return { at: at + group.end, count: n };
  }
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  sorter.useOrder(order).sort(0, n, depth);
  let count = 0;
  // Runs of entries that are next to each other in the group too are copied as one span.
  let spanFrom = -1;
  let spanEnd = -1;
  for (let k = 0; k < n; k++) {
    const i = order[k]!;
    // Equal keys keep their log order (the sort is stable): the last of a run is the op that wins.
    if (k + 1 < n && sorter.sameKey(i, order[k + 1]!)) continue;
    count += 1;
    const start = starts[i]!;
    if (start === spanEnd) {
      spanEnd = starts[i + 1]!;
      continue;
    }
    at = copySpan(rep, at, buf, spanFrom, spanEnd);
    spanFrom = start;
    spanEnd = starts[i + 1]!;
  }
  at = copySpan(rep, at, buf, spanFrom, spanEnd);
  return { at, count };
}

function copySpan(out: Uint8Array, at: number, src: Uint8Array, from: number, end: number): number {
  const length = end - from;
  if (length <= 0) return at;
  if (length <= SMALL_COPY_BYTES_MAX) for (let i = 0; i < length; i++) out[at + i] = src[from + i]!;
  else out.set(src.subarray(from, end), at);
  return at + length;
}

function copyRange(out: Uint8Array, at: number, src: Uint8Array, from: number, length: number): number {
  if (length <= SMALL_COPY_BYTES_MAX) for (let i = 0; i < length; i++) out[at + i] = src[from + i]!;
  else out.set(src.subarray(from, from + length), at);
  return at + length;
}

function grownInts(ints: Int32Array, size: number): Int32Array {
  const grown = new Int32Array(size);
  grown.set(ints);
  return grown;
}
