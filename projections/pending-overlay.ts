import type { Lsn } from '../core/units.js';
import { compareKeys } from '../core/key-encoding.js';
import { latin1 } from './cached-row.js';
import { PROJECTION_LIMITS } from './limits.js';
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
  /**
   * One entry per key, in key order: PendingEntry objects, or for a large record whose ops came
   * with strictly ascending keys the ops themselves (entryOf makes an entry of a hit), so a
   * 10,000-row bulk insert adds no object per row here.
   */
  readonly entries: readonly PendingEntry[] | readonly KvOp[];
  /** Each entry's key as a latin1 string (the `newest` map's key), in the order of `entries`; null: a large record, not in the map. */
  readonly texts: readonly string[] | null;
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
  /**
   * The newest pending entry of each key: a point read (every INSERT checks its key here) is one
   * lookup, not a binary search per record in flight (50 connections keep ~50 records in flight).
   */
  private newest = new Map<string, PendingEntry>();
  /** Records released since `newest` was last renewed (PROJECTION_LIMITS.churnedMapRenewDeletes). */
  private releasedSinceRenew = 0;
  /** Large records in flight: binary-searched by get(), not in `newest`. */
  private largeRecords = 0;

  constructor(
    /**
     * Records with more entries than this stay out of `newest` (get() binary-searches them): a
     * 10,000-row bulk insert would pay a key string and a map entry per row, added and deleted.
     */
    private readonly indexedEntriesMax = INDEXED_ENTRIES_MAX,
  ) {}

  get size(): number {
    return this.entryCount;
  }

  add(lsn: Lsn, ops: readonly KvOp[]): void {
    if (ops.length === 0) return;
    if (ops.length === 1 && this.indexedEntriesMax >= 1) return this.addOne(lsn, ops[0]!);
    if (ops.length > this.indexedEntriesMax && strictlyAscending(ops)) {
      this.largeRecords += 1;
      this.records.push({ lsn, entries: ops, texts: null });
      this.entryCount += ops.length;
      return;
    }
    const entries: PendingEntry[] = ops.map((op) => ({ key: op.key, value: op.type === 'put' ? op.value : null, lsn }));
    // Stable sort keeps op order among equal keys; then keep only the last op per key. Ops that
    // come sorted (a bulk insert of ascending keys into a table without indexes) need none.
    if (!strictlyAscending(entries)) entries.sort((a, b) => compareKeys(a.key, b.key));
    const unique: PendingEntry[] = [];
    for (const entry of entries) {
      const last = unique[unique.length - 1];
      if (last !== undefined && compareKeys(last.key, entry.key) === 0) unique[unique.length - 1] = entry;
      else unique.push(entry);
    }
    if (unique.length > this.indexedEntriesMax) {
      this.largeRecords += 1;
      this.records.push({ lsn, entries: unique, texts: null });
      this.entryCount += unique.length;
      return;
    }
    const texts = unique.map((entry) => latin1(entry.key));
    // Records are added in LSN order: this one's entries are the newest of their keys (among the indexed records).
    for (let i = 0; i < unique.length; i++) this.newest.set(texts[i]!, unique[i]!);
    this.records.push({ lsn, entries: unique, texts });
    this.entryCount += unique.length;
  }

  /** add() of a record with one op (a single-row insert into a table without secondary indexes): no sort, no copies. */
  private addOne(lsn: Lsn, op: KvOp): void {
    const entry: PendingEntry = { key: op.key, value: op.type === 'put' ? op.value : null, lsn };
    const text = latin1(op.key);
    this.newest.set(text, entry);
    this.records.push({ lsn, entries: [entry], texts: [text] });
    this.entryCount += 1;
  }

  /** Forgets every record at or below `applied`. */
  release(applied: Lsn): void {
    if (this.records.length === 0 || this.records[0]!.lsn > applied) return;
    const kept = this.records.filter((record) => record.lsn > applied);
    for (const record of this.records) {
      if (record.lsn > applied) continue;
      this.entryCount -= record.entries.length;
      const texts = record.texts;
      if (texts === null) {
        this.largeRecords -= 1;
        continue;
      }
      // A later record's entry for the same key stays (it is not released yet).
      for (let i = 0; i < texts.length; i++) if (this.newest.get(texts[i]!) === record.entries[i]) this.newest.delete(texts[i]!);
      this.releasedSinceRenew += 1;
    }
    this.records = kept;
    // A copy of the few keys still pending, now and then: see churnedMapRenewDeletes.
    if (this.releasedSinceRenew >= PROJECTION_LIMITS.churnedMapRenewDeletes) {
      this.releasedSinceRenew = 0;
      this.newest = new Map(this.newest);
    }
  }

  get(key: Uint8Array): PendingEntry | undefined {
    if (this.records.length === 0) return undefined;
    const indexed = this.newest.size > 0 ? this.newest.get(latin1(key)) : undefined;
    if (this.largeRecords === 0) return indexed;
    // A large record newer than the indexed hit (newest first) holds the newer op of the key.
    for (let r = this.records.length - 1; r >= 0; r--) {
      const record = this.records[r]!;
      if (indexed !== undefined && record.lsn <= indexed.lsn) break;
      if (record.texts !== null) continue;
      const at = lowerBound(record.entries, key);
      if (at < record.entries.length && compareKeys(record.entries[at]!.key, key) === 0) return entryOf(record, at);
    }
    return indexed;
  }

  /** Pending entries with gte <= key < lt, newest per key, in key order (a copy: safe across awaits). */
  range(gte: Uint8Array, lt: Uint8Array): PendingEntry[] {
    if (this.records.length === 0) return [];
    const byKey = new Map<string, PendingEntry>();
    for (const record of this.records) {
      const { entries } = record;
      for (let i = lowerBound(entries, gte); i < entries.length && compareKeys(entries[i]!.key, lt) < 0; i++) {
        byKey.set(Buffer.from(entries[i]!.key).toString('latin1'), entryOf(record, i));
      }
    }
    return [...byKey.values()].sort((a, b) => compareKeys(a.key, b.key));
  }
}

/** Records up to this many entries are indexed by key (PendingOverlay's `newest`). */
const INDEXED_ENTRIES_MAX = 64;

/** The entry at `at` of a record, made from its op when the record keeps ops. */
function entryOf(record: PendingRecord, at: number): PendingEntry {
  const entry = record.entries[at]!;
  if ('lsn' in entry) return entry;
  return { key: entry.key, value: entry.type === 'put' ? entry.value : null, lsn: record.lsn };
}

function strictlyAscending(entries: readonly { readonly key: Uint8Array }[]): boolean {
  for (let i = 1; i < entries.length; i++) if (compareKeys(entries[i - 1]!.key, entries[i]!.key) >= 0) return false;
  return true;
}

/** Index of the first entry whose key is >= key. */
function lowerBound(entries: readonly { readonly key: Uint8Array }[], key: Uint8Array): number {
  let low = 0;
  let high = entries.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compareKeys(entries[mid]!.key, key) < 0) low = mid + 1;
    else high = mid;
  }
  return low;
}
