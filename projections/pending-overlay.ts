import type { Lsn } from '../core/units.js';
import { compareKeys } from '../core/key-encoding.js';
import type { KvOp } from './state-store.js';

export interface PendingEntry {
  readonly key: Uint8Array;
  /** null: deleted by a pending record. */
  readonly value: Uint8Array | null;
  readonly lsn: Lsn;
}

const hashKey = (key: Uint8Array): string => Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('latin1');

/**
 * The key/value effects of records appended to the log but not yet applied by the tables
 * projection. The writer validates against "store + overlay", so a transaction sees every change
 * acknowledged before it even while group commit and apply are still running.
 *
 * Entries are dropped once the projection has applied their LSN. Reading the overlay before the
 * store is therefore safe: an entry disappears only after the store has it.
 */
export class PendingOverlay {
  private readonly entries = new Map<string, PendingEntry>();
  private readonly keysByLsn = new Map<Lsn, string[]>();

  get size(): number {
    return this.entries.size;
  }

  add(lsn: Lsn, ops: readonly KvOp[]): void {
    const keys: string[] = [];
    for (const op of ops) {
      const hashed = hashKey(op.key);
      this.entries.set(hashed, { key: op.key, value: op.type === 'put' ? op.value : null, lsn });
      keys.push(hashed);
    }
    this.keysByLsn.set(lsn, keys);
  }

  /** Forgets every entry written by a record at or below `applied`. */
  release(applied: Lsn): void {
    for (const [lsn, keys] of this.keysByLsn) {
      if (lsn > applied) continue;
      for (const hashed of keys) {
        if (this.entries.get(hashed)?.lsn === lsn) this.entries.delete(hashed);
      }
      this.keysByLsn.delete(lsn);
    }
  }

  get(key: Uint8Array): PendingEntry | undefined {
    return this.entries.get(hashKey(key));
  }

  /** Pending entries with gte <= key < lt, in key order (a copy: safe across awaits). */
  range(gte: Uint8Array, lt: Uint8Array): PendingEntry[] {
    if (this.entries.size === 0) return [];
    const found: PendingEntry[] = [];
    for (const entry of this.entries.values()) {
      if (compareKeys(entry.key, gte) >= 0 && compareKeys(entry.key, lt) < 0) found.push(entry);
    }
    return found.sort((a, b) => compareKeys(a.key, b.key));
  }
}
