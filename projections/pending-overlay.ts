import type { Lsn } from '../core/units.js';
import { compareKeys } from '../core/key-encoding.js';
import type { KvOp } from './state-store.js';

export interface PendingEntry {
  readonly key: Uint8Array;
  /** null: deleted by a pending record. */
  readonly value: Uint8Array | null;
  readonly lsn: Lsn;
}

/** The effects of one pending record, sorted by key (the last op on a key wins). */
interface PendingRecord {
  readonly lsn: Lsn;
  readonly entries: readonly PendingEntry[];
}

/**
 * The key/value effects of records appended to the log but not yet applied by the tables
 * projection. The writer validates against "store + overlay", so a transaction sees every change
 * acknowledged before it even while group commit and apply are still running.
 *
 * Each record's effects are kept as one sorted array: adding is a sort, lookups are binary
 * searches over the few records in flight (newest first), and releasing drops whole arrays.
 * Entries disappear only after the store has them, so reading the overlay before the store is safe.
 */
export class PendingOverlay {
  /** In LSN order. */
  private records: PendingRecord[] = [];
  private entryCount = 0;

  get size(): number {
    return this.entryCount;
  }

  add(lsn: Lsn, ops: readonly KvOp[]): void {
    if (ops.length === 0) return;
    const entries: PendingEntry[] = ops.map((op) => ({ key: op.key, value: op.type === 'put' ? op.value : null, lsn }));
    // Stable sort keeps op order among equal keys; then keep only the last op per key.
    entries.sort((a, b) => compareKeys(a.key, b.key));
    const unique: PendingEntry[] = [];
    for (const entry of entries) {
      const last = unique[unique.length - 1];
      if (last !== undefined && compareKeys(last.key, entry.key) === 0) unique[unique.length - 1] = entry;
      else unique.push(entry);
    }
    this.records.push({ lsn, entries: unique });
    this.entryCount += unique.length;
  }

  /** Forgets every record at or below `applied`. */
  release(applied: Lsn): void {
    if (this.records.length === 0 || this.records[0]!.lsn > applied) return;
    const kept = this.records.filter((record) => record.lsn > applied);
    for (const record of this.records) if (record.lsn <= applied) this.entryCount -= record.entries.length;
    this.records = kept;
  }

  get(key: Uint8Array): PendingEntry | undefined {
    for (let r = this.records.length - 1; r >= 0; r--) {
      const entries = this.records[r]!.entries;
      const at = lowerBound(entries, key);
      const entry = entries[at];
      if (entry !== undefined && compareKeys(entry.key, key) === 0) return entry;
    }
    return undefined;
  }

  /** Pending entries with gte <= key < lt, newest per key, in key order (a copy: safe across awaits). */
  range(gte: Uint8Array, lt: Uint8Array): PendingEntry[] {
    if (this.records.length === 0) return [];
    const byKey = new Map<string, PendingEntry>();
    for (const record of this.records) {
      const { entries } = record;
      for (let i = lowerBound(entries, gte); i < entries.length && compareKeys(entries[i]!.key, lt) < 0; i++) {
        byKey.set(Buffer.from(entries[i]!.key).toString('latin1'), entries[i]!);
      }
    }
    return [...byKey.values()].sort((a, b) => compareKeys(a.key, b.key));
  }
}

/** Index of the first entry whose key is >= key. */
function lowerBound(entries: readonly PendingEntry[], key: Uint8Array): number {
  let low = 0;
  let high = entries.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compareKeys(entries[mid]!.key, key) < 0) low = mid + 1;
    else high = mid;
  }
  return low;
}
