import { SvcError } from '../../core/errors.js';
import type { Lsn } from '../../core/units.js';
import { pointSpan, type KeySpan, type RecentWrites } from './recent-writes.js';
import { SpanSet } from './span-set.js';

/** What a conflict check found: the record that wrote into something the transaction read. */
export interface Conflict {
  readonly lsn: Lsn;
}

/** Spans read since the last check, all as of one LSN. */
interface NewReads {
  readonly seenLsn: Lsn;
  readonly spans: KeySpan[];
}

/**
 * The key spans a transaction's result depends on (rows it read or wrote, index ranges it probed),
 * each read as of some LSN. Commit is refused when a later record wrote into one of them:
 * optimistic concurrency control with backward validation, at key-range granularity.
 *
 * Checks are incremental: spans already checked through an LSN live in one merged set and only
 * meet records after it; new spans meet the records after the LSN they were read at. Each written
 * key is then one binary search, so a check costs (new keys written by others) x log(spans).
 */
export class ReadSet {
  private readonly checked = new SpanSet();
  private checkedThroughLsn: Lsn | null = null;
  private fresh: NewReads[] = [];
  private count = 0;

  constructor(private readonly readsMax: number) {}

  get size(): number {
    return this.count;
  }

  addSpan(span: KeySpan, seenLsn: Lsn): void {
    if (this.count >= this.readsMax) {
      throw new SvcError('LIMIT_EXCEEDED', `the transaction read or wrote more than ${this.readsMax} key ranges; split it into smaller transactions`, {
        limit: this.readsMax,
      });
    }
    this.count += 1;
    const last = this.fresh[this.fresh.length - 1];
    if (last && last.seenLsn === seenLsn) last.spans.push(span);
    else this.fresh.push({ seenLsn, spans: [span] });
  }

  addKey(key: Uint8Array, seenLsn: Lsn): void {
    this.addSpan(pointSpan(key), seenLsn);
  }

  /**
   * The first later write into a read span, or null when every read still holds through `headLsn`
   * (the last LSN `recent` has; then everything read so far counts as checked through it).
   */
  firstConflict(recent: RecentWrites, headLsn: Lsn): Conflict | null {
    if (this.checkedThroughLsn !== null && this.checked.size > 0) {
      const lsn = recent.firstKeyAfter(this.checkedThroughLsn, (key) => this.checked.has(key));
      if (lsn !== null) return { lsn };
    }
    for (const reads of this.fresh) {
      const set = new SpanSet();
      set.addAll(reads.spans);
      const lsn = recent.firstKeyAfter(reads.seenLsn, (key) => set.has(key));
      if (lsn !== null) return { lsn };
    }
    for (const reads of this.fresh) this.checked.addAll(reads.spans);
    this.fresh = [];
    this.checkedThroughLsn = headLsn;
    return null;
  }

  /** Forgets every span (the transaction ended). */
  clear(): void {
    this.checked.clear();
    this.fresh = [];
    this.count = 0;
  }
}
