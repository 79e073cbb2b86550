import { compareKeys } from '../../core/key-encoding.js';
import type { Lsn } from '../../core/units.js';

/** A half-open key range [gte, lt) in the store's key space. */
export interface KeySpan {
  readonly gte: Uint8Array;
  readonly lt: Uint8Array;
}

interface AppendedRecord {
  readonly lsn: Lsn;
  /** Keys the record wrote, sorted; null: it changed the catalog (it conflicts with everything). */
  readonly keys: readonly Uint8Array[] | null;
}

/**
 * The keys written by records appended recently, in LSN order: what optimistic transactions
 * validate their reads against ("did anything after the LSN I read at write into this range?").
 * Kept only as far back as an open transaction, or an unapplied record, can need.
 */
export class RecentWrites {
  private records: AppendedRecord[] = [];
  private keyCount = 0;
  private lastShed: Lsn | null = null;

  /** Records held and the keys they wrote (for tests and limits). */
  get size(): { readonly records: number; readonly keys: number } {
    return { records: this.records.length, keys: this.keyCount };
  }

  add(lsn: Lsn, keys: readonly Uint8Array[] | null): void {
    const sorted = keys ? [...keys].sort(compareKeys) : null;
    this.records.push({ lsn, keys: sorted });
    this.keyCount += sorted?.length ?? 0;
  }

  /** Forgets the records at or below `floorLsn`: nobody reads from before them any more. */
  retain(floorLsn: Lsn): void {
    let drop = 0;
    while (drop < this.records.length && this.records[drop]!.lsn <= floorLsn) {
      this.keyCount -= this.records[drop]!.keys?.length ?? 0;
      drop += 1;
    }
    if (drop > 0) this.records = this.records.slice(drop);
  }

  /**
   * Forgets the oldest records until at most `keysMax` keys are held; returns the LSN of the last
   * record forgotten (readers from before it can no longer be checked), or null.
   */
  shed(keysMax: number): Lsn | null {
    let drop = 0;
    let last: Lsn | null = null;
    while (this.keyCount > keysMax && drop < this.records.length) {
      const record = this.records[drop++]!;
      this.keyCount -= record.keys?.length ?? 0;
      last = record.lsn;
    }
    if (drop > 0) this.records = this.records.slice(drop);
    if (last !== null) this.lastShed = last;
    return last;
  }

  /** The LSN of the last record dropped by shed(): readers from before it cannot be checked. */
  get shedThroughLsn(): Lsn | null {
    return this.lastShed;
  }

  /**
   * The LSN of the first record after `afterLsn` with a written key `holds` accepts (a catalog
   * change counts as every key), or null.
   */
  firstKeyAfter(afterLsn: Lsn, holds: (key: Uint8Array) => boolean): Lsn | null {
    for (let r = firstAfter(this.records, afterLsn); r < this.records.length; r++) {
      const record = this.records[r]!;
      if (record.keys === null) return record.lsn;
      for (const key of record.keys) if (holds(key)) return record.lsn;
    }
    return null;
  }

  /** The LSN of the first record after `seenLsn` that wrote into `span`, or null. */
  firstWriteInto(span: KeySpan, seenLsn: Lsn): Lsn | null {
    for (let r = firstAfter(this.records, seenLsn); r < this.records.length; r++) {
      const record = this.records[r]!;
      if (record.keys === null) return record.lsn;
      const at = lowerBound(record.keys, span.gte);
      if (at < record.keys.length && compareKeys(record.keys[at]!, span.lt) < 0) return record.lsn;
    }
    return null;
  }
}

function firstAfter(records: readonly AppendedRecord[], lsn: Lsn): number {
  let low = 0;
  let high = records.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (records[mid]!.lsn <= lsn) low = mid + 1;
    else high = mid;
  }
  return low;
}

function lowerBound(keys: readonly Uint8Array[], key: Uint8Array): number {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compareKeys(keys[mid]!, key) < 0) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** The span holding exactly one key. */
export function pointSpan(key: Uint8Array): KeySpan {
  const lt = new Uint8Array(key.length + 1);
  lt.set(key);
  return { gte: key, lt };
}
