import type { TableDef, TableId } from '../../core/catalog.js';
import { decodeRowInto } from '../../core/row-codec.js';
import { keys, type KvOp, type RowWrite, type RowWriteListener } from '../../projections/index.js';
import type { QValue } from '../types/contract.js';
import { TableRows, type RowPatch } from './table-rows.js';

/** A decoded row (the executor's Row). */
type Row = QValue[];

export { TableRows } from './table-rows.js';

/**
 * Below this many changed rows, a table's entry follows writes rather than being read again (above
 * the table's own row count, reading it again costs less than decoding the writes).
 */
const PATCH_OPS_MIN = 4096;

/** The store's side of the cache: where row writes are announced (RowVersionedStore.watchRows). */
export interface RowWriteSignal {
  watchRows(listener: RowWriteListener): () => void;
}

/** A table's rows at one version. */
interface State {
  readonly version: number;
  readonly rows: TableRows;
}

interface Entry {
  readonly def: TableDef;
  /** The newest state built; null while the scan that fills the entry runs. */
  current: State | null;
  /** The version `current` stands for (or will, once filled). */
  version: number;
  /** The state before `current`, for readers whose snapshot predates the last write. */
  previous: State | null;
  /** Writes since `version`, each taking the table two versions on; applied when a reader asks. */
  readonly writes: RowWrite[];
  writeOps: number;
  /** The key and image bytes of `writes`, counted in the cache's bytes until applied or dropped. */
  writeBytes: number;
  /**
   * While the entry fills: settles when the fill ends (filled, abandoned or dropped), set only when
   * the filling scan's consumer reads every row without waiting on anything else, so that others
   * may wait for it (fillDone).
   */
  filling: { readonly done: Promise<void>; readonly settle: () => void } | null;
}

/**
 * Decoded rows of whole tables, kept after a full scan so the next scan reads memory instead of
 * LevelDB (where each row costs a Node-API round of its own, ~5 µs).
 *
 * An entry stands for a table at a row version (projections/row-versions.ts) and one definition
 * (an ALTER makes it stale). It follows writes: the store announces each write's row puts and
 * deletes as it starts, the entry keeps them, and a reader whose snapshot is at a later version gets
 * the rows with those writes applied (chunks copied on write: table-rows.ts), instead of a cold
 * read of the whole table. A write that cannot be followed (overlapping another, failed, too many
 * rows) drops the entry; the next full scan fills it again. Rows are shared by every query that
 * reads the entry: operators never change a row in place. Bounded by a total row count
 * (sqlScanCacheRowsMax) and by the bytes the chunks keep alive (sqlScanCacheBytesMax, Chunk.bytes),
 * the state before the last write counted in full, least recently used out first. A table past
 * either bound is not kept: its scans read LevelDB.
 */
export class ScanCache implements RowWriteListener {
  private readonly entries = new Map<TableId, Entry>();
  private readonly decoders = new WeakMap<TableDef, (image: Uint8Array) => Row>();
  private rowsHeld = 0;
  private bytesHeld = 0;
  private signal: RowWriteSignal | null = null;
  /**
   * Scans served from memory, tables cached, writes applied to cached tables, and aggregates
   * answered from the chunks directly (ops/aggregate-scan.ts), for tests and metrics.
   */
  readonly counts = { hits: 0, fills: 0, patches: 0, aggregates: 0 };

  constructor(
    readonly rowsMax: number,
    readonly bytesMax = Number.POSITIVE_INFINITY,
  ) {}

  /** Tables, rows and bytes held now (a state shared with the one before it counted in both). */
  get size(): { readonly tables: number; readonly rows: number; readonly bytes: number } {
    return { tables: this.entries.size, rows: this.rowsHeld, bytes: this.bytesHeld };
  }

  /** Follows the writes `signal` announces (once; the engine has one store). Until then nothing is kept. */
  follow(signal: RowWriteSignal): void {
    if (this.signal) return;
    this.signal = signal;
    signal.watchRows(this);
  }

  /** The rows of `def` at `version`, or null. */
  get(def: TableDef, version: number): TableRows | null {
    const entry = this.entries.get(def.id);
    if (!entry || entry.def !== def || entry.current === null) return null;
    const state = this.stateAt(entry, version);
    if (!state) return null;
    // Applying the writes may have dropped the entry (past a bound): its state is still this
    // version's rows for this reader, but the entry must not come back uncounted.
    if (this.entries.get(def.id) === entry) {
      this.entries.delete(def.id);
      this.entries.set(def.id, entry);
    }
    this.counts.hits += 1;
    return state.rows;
  }

  /**
   * Whether a table of about `rowCount` rows, of which `imageBytes` stored bytes were read so far, is
   * worth collecting while scanning (endFill checks the packed bytes exactly).
   */
  admits(rowCount: number, imageBytes = 0): boolean {
    return this.signal !== null && rowCount <= this.rowsMax && imageBytes <= 2 * this.bytesMax;
  }

  /**
   * Starts filling the entry of `def` at `version` (a full scan begins): writes from now on are kept
   * for it. null: another scan is filling it, or the cache does not follow writes yet.
   */
  beginFill(def: TableDef, version: number, steady = false): object | null {
    if (!this.signal) return null;
    const entry = this.entries.get(def.id);
    if (entry && entry.def === def && (entry.current === null || entry.version >= version)) return null;
    if (entry) this.drop(def.id);
    const fresh: Entry = { def, current: null, version, previous: null, writes: [], writeOps: 0, writeBytes: 0, filling: steady ? settler() : null };
    this.entries.set(def.id, fresh);
    return fresh;
  }

  /**
   * When a steady fill (beginFill's `steady`: its scan runs to the end without waiting on anything)
   * of `def` at `version` or before is under way: a promise that settles when it ends, so a reader
   * at `version` can take the rows from memory instead of reading the whole table at the same
   * time (after a restart, or a write that could not be followed, every concurrent scan would).
   * null: no such fill.
   */
  fillDone(def: TableDef, version: number): Promise<void> | null {
    const entry = this.entries.get(def.id);
    if (!entry || entry.def !== def || entry.current !== null || entry.filling === null || entry.version > version) return null;
    return entry.filling.done;
  }

  /** The scan begun by beginFill read every row (in key order): the entry can serve. */
  endFill(fill: object, pks: readonly Uint8Array[], rows: readonly Row[]): void {
    const entry = fill as Entry;
    if (this.entries.get(entry.def.id) !== entry || entry.current !== null) return; // dropped meanwhile
    if (rows.length > this.rowsMax) return this.drop(entry.def.id);
    const table = TableRows.fromSorted(pks, rows);
    if (table.bytes > this.bytesMax) return this.drop(entry.def.id);
    entry.current = { version: entry.version, rows: table };
    this.rowsHeld += table.count;
    this.bytesHeld += table.bytes;
    this.counts.fills += 1;
    settle(entry);
    this.evictFor(entry);
  }

  /** The scan begun by beginFill stopped early: forget it. */
  abandonFill(fill: object): void {
    const entry = fill as Entry;
    if (this.entries.get(entry.def.id) === entry && entry.current === null) this.drop(entry.def.id);
  }

  /**
   * The version a snapshot taken while `write` was in flight sees, found by reading (through the
   * snapshot, with `read`) a key the write changes; null when the entry cannot tell.
   */
  async versionSeen(def: TableDef, write: RowWrite, read: (pk: Uint8Array) => Promise<Uint8Array | undefined>): Promise<number | null> {
    const entry = this.entries.get(def.id);
    if (!entry || entry.def !== def || entry.current === null) return null;
    const before = this.stateAt(entry, write.from);
    if (!before) return null;
    const seen = write.from + 2;
    let probes = 0;
    for (const [pk, op] of netOps(write.ops)) {
      const had = before.rows.get(pk) !== null;
      if (op.type === 'del' && !had) continue; // the same either way
      if (++probes > PROBES_MAX) return null;
      const image = await read(pk);
      if (op.type === 'del') return image === undefined ? seen : write.from;
      if (!had) return image !== undefined ? seen : write.from;
      if (image === undefined) return null; // a row there before and after cannot be missing
      if (!sameBytes(image, op.value)) return write.from;
      // The same image before and after for this key: another key must tell.
    }
    return seen; // every key reads as the write left it
  }

  /** Drops the entries of tables `exists` says are gone (after DROP TABLE). */
  retain(exists: (tableId: TableId) => boolean): void {
    for (const tableId of [...this.entries.keys()]) if (!exists(tableId)) this.drop(tableId);
  }

  started(tableId: TableId, write: RowWrite | null): void {
    const entry = this.entries.get(tableId);
    if (!entry) return;
    const end = entry.version + 2 * entry.writes.length;
    const budget = Math.max(PATCH_OPS_MIN, entry.current?.rows.count ?? 0);
    if (write === null || write.from !== end || entry.writeOps + write.ops.length > budget) return this.drop(tableId);
    entry.writes.push(write);
    entry.writeOps += write.ops.length;
    const bytes = opsBytes(write.ops);
    entry.writeBytes += bytes;
    this.bytesHeld += bytes;
    this.evictFor(entry);
  }

  finished(tableId: TableId, _write: RowWrite | null, ok: boolean): void {
    if (!ok) this.drop(tableId);
  }

  /** The state at `version` (applying kept writes up to it), or null. */
  private stateAt(entry: Entry, version: number): State | null {
    if (entry.current === null) return null;
    // A write applied here may take the cache past a bound and drop this entry (evictFor): the
    // writes after it must not be applied, as the counters no longer include the entry.
    while (entry.version < version && entry.writes.length > 0 && this.entries.get(entry.def.id) === entry) this.applyNext(entry);
    if (entry.current.version === version) return entry.current;
    if (entry.previous?.version === version) return entry.previous;
    return null;
  }

  private applyNext(entry: Entry): void {
    const write = entry.writes.shift()!;
    entry.writeOps -= write.ops.length;
    const bytes = opsBytes(write.ops);
    entry.writeBytes -= bytes;
    this.bytesHeld -= bytes;
    const decode = this.decoderOf(entry.def);
    const changes: RowPatch[] = [];
    // The op's key may be a view of its record's buffer of all row keys: the chunks keep copies of
    // the bytes (chunk.ts), never the view, which would keep that buffer alive.
    for (const [pk, op] of netOps(write.ops)) changes.push({ pk, row: op.type === 'put' ? decode(op.value) : null });
    const current = entry.current!;
    const next: State = { version: write.from + 2, rows: current.rows.patched(changes) };
    this.rowsHeld += next.rows.count - (entry.previous?.rows.count ?? 0);
    this.bytesHeld += next.rows.bytes - (entry.previous?.rows.bytes ?? 0);
    entry.previous = current;
    entry.current = next;
    entry.version = next.version;
    this.counts.patches += 1;
    this.evictFor(entry);
  }

  private decoderOf(def: TableDef): (image: Uint8Array) => Row {
    let decode = this.decoders.get(def);
    if (!decode) {
      const ids = def.columns.map((c) => c.id);
      const missing = def.columns.map((c) => c.missingValue);
      decode = (image) => decodeRowInto(image, ids, missing) as Row;
      this.decoders.set(def, decode);
    }
    return decode;
  }

  /** Makes room for `keep`'s rows: older states first, then least recently used tables. */
  private evictFor(keep: Entry): void {
    if (this.within()) return;
    if (keep.previous) {
      this.rowsHeld -= keep.previous.rows.count;
      this.bytesHeld -= keep.previous.rows.bytes;
      keep.previous = null;
    }
    for (const [tableId, entry] of this.entries) {
      if (this.within()) return;
      if (entry !== keep) this.drop(tableId);
    }
    if (!this.within()) this.drop(keep.def.id);
  }

  private within(): boolean {
    return this.rowsHeld <= this.rowsMax && this.bytesHeld <= this.bytesMax;
  }

  private drop(tableId: TableId): void {
    const entry = this.entries.get(tableId);
    if (!entry) return;
    settle(entry);
    this.entries.delete(tableId);
    this.rowsHeld -= (entry.current?.rows.count ?? 0) + (entry.previous?.rows.count ?? 0);
    this.bytesHeld -= (entry.current?.rows.bytes ?? 0) + (entry.previous?.rows.bytes ?? 0) + entry.writeBytes;
  }
}

function settler(): { readonly done: Promise<void>; readonly settle: () => void } {
  let settle!: () => void;
  const done = new Promise<void>((resolve) => (settle = resolve));
  return { done, settle };
}

/** Wakes whoever waits for the entry's fill (fillDone), once. */
function settle(entry: Entry): void {
  entry.filling?.settle();
  entry.filling = null;
}

/** The bytes of a write's keys and images (what its ops keep alive while they wait, at the least). */
function opsBytes(ops: readonly KvOp[]): number {
  let bytes = 0;
  for (const op of ops) bytes += op.key.length + (op.type === 'put' ? op.value.length : 0);
  return bytes;
}

/** Keys one resolution of a write in flight may read before giving up (see versionSeen). */
const PROBES_MAX = 16;

/** A write's last op per primary key, sorted by key (a batch applies its ops in order: the last wins). */
function netOps(ops: readonly KvOp[]): [Uint8Array, KvOp][] {
  const byKey = new Map<string, [Uint8Array, KvOp]>();
  for (const op of ops) {
    const pk = keys.pkOfRowKey(op.key);
    byKey.set(Buffer.from(pk.buffer, pk.byteOffset, pk.byteLength).toString('latin1'), [pk, op]);
  }
  const out = [...byKey.values()];
  out.sort((a, b) => Buffer.compare(a[0], b[0]));
  return out;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}
