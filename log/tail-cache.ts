import type { Lsn } from '../core/units.js';

/** Records whose places the index has room for at first (it doubles as needed). */
const INDEX_RECORDS_INITIAL = 1024;

/**
 * The payloads of the most recently written records, in LSN order, so that consumers following
 * the head (the projections, CDC) read them from memory instead of opening, seeking and reading
 * the segment file for every group commit. Only records already written (and, with commit
 * durability, fdatasynced) are added: a read never sees more than the durable head allows, as
 * with the file.
 *
 * The payloads lie in the write queue's chunks (1 MiB each, never reused), which stay alive while
 * any record in them is held: the bound counts each buffer held records lie in, in full (a
 * 100-byte payload keeps its whole chunk), not the payloads' own bytes, and the oldest buffer goes
 * first with all its records. A record is kept as its place in its buffer (8 bytes in typed
 * arrays, beside the bound), not as a view object of its own (which costs more than a small
 * payload); get() makes the view.
 */
export class TailCache {
  /** Offset and length of each record's payload in its buffer, by lsn - baseLsn. */
  private offsets = new Uint32Array(INDEX_RECORDS_INITIAL);
  private lengths = new Uint32Array(INDEX_RECORDS_INITIAL);
  /** LSN of index slot 0. */
  private baseLsn = 0;
  /** LSN of the oldest record held. */
  private firstLsn = 0;
  /** One past the newest record held (nothing held when equal to firstLsn). */
  private endLsn = 0;
  /** The buffers the records lie in, oldest first, each with the LSN of its first record. */
  private runs: { readonly owner: ArrayBufferLike; readonly firstLsn: number }[] = [];
  private sizeBytes = 0;

  constructor(private readonly bytesMax: number) {}

  /** LSN of the oldest record held, or null when empty. */
  get first(): Lsn | null {
    return this.endLsn > this.firstLsn ? (this.firstLsn as Lsn) : null;
  }

  /** LSN of the newest record held, or null when empty. */
  get last(): Lsn | null {
    return this.endLsn > this.firstLsn ? ((this.endLsn - 1) as Lsn) : null;
  }

  /** Bytes of the buffers the records held lie in (what holding them keeps alive). */
  get bytesHeld(): number {
    return this.sizeBytes;
  }

  /** Adds the records firstLsn, firstLsn + 1, ... just written; a gap after the last one held starts over. */
  add(firstLsn: Lsn, payloads: readonly Uint8Array[]): void {
    if (payloads.length === 0) return;
    const last = this.last;
    if (last === null || last + 1 !== firstLsn) this.clear(firstLsn);
    this.reserve(payloads.length);
    for (const payload of payloads) {
      const owner = payload.buffer;
      if (this.runs[this.runs.length - 1]?.owner !== owner) {
        this.runs.push({ owner, firstLsn: this.endLsn });
        this.sizeBytes += owner.byteLength;
      }
      const slot = this.endLsn - this.baseLsn;
      this.offsets[slot] = payload.byteOffset;
      this.lengths[slot] = payload.byteLength;
      this.endLsn++;
    }
    this.evict();
  }

  /** The payload of `recordLsn` (a view of the buffer it was written in), or undefined when it is not held. */
  get(recordLsn: number): Uint8Array | undefined {
    if (recordLsn < this.firstLsn || recordLsn >= this.endLsn) return undefined;
    // The last run starting at or before recordLsn (runs are few: the bound over 1 MiB chunks).
    let lo = 0;
    let hi = this.runs.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.runs[mid]!.firstLsn <= recordLsn) lo = mid;
      else hi = mid - 1;
    }
    const slot = recordLsn - this.baseLsn;
    return Buffer.from(this.runs[lo]!.owner, this.offsets[slot]!, this.lengths[slot]!);
  }

  /** Forgets everything (the log failed or closed: what follows is unknown). */
  clear(nextLsn = 0): void {
    this.runs = [];
    this.baseLsn = this.firstLsn = this.endLsn = nextLsn;
    this.sizeBytes = 0;
    if (this.offsets.length > INDEX_RECORDS_INITIAL) {
      this.offsets = new Uint32Array(INDEX_RECORDS_INITIAL);
      this.lengths = new Uint32Array(INDEX_RECORDS_INITIAL);
    }
  }

  /** Room in the index for `more` records: slots of dropped records reused first, else twice the size. */
  private reserve(more: number): void {
    const used = this.endLsn - this.firstLsn;
    if (this.endLsn - this.baseLsn + more <= this.offsets.length) return;
    const from = this.firstLsn - this.baseLsn;
    if (used + more <= this.offsets.length / 2) {
      this.offsets.copyWithin(0, from, from + used);
      this.lengths.copyWithin(0, from, from + used);
    } else {
      let size = this.offsets.length * 2;
      while (size < used + more) size *= 2;
      const offsets = new Uint32Array(size);
      const lengths = new Uint32Array(size);
      offsets.set(this.offsets.subarray(from, from + used));
      lengths.set(this.lengths.subarray(from, from + used));
      this.offsets = offsets;
      this.lengths = lengths;
    }
    this.baseLsn = this.firstLsn;
  }

  /** Drops the oldest buffers, with their records, while over the bound (a buffer bigger than the bound is not kept). */
  private evict(): void {
    while (this.sizeBytes > this.bytesMax && this.runs.length > 0) {
      const dropped = this.runs.shift()!;
      this.sizeBytes -= dropped.owner.byteLength;
      this.firstLsn = this.runs[0]?.firstLsn ?? this.endLsn;
    }
  }
}
