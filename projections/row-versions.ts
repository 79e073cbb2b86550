import type { TableId } from '../core/catalog.js';
import { CachedRow, DROPPED, entryBytes, droppedSlotBytes, latin1, type MemoAccount } from './cached-row.js';
import { KeySpace } from './keys.js';
import { PROJECTION_LIMITS } from './limits.js';
import type { GetManyOptions, KvOp, PreparedWrite, RangeOptions, StateStore, StoreSnapshot } from './state-store.js';

/**
 * A StateStore that counts writes to each table's rows, so the query layer can cache what a
 * full scan read and know whether a later snapshot would read the same (query/exec/scan-cache.ts).
 *
 * A table's version is even while no write to its rows is in flight and odd while one is, like a
 * seqlock: a snapshot taken during a write may or may not see it, so nothing cached stands for
 * such a snapshot. Versions live in memory only; after a restart every table starts at 0 with an
 * empty cache.
 *
 * Listeners (watchRows) are told each write's row changes as it starts, so a cache can move to the
 * next version instead of reading the table again; a snapshot taken while exactly one write to a
 * table is in flight keeps that write (rowWriteInFlight), so its reader can find out, by reading one
 * of the write's keys, which of the two versions it sees (a LevelDB batch is atomic).
 */
export class RowVersionedStore implements StateStore {
  /** Replaced, never changed: a snapshot keeps the map of its moment. */
  private versions: ReadonlyMap<TableId, number> = new Map();
  private readonly writesInFlight = new Map<TableId, number>();
  /** The one write in flight per table (null: several overlap); replaced, never changed, as `versions`. */
  private inFlight: ReadonlyMap<TableId, RowWrite | null> = new Map();
  private readonly listeners = new Set<RowWriteListener>();
  /** Snapshots whose LevelDB snapshot is not taken yet (LazySnapshot): taken before the next write. */
  private readonly unopened = new Set<LazySnapshot>();

  /** The inner store's synchronous point read (a read of the current state: versions play no part). */
  readonly getSync?: (key: Uint8Array) => Uint8Array | undefined;
  /** Rows read by getRowSync, per table, by row key (as latin1 text). */
  private readonly rowCache = new Map<TableId, Map<string, CachedRow>>();
  private rowCacheBytes = 0;

  /** The inner store's memoryBytes (LevelDB's own caches). */
  readonly memoryBytes?: () => number;

  constructor(
    private readonly inner: StateStore,
    private readonly rowCacheBytesMax: number = PROJECTION_LIMITS.pointCacheBytesMax,
  ) {
    if (inner.prepare) this.prepare = (ops) => inner.prepare!(ops);
    if (inner.memoryBytes) this.memoryBytes = inner.memoryBytes;
    if (inner.getSync) {
      this.getSync = inner.getSync;
      this.getRowSync = (tableId, key, name) => this.cachedRow(tableId, key, name ?? latin1(key));
      this.getRowSyncByName = (tableId, name) => this.cachedRowByName(tableId, name);
    }
  }

  /**
   * getSync of one row key of `tableId` (keys.rowKey), remembered until a write to the table's rows
   * changes that key: a point read by primary key then costs one Map lookup instead of a LevelDB read.
   * Never stale: a write's keys leave the cache when the write starts (start()), and while a write
   * to the table is in flight nothing is read from or added to its cache (the store is changing).
   * The entry is shared by every caller that reads the key: read its image, never change it; its
   * memo slot keeps what one reader made of the image (CachedRow). Absent where getSync is.
   * `name`, when given, must be latin1(key): a caller that made it for its own use passes it on.
   */
  readonly getRowSync?: (tableId: TableId, key: Uint8Array, name?: string) => CachedRow;

  /**
   * getRowSync of the row key whose latin1 text (the cache's own key for it) is `name`: a caller
   * that kept that text skips making it; the key's bytes are made only when the store is read.
   */
  readonly getRowSyncByName?: (tableId: TableId, name: string) => CachedRow;

  private cachedRowByName(tableId: TableId, name: string): CachedRow {
    const known = this.writesInFlight.has(tableId) ? undefined : this.rowCache.get(tableId)?.get(name);
    return known !== undefined && known !== DROPPED ? known : this.cachedRow(tableId, Buffer.from(name, 'latin1'), name);
  }

  private cachedRow(tableId: TableId, key: Uint8Array, name: string): CachedRow {
    const getSync = this.getSync!;
    // A row read while the table changes is not kept (its memo slot dies with it).
    if (this.writesInFlight.has(tableId)) return new CachedRow(getSync(key));
    let table = this.rowCache.get(tableId);
    const known = table?.get(name);
    if (known !== undefined && known !== DROPPED) return known;
    const entry = new CachedRow(getSync(key), this.memoAccount);
    const bytes = entryBytes(key.length, entry);
    let slotDropped = known === DROPPED;
    if (this.rowCacheBytes + bytes > this.rowCacheBytesMax) {
      this.makeRoom(bytes);
      // The key's dropped slot (and the table's map) may have gone with the oldest entries.
      table = this.rowCache.get(tableId);
      slotDropped &&= table?.get(name) === DROPPED;
    }
    // A dropped slot becomes this entry (set over in place: see DROPPED); it is counted as the entry from now on.
    if (slotDropped) this.rowCacheBytes -= droppedSlotBytes(key.length);
    if (table === undefined) this.rowCache.set(tableId, (table = new Map()));
    table.set(name, entry);
    this.rowCacheBytes += bytes;
    return entry;
  }

  /** Memos count against the bound as they are made (CachedRow.remember): past it, the oldest entries go (makeRoom). */
  private readonly memoAccount: MemoAccount = {
    memoChanged: (deltaBytes) => {
      this.rowCacheBytes += deltaBytes;
      if (this.rowCacheBytes > this.rowCacheBytesMax) this.makeRoom(0);
    },
  };

  /**
   * Makes room for `bytes` more by dropping the oldest entries (a Map's order: first cached first,
   * tables in the order their first row was cached) until the cache, with them, is at ROOM_KEPT of
   * its bound. It used to drop every entry at once: a working set near the bound was then read from
   * the store again about half of the time (every entry went each time the bound was reached); a
   * quarter at a time keeps three quarters to all of it. Dropped entries stop counting their memos,
   * as startOver's do (a reader may still hold one).
   */
  private makeRoom(bytes: number): void {
    const target = this.rowCacheBytesMax * ROOM_KEPT - bytes;
    for (const [tableId, table] of this.rowCache) {
      for (const [name, entry] of table) {
        if (this.rowCacheBytes <= target) return;
        this.dropped(name, entry);
        table.delete(name);
      }
      this.rowCache.delete(tableId);
    }
    // Everything went: nothing is counted (as after startOver).
    this.rowCacheBytes = 0;
  }

  /** Drops every cached row (their memos are no longer counted: a reader may still hold one). */
  private startOver(): void {
    for (const table of this.rowCache.values()) for (const entry of table.values()) if (entry !== DROPPED) entry.account = null;
    this.rowCache.clear();
    this.rowCacheBytes = 0;
  }

  /** Entries and bytes the point-read cache holds (tests, stats). */
  rowCacheSize(): { readonly rows: number; readonly bytes: number } {
    let rows = 0;
    for (const table of this.rowCache.values()) for (const entry of table.values()) if (entry !== DROPPED) rows++;
    return { rows, bytes: this.rowCacheBytes };
  }

  /** Drops the cached images of the keys a write changes (all of the table's when its ops are not known). */
  private forgetRows(tableId: TableId, ops: readonly KvOp[] | null): void {
    const table = this.rowCache.get(tableId);
    if (table === undefined) return;
    if (ops === null) {
      for (const [name, entry] of table) this.dropped(name, entry);
      this.rowCache.delete(tableId);
      return;
    }
    for (const op of ops) {
      const name = latin1(op.key);
      const entry = table.get(name);
      if (entry === undefined || entry === DROPPED) continue;
      this.dropped(name, entry);
      this.rowCacheBytes += droppedSlotBytes(name.length);
      table.set(name, DROPPED);
    }
  }

  /** An entry leaves the cache: its bytes and its memo's are no longer counted. */
  private dropped(name: string, entry: CachedRow): void {
    if (entry === DROPPED) {
      this.rowCacheBytes -= droppedSlotBytes(name.length);
      return;
    }
    this.rowCacheBytes -= entryBytes(name.length, entry) + entry.memoBytes;
    entry.account = null;
  }

  get(key: Uint8Array, snapshot?: StoreSnapshot): Promise<Uint8Array | undefined> {
    return this.inner.get(key, innerOf(snapshot));
  }

  getMany(keys: readonly Uint8Array[], snapshot?: StoreSnapshot, options?: GetManyOptions): Promise<(Uint8Array | undefined)[]> {
    return this.inner.getMany(keys, innerOf(snapshot), options);
  }

  entries(range: RangeOptions): AsyncIterable<[Uint8Array, Uint8Array][]> {
    const { snapshot, ...rest } = range;
    const inner = innerOf(snapshot);
    return this.inner.entries(inner ? { ...rest, snapshot: inner } : rest);
  }

  async write(ops: readonly KvOp[], prepared?: PreparedWrite): Promise<void> {
    this.openPending();
    const tables = rowOpsByTable(ops, this.listeners.size > 0 || this.rowCache.size > 0);
    if (tables.size === 0) return this.inner.write(ops, prepared);
    const writes = this.start(tables);
    let ok = false;
    try {
      await this.inner.write(ops, prepared);
      ok = true;
    } finally {
      this.finish(writes, ok);
    }
  }

  /** The inner store's prepare (absent when it has none). */
  readonly prepare?: (ops: readonly KvOp[]) => PreparedWrite;

  /** Calls `listener` for every write to rows from now on; returns the function that stops it. */
  watchRows(listener: RowWriteListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The one write to a table's rows that was in flight when `snapshot` was taken (the snapshot sees
   * either all of it or none), or null: no write, several, or not one of this store's snapshots.
   */
  rowWriteInFlight(snapshot: StoreSnapshot, tableId: TableId): RowWrite | null {
    if (!isVersioned(snapshot)) return null;
    return snapshot.inFlight.get(tableId) ?? null;
  }

  /** Whether a write to the table's rows is in flight (getRowSync then reads the changing store, uncached). */
  rowWritesInFlight(tableId: TableId): boolean {
    return this.writesInFlight.has(tableId);
  }

  sync(): Promise<void> {
    return this.inner.sync();
  }

  isOpen(): boolean {
    return this.inner.isOpen();
  }

  /**
   * A snapshot of the store now. Its LevelDB snapshot is taken when first read through, or before
   * the next write starts, whichever comes first: until a write starts the store holds what it
   * held now, so a statement answered from the scan cache alone (row versions only) never takes one.
   */
  snapshot(): StoreSnapshot {
    const snapshot = new LazySnapshot(this.inner, this.unopened, this.versions, this.inFlight);
    this.unopened.add(snapshot);
    return snapshot;
  }

  /** Takes the LevelDB snapshots not taken yet: a write is about to change what they would see. */
  private openPending(): void {
    if (this.unopened.size === 0) return;
    for (const snapshot of this.unopened) snapshot.open();
    this.unopened.clear();
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
    this.unopened.clear();
    this.startOver();
    return this.inner.close();
  }

  /** Marks the tables' versions odd and tells the listeners; returns each table's write (null: overlapping). */
  private start(tables: ReadonlyMap<TableId, KvOp[]>): Map<TableId, RowWrite | null> {
    // Before anything else: once the batch may be applied, no cached image of its keys may be served.
    const collected = this.listeners.size > 0 || this.rowCache.size > 0;
    for (const [tableId, ops] of tables) this.forgetRows(tableId, collected ? ops : null);
    const next = new Map(this.versions);
    const inFlight = new Map(this.inFlight);
    const writes = new Map<TableId, RowWrite | null>();
    for (const [tableId, ops] of tables) {
      const count = (this.writesInFlight.get(tableId) ?? 0) + 1;
      this.writesInFlight.set(tableId, count);
      const version = next.get(tableId) ?? 0;
      // The first write in flight makes the version odd; one that overlaps it changes nothing more.
      // Without listeners the ops were not collected: the write is unknown (null), as an overlapping one.
      const write = count === 1 && this.listeners.size > 0 ? { tableId, from: version, ops } : null;
      if (count === 1) next.set(tableId, version + 1);
      inFlight.set(tableId, write);
      writes.set(tableId, write);
    }
    this.versions = next;
    this.inFlight = inFlight;
    for (const listener of this.listeners) for (const [tableId, write] of writes) listener.started(tableId, write);
    return writes;
  }

  /** The last write in flight done: the version is even again. */
  private finish(writes: ReadonlyMap<TableId, RowWrite | null>, ok: boolean): void {
    const next = new Map(this.versions);
    const inFlight = new Map(this.inFlight);
    for (const tableId of writes.keys()) {
      const count = this.writesInFlight.get(tableId)! - 1;
      if (count > 0) {
        this.writesInFlight.set(tableId, count);
        inFlight.set(tableId, null);
        continue;
      }
      this.writesInFlight.delete(tableId);
      inFlight.delete(tableId);
      next.set(tableId, next.get(tableId)! + 1);
    }
    this.versions = next;
    this.inFlight = inFlight;
    for (const listener of this.listeners) for (const [tableId, write] of writes) listener.finished(tableId, write, ok);
  }
}

/** The row changes of one write to one table: it takes the table from version `from` to `from + 2`. */
export interface RowWrite {
  readonly tableId: TableId;
  /** The (even) version before the write. */
  readonly from: number;
  /** The write's puts and deletes of the table's row keys, in the order the batch applies them. */
  readonly ops: readonly KvOp[];
}

/** Told of every write to rows (RowVersionedStore.watchRows), synchronously, in order. */
export interface RowWriteListener {
  /** A write starts; `write` null: it overlaps another write to the table (neither can be told apart). */
  started(tableId: TableId, write: RowWrite | null): void;
  /** A write is done; `ok` false: it failed, and what the store holds for the table is unknown. */
  finished(tableId: TableId, write: RowWrite | null, ok: boolean): void;
}

/**
 * The row versions of one moment, and the inner store's snapshot of that moment, taken lazily:
 * writes to the inner store go through RowVersionedStore.write, which takes every pending one
 * first, so a late one still sees what the store held when this was made.
 */
class LazySnapshot implements StoreSnapshot {
  private taken: StoreSnapshot | null = null;
  private closed = false;

  constructor(
    private readonly store: StateStore,
    private readonly unopened: Set<LazySnapshot>,
    readonly versions: ReadonlyMap<TableId, number>,
    readonly inFlight: ReadonlyMap<TableId, RowWrite | null>,
  ) {}

  /** The inner store's snapshot (taken now if not yet). */
  get inner(): StoreSnapshot {
    if (this.taken === null) {
      this.unopened.delete(this);
      this.open();
    }
    return this.taken!;
  }

  /** Takes the inner snapshot if not yet (a closed one is taken and closed at once: reading through it fails as through any closed snapshot). */
  open(): void {
    if (this.taken !== null) return;
    this.taken = this.store.snapshot();
    if (this.closed) void this.taken.close();
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    this.unopened.delete(this);
    return this.taken === null ? Promise.resolve() : this.taken.close();
  }
}

function isVersioned(snapshot: StoreSnapshot): snapshot is LazySnapshot {
  return snapshot instanceof LazySnapshot;
}

function innerOf(snapshot: StoreSnapshot | undefined): StoreSnapshot | undefined {
  return snapshot && isVersioned(snapshot) ? snapshot.inner : snapshot;
}

/** The share of the point-read cache's bound kept when it is full (makeRoom): the oldest quarter goes. */
const ROOM_KEPT = 0.75;

/**
 * The ops of `ops` on each table's rows (row keys are KeySpace.Row, then the table id, big-endian);
 * without `collect`, only which tables (nobody listens for the ops themselves).
 */
function rowOpsByTable(ops: readonly KvOp[], collect: boolean): Map<TableId, KvOp[]> {
  const tables = new Map<TableId, KvOp[]>();
  let last = -1;
  let lastOps: KvOp[] = [];
  for (const op of ops) {
    const key = op.key;
    if (key[0] !== KeySpace.Row || key.length < 5) continue;
    const tableId = ((key[1]! << 24) | (key[2]! << 16) | (key[3]! << 8) | key[4]!) >>> 0;
    if (tableId !== last) {
      let own = tables.get(tableId as TableId);
      if (!own) tables.set(tableId as TableId, (own = []));
      lastOps = own;
      last = tableId;
    }
    if (collect) lastOps.push(op);
  }
  return tables;
}
