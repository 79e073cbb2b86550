/**
 * The unique-index checks of one table's writes within a DML statement (writer.ts TableWriter holds
 * the rest: NOT NULL, CHECK, the primary key). A row's key on each unique secondary index must be
 * held by no other row, as this statement sees the table: its own changes first (the index keys of
 * the rows it wrote), then what prefetch read ahead, then the stored index.
 */
import type { IndexDef, TableDef } from '../../core/catalog.js';
import { compareKeys, encodeKey } from '../../core/key-encoding.js';
import type { SqlValue } from '../../core/values.js';
import type { WriteView } from '../../projections/index.js';
import type { QValue } from '../types/contract.js';
import { LIMITS } from '../limits.js';
import { uniqueViolation } from './errors.js';
import { keyBytes, keyText } from '../../core/key-text.js';
import { scanIndex } from './read-ahead.js';
import type { UniqueIndex } from './table-shape.js';

const { dmlPrefetchProbesInFlightMax } = LIMITS;

/**
 * What the checks need of their table's writer (writer.ts TableWriter). An interface of this file's
 * own: the writer imports this file, never the other way (test/architecture.test.ts refuses cycles).
 */
export interface UniqueHost {
  readonly def: TableDef;
  /** pk keyText -> image (null: deleted) for rows changed by this statement. */
  readonly pending: Map<string, Uint8Array | null>;
  /** `(a, b)=(1, 2)` for an error's detail. */
  describeKey(positions: readonly number[], values: readonly QValue[]): string;
}

/** One statement's unique-index checks for one table with at least one unique secondary index. */
export class UniqueChecks {
  /** Unique index id -> index keyText -> pk keyText of rows this statement wrote (made at first use). */
  private pendingUniqueMap: Map<number, Map<string, string>> | null = null;
  private get pendingUnique(): Map<number, Map<string, string>> {
    return (this.pendingUniqueMap ??= new Map());
  }

  /** Unique index id -> index keyText -> pks holding that key before this statement (read ahead by prefetch); made at first use. */
  private knownIndexMap: Map<number, Map<string, Uint8Array[]>> | null = null;
  private get knownIndex(): Map<number, Map<string, Uint8Array[]>> {
    return (this.knownIndexMap ??= new Map());
  }

  constructor(
    private readonly uniques: readonly UniqueIndex[],
    private readonly host: UniqueHost,
    private readonly view: WriteView,
  ) {}

  /** Reads ahead which rows hold the proposed rows' keys of each unique index `touches` accepts (TableWriter.prefetch). */
  prefetch(rows: readonly (readonly QValue[])[], touches: (positions: readonly number[]) => boolean): Promise<unknown> {
    return Promise.all(this.uniques.filter((u) => touches(u.positions)).map((u) => this.prefetchIndex(u, rows)));
  }

  private async prefetchIndex(u: UniqueIndex, rows: readonly (readonly QValue[])[]): Promise<void> {
    let known = this.knownIndex.get(u.index.id);
    if (!known) this.knownIndex.set(u.index.id, (known = new Map()));
    const fresh = new Map<string, Uint8Array>();
    for (const r of rows) {
      const ik = this.indexKey(u, r);
      if (ik && !known.has(keyText(ik))) fresh.set(keyText(ik), ik);
    }
    const found = new Map<string, Uint8Array[]>();
    const todo = await scanIndex(this.view, u.index.id, [...fresh.values()].sort(compareKeys), found);
    const probe = async (): Promise<void> => {
      for (let next = todo.pop(); next; next = todo.pop()) {
        const pks: Uint8Array[] = [];
        for await (const batch of this.view.indexEntries(u.index.id, next[1])) pks.push(...batch);
        found.set(next[0], pks);
      }
    };
    await Promise.all(Array.from({ length: Math.min(dmlPrefetchProbesInFlightMax, todo.length) }, probe));
    for (const [k, pks] of found) known.set(k, pks);
  }

  /** The row `values` (primary key text `k`) was written by this statement: it now holds its unique keys. */
  record(values: readonly QValue[], k: string): void {
    for (const u of this.uniques) {
      const ik = this.indexKey(u, values);
      if (!ik) continue;
      let map = this.pendingUnique.get(u.index.id);
      if (!map) this.pendingUnique.set(u.index.id, (map = new Map()));
      map.set(keyText(ik), k);
    }
  }

  /** The row `values` (primary key text `k`) is being changed or deleted: it no longer holds the unique keys it held. */
  forget(k: string, values: readonly QValue[]): void {
    for (const u of this.uniques) {
      const ik = this.indexKey(u, values);
      const map = this.pendingUnique.get(u.index.id);
      if (ik && map?.get(keyText(ik)) === k) map.delete(keyText(ik));
    }
  }

  private indexKey(u: UniqueIndex, values: readonly QValue[]): Uint8Array | null {
    const keyValues = u.positions.map((p) => values[p] as SqlValue);
    if (keyValues.some((v) => v === null)) return null;
    return encodeKey(u.types, keyValues, u.index.descending);
  }

  /**
   * Refuses the row `values` (to be stored under `key`; an update's `oldKey` is its row's key
   * before) when another row holds one of its unique keys. `changed` (UPDATE): whether the
   * statement changes any of these column positions; an index whose columns and row key stay is
   * not checked.
   */
  async check(values: readonly QValue[], key: Uint8Array, oldKey: Uint8Array | null, changed?: (p: readonly number[]) => boolean): Promise<void> {
    for (const u of this.uniques) {
      if (changed && !changed(u.positions) && oldKey && keyText(oldKey) === keyText(key)) continue;
      const conflict = await this.findByIndex(u, values, [key, ...(oldKey ? [oldKey] : [])]);
      if (conflict) throw uniqueViolation(this.host.def.name, u.index.name, this.host.describeKey(u.positions, values));
    }
  }

  /** ON CONFLICT on a unique secondary index: the existing row whose key on `index` equals the proposed row's. */
  conflicting(index: IndexDef, values: readonly QValue[]): Promise<Uint8Array | null> | null {
    const u = this.uniques.find((x) => x.index.id === index.id);
    return u ? this.findByIndex(u, values, []) : null;
  }

  /** A row (other than `exclude`) holding the same unique key, as this statement sees it. */
  private async findByIndex(u: UniqueIndex, values: readonly QValue[], exclude: readonly Uint8Array[]): Promise<Uint8Array | null> {
    const ik = this.indexKey(u, values);
    if (!ik) return null;
    const skip = new Set(exclude.map(keyText));
    const local = this.pendingUnique.get(u.index.id)?.get(keyText(ik));
    if (local && !skip.has(local)) return keyBytes(local);
    const visible = (pk: Uint8Array): boolean => {
      const k = keyText(pk);
      return !skip.has(k) && !this.host.pending.has(k); // changed by this statement: pendingUnique knows its key
    };
    const known = this.knownIndex.get(u.index.id)?.get(keyText(ik));
    if (known) return known.find(visible) ?? null;
    for await (const batch of this.view.indexEntries(u.index.id, ik)) {
      for (const pk of batch) if (visible(pk)) return pk;
    }
    return null;
  }
}
