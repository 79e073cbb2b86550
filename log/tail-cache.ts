import type { Lsn } from '../core/units.js';

/**
 * The payloads of the most recently written records, in LSN order, so that consumers following
 * the head (the projections, CDC) read them from memory instead of opening, seeking and reading
 * the segment file for every group commit. Only records already written (and, with commit
 * durability, fdatasynced) are added: a read never sees more than the durable head allows, as
 * with the file. Bounded by payload bytes; the oldest records go first. The payloads are views
 * into the write queue's chunks, which are never reused, so they stay valid while held.
 */
export class TailCache {
  private payloads: Uint8Array[] = [];
  /** Index in `payloads` of the oldest record kept (dropped ones are compacted away in bulk). */
  private start = 0;
  /** LSN of payloads[start]. */
  private firstLsn = 0;
  private sizeBytes = 0;

  constructor(private readonly bytesMax: number) {}

  /** LSN of the oldest record held, or null when empty. */
  get first(): Lsn | null {
    return this.payloads.length > this.start ? (this.firstLsn as Lsn) : null;
  }

  /** LSN of the newest record held, or null when empty. */
  get last(): Lsn | null {
    return this.payloads.length > this.start ? ((this.firstLsn + this.payloads.length - this.start - 1) as Lsn) : null;
  }

  /** Adds the records firstLsn, firstLsn + 1, ... just written; a gap after the last one held starts over. */
  add(firstLsn: Lsn, payloads: readonly Uint8Array[]): void {
    if (payloads.length === 0) return;
    const last = this.last;
    if (last === null || last + 1 !== firstLsn) this.clear(firstLsn);
    for (const payload of payloads) {
      this.payloads.push(payload);
      this.sizeBytes += payload.length;
    }
    this.evict();
  }

  /** The payload of `recordLsn`, or undefined when it is not held. */
  get(recordLsn: number): Uint8Array | undefined {
    if (recordLsn < this.firstLsn) return undefined;
    return this.payloads[this.start + recordLsn - this.firstLsn];
  }

  /** Forgets everything (the log failed or closed: what follows is unknown). */
  clear(nextLsn = 0): void {
    this.payloads = [];
    this.start = 0;
    this.firstLsn = nextLsn;
    this.sizeBytes = 0;
  }

  /** Drops the oldest records while over the bound (a record bigger than the bound is not kept). */
  private evict(): void {
    while (this.sizeBytes > this.bytesMax && this.payloads.length > this.start) {
      this.sizeBytes -= (this.payloads[this.start] as Uint8Array).length;
      this.payloads[this.start] = EMPTY; // released now, compacted below
      this.start++;
      this.firstLsn++;
    }
    // Compact once the dropped prefix is as long as what is kept: amortised O(1) per record.
    if (this.start > 1024 && this.start * 2 > this.payloads.length) {
      this.payloads = this.payloads.slice(this.start);
      this.start = 0;
    }
  }
}

const EMPTY = new Uint8Array(0);
