import { SvcError } from '../../core/errors.js';
import type { Lsn } from '../../core/units.js';
import { pointSpan, type KeySpan, type RecentWrites } from './recent-writes.js';

interface Read extends KeySpan {
  /** The transaction read this span as of this LSN: a later write into it is a conflict. */
  readonly seenLsn: Lsn;
}

/** What a conflict check found: the record that wrote into something the transaction read. */
export interface Conflict {
  readonly lsn: Lsn;
}

/**
 * The key spans a transaction's result depends on (rows it read or wrote, index ranges it probed),
 * each with the LSN it was read at. Commit is refused when a later record wrote into one of them:
 * optimistic concurrency control with backward validation, at key-range granularity.
 */
export class ReadSet {
  private readonly reads: Read[] = [];

  constructor(private readonly readsMax: number) {}

  get size(): number {
    return this.reads.length;
  }

  addSpan(span: KeySpan, seenLsn: Lsn): void {
    if (this.reads.length >= this.readsMax) {
      throw new SvcError('LIMIT_EXCEEDED', `the transaction read or wrote more than ${this.readsMax} key ranges; split it into smaller transactions`, {
        limit: this.readsMax,
      });
    }
    this.reads.push({ gte: span.gte, lt: span.lt, seenLsn });
  }

  addKey(key: Uint8Array, seenLsn: Lsn): void {
    this.addSpan(pointSpan(key), seenLsn);
  }

  /** The first later write into a read span, or null when every read still holds. */
  firstConflict(recent: RecentWrites): Conflict | null {
    for (const read of this.reads) {
      const lsn = recent.firstWriteInto(read, read.seenLsn);
      if (lsn !== null) return { lsn };
    }
    return null;
  }
}
