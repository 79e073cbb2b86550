import type { Lsn } from '../core/units.js';
import { compareKeys } from '../core/key-encoding.js';
import type { KvOp } from './state-store.js';

export interface PendingEntry {
  readonly key: Uint8Array;
  /** null: deleted by a pending record. */
  readonly value: Uint8Array | null;
  readonly lsn: Lsn;
}

/** The effects of one pending record, sorted by key, one op per key (the last op on a key wins). */
interface PendingRecord {
  readonly lsn: Lsn;
  readonly ops: readonly KvOp[];
}

/**
 * The key/value effects of records appended to the log but not yet applied by the tables
 * projection. The writer validates against "store + overlay", so a transaction sees every change
 * acknowledged before it even while group commit and apply are still running.
 *
 * Each record's effects are kept as one sorted array of its own ops: adding is a sort (none when
 * they come sorted, as a bulk insert of ascending keys does), lookups are binary searches over the
 * few records in flight (newest first), and releasing drops whole arrays. A PendingEntry is made
 * only for a key found. Entries disappear only after the store has them, so reading the overlay
 * before the store is safe.
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
    const unique = strictlyAscending(ops) ? ops.slice() : sortedLastPerKey(ops);
    this.records.push({ lsn, ops: unique });
    this.entryCount += unique.length;
  }

  /** Forgets every record at or below `applied`. */
  release(applied: Lsn): void {
    if (this.records.length === 0 || this.records[0]!.lsn > applied) return;
    const kept = this.records.filter((record) => record.lsn > applied);
    for (const record of this.records) if (record.lsn <= applied) this.entryCount -= record.ops.length;
    this.records = kept;
  }

  get(key: Uint8Array): PendingEntry | undefined {
    for (let r = this.records.length - 1; r >= 0; r--) {
      const { ops, lsn } = this.records[r]!;
      const op = ops[lowerBound(ops, key)];
      if (op !== undefined && compareKeys(op.key, key) === 0) return entryOf(op, lsn);
    }
    return undefined;
  }

  /** Pending entries with gte <= key < lt, newest per key, in key order (a copy: safe across awaits). */
  range(gte: Uint8Array, lt: Uint8Array): PendingEntry[] {
    if (this.records.length === 0) return [];
    const byKey = new Map<string, PendingEntry>();
    for (const { ops, lsn } of this.records) {
      for (let i = lowerBound(ops, gte); i < ops.length && compareKeys(ops[i]!.key, lt) < 0; i++) {
        byKey.set(Buffer.from(ops[i]!.key).toString('latin1'), entryOf(ops[i]!, lsn));
      }
    }
    return [...byKey.values()].sort((a, b) => compareKeys(a.key, b.key));
  }
}

const entryOf = (op: KvOp, lsn: Lsn): PendingEntry => ({ key: op.key, value: op.type === 'put' ? op.value : null, lsn });

/** True when every op's key is above the one before it (no sort and no duplicate to drop). */
function strictlyAscending(ops: readonly KvOp[]): boolean {
  for (let i = 1; i < ops.length; i++) if (compareKeys(ops[i - 1]!.key, ops[i]!.key) >= 0) return false;
  return true;
}

/** The ops sorted by key, keeping only the last op on each key. */
function sortedLastPerKey(ops: readonly KvOp[]): KvOp[] {
  // A stable sort keeps op order among equal keys.
  const sorted = ops.slice().sort((a, b) => compareKeys(a.key, b.key));
  const unique: KvOp[] = [];
  for (const op of sorted) {
    const last = unique[unique.length - 1];
    if (last !== undefined && compareKeys(last.key, op.key) === 0) unique[unique.length - 1] = op;
    else unique.push(op);
  }
  return unique;
}

/** Index of the first op whose key is >= key. */
function lowerBound(entries: readonly KvOp[], key: Uint8Array): number {
  let low = 0;
  let high = entries.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compareKeys(entries[mid]!.key, key) < 0) low = mid + 1;
    else high = mid;
  }
  return low;
}
