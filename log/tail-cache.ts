import type { Lsn } from '../core/units.js';

/**
 * The payloads of the most recently written records, in LSN order, so that consumers following
 * the head (the projections, CDC) read them from memory instead of opening, seeking and reading
 * the segment file for every group commit. Only records already written (and, with commit
 * durability, fdatasynced) are added: a read never sees more than the durable head allows, as
 * with the file. The payloads lie in the write queue's chunks (1 MiB each, never reused), which
 * stay alive while any record in them is held: the bound counts each buffer a held record lies in,
 * in full (a payload of 100 bytes keeps its whole chunk), not the payloads' own bytes. A record is
 * kept as where it lies (buffer, offset, length), not as a view object of its own (which costs
 * more than a small payload); get() makes the view. The oldest records go first.
 */
export class TailCache {
  /** Per record from `start` on: the buffer its payload lies in, and where. */
  private owners: ArrayBufferLike[] = [];
  private offsets: number[] = [];
  private lengths: number[] = [];
  /** Index of the oldest record kept (dropped ones are compacted away in bulk). */
  private start = 0;
  /** LSN of the record at `start`. */
  private firstLsn = 0;
  /** Records held per buffer: a buffer counts in sizeBytes while it holds one. */
  private readonly holders = new Map<ArrayBufferLike, number>();
  private sizeBytes = 0;

  constructor(private readonly bytesMax: number) {}

  /** LSN of the oldest record held, or null when empty. */
  get first(): Lsn | null {
    return this.owners.length > this.start ? (this.firstLsn as Lsn) : null;
  }

  /** LSN of the newest record held, or null when empty. */
  get last(): Lsn | null {
    return this.owners.length > this.start ? ((this.firstLsn + this.owners.length - this.start - 1) as Lsn) : null;
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
    for (const payload of payloads) {
      const owner = payload.buffer;
      const held = this.holders.get(owner);
      if (held === undefined) this.sizeBytes += owner.byteLength;
      this.holders.set(owner, (held ?? 0) + 1);
      this.owners.push(owner);
      this.offsets.push(payload.byteOffset);
      this.lengths.push(payload.byteLength);
    }
    this.evict();
  }

  /** The payload of `recordLsn` (a view of the buffer it was written in), or undefined when it is not held. */
  get(recordLsn: number): Uint8Array | undefined {
    if (recordLsn < this.firstLsn) return undefined;
    const i = this.start + recordLsn - this.firstLsn;
    if (i >= this.owners.length) return undefined;
    return Buffer.from(this.owners[i]!, this.offsets[i]!, this.lengths[i]!);
  }

  /** Forgets everything (the log failed or closed: what follows is unknown). */
  clear(nextLsn = 0): void {
    this.owners = [];
    this.offsets = [];
    this.lengths = [];
    this.start = 0;
    this.firstLsn = nextLsn;
    this.holders.clear();
    this.sizeBytes = 0;
  }

  /** Drops the oldest records while over the bound (a record whose buffer is bigger than the bound is not kept). */
  private evict(): void {
    while (this.sizeBytes > this.bytesMax && this.owners.length > this.start) {
      const owner = this.owners[this.start]!;
      const held = this.holders.get(owner)! - 1;
      if (held > 0) this.holders.set(owner, held);
      else {
        this.holders.delete(owner);
        this.sizeBytes -= owner.byteLength;
      }
      this.owners[this.start] = RELEASED; // released now, compacted below
      this.start++;
      this.firstLsn++;
    }
    // Compact once the dropped prefix is as long as what is kept: amortised O(1) per record.
    if (this.start > 1024 && this.start * 2 > this.owners.length) {
      this.owners = this.owners.slice(this.start);
      this.offsets = this.offsets.slice(this.start);
      this.lengths = this.lengths.slice(this.start);
      this.start = 0;
    }
  }
}

const RELEASED = new ArrayBuffer(0);
