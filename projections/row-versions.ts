import type { TableId } from '../core/catalog.js';
import { KeySpace } from './keys.js';
import type { KvOp, RangeOptions, StateStore, StoreSnapshot } from './state-store.js';

/**
 * A StateStore that counts writes to each table's rows, so the query layer can cache what a
 * full scan read and know whether a later snapshot would read the same (query/exec/scan-cache.ts).
 *
 * A table's version is even while no write to its rows is in flight and odd while one is, like a
 * seqlock: a snapshot taken during a write may or may not see it, so nothing cached stands for
 * such a snapshot. Versions live in memory only; after a restart every table starts at 0 with an
 * empty cache.
 */
export class RowVersionedStore implements StateStore {
  /** Replaced, never changed: a snapshot keeps the map of its moment. */
  private versions: ReadonlyMap<TableId, number> = new Map();
  private readonly writesInFlight = new Map<TableId, number>();

  constructor(private readonly inner: StateStore) {}

  get(key: Uint8Array, snapshot?: StoreSnapshot): Promise<Uint8Array | undefined> {
    return this.inner.get(key, innerOf(snapshot));
  }

  getMany(keys: readonly Uint8Array[], snapshot?: StoreSnapshot): Promise<(Uint8Array | undefined)[]> {
    return this.inner.getMany(keys, innerOf(snapshot));
  }

  entries(range: RangeOptions): AsyncIterable<[Uint8Array, Uint8Array][]> {
    const { snapshot, ...rest } = range;
    const inner = innerOf(snapshot);
    return this.inner.entries(inner ? { ...rest, snapshot: inner } : rest);
  }

  async write(ops: readonly KvOp[]): Promise<void> {
    const tables = rowTablesOf(ops);
    if (tables.size === 0) return this.inner.write(ops);
    this.count(tables, +1);
    try {
      await this.inner.write(ops);
    } finally {
      this.count(tables, -1);
    }
  }

  sync(): Promise<void> {
    return this.inner.sync();
  }

  isOpen(): boolean {
    return this.inner.isOpen();
  }

  snapshot(): StoreSnapshot {
    const inner = this.inner.snapshot();
    const snapshot: VersionedSnapshot = { inner, versions: this.versions, close: () => inner.close() };
    return snapshot;
  }

  /**
   * The version of a table's rows as `snapshot` sees them, or null when a write to them was in
   * flight when the snapshot was taken (or the snapshot is not one of this store's).
   */
  rowVersion(snapshot: StoreSnapshot, tableId: TableId): number | null {
    if (!isVersioned(snapshot)) return null;
    const version = snapshot.versions.get(tableId) ?? 0;
    return version % 2 === 0 ? version : null;
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private count(tables: ReadonlySet<TableId>, delta: 1 | -1): void {
    const next = new Map(this.versions);
    for (const tableId of tables) {
      const inFlight = (this.writesInFlight.get(tableId) ?? 0) + delta;
      if (inFlight === 0) this.writesInFlight.delete(tableId);
      else this.writesInFlight.set(tableId, inFlight);
      // First write in flight: odd; last one done: even again.
      if ((delta === 1 && inFlight === 1) || (delta === -1 && inFlight === 0)) next.set(tableId, (next.get(tableId) ?? 0) + 1);
    }
    this.versions = next;
  }
}

interface VersionedSnapshot extends StoreSnapshot {
  readonly inner: StoreSnapshot;
  readonly versions: ReadonlyMap<TableId, number>;
}

function isVersioned(snapshot: StoreSnapshot): snapshot is VersionedSnapshot {
  return 'versions' in snapshot && 'inner' in snapshot;
}

function innerOf(snapshot: StoreSnapshot | undefined): StoreSnapshot | undefined {
  return snapshot && isVersioned(snapshot) ? snapshot.inner : snapshot;
}

/** Tables whose rows `ops` change (row keys are KeySpace.Row, then the table id, big-endian). */
function rowTablesOf(ops: readonly KvOp[]): Set<TableId> {
  const tables = new Set<TableId>();
  let last = -1;
  for (const op of ops) {
    const key = op.key;
    if (key[0] !== KeySpace.Row || key.length < 5) continue;
    const tableId = ((key[1]! << 24) | (key[2]! << 16) | (key[3]! << 8) | key[4]!) >>> 0;
    if (tableId !== last) tables.add(tableId as TableId);
    last = tableId;
  }
  return tables;
}
