import type { TableDef, TableId } from '../../core/catalog.js';
import type { QValue } from '../types/contract.js';

/** A decoded row (the executor's Row). */
type Row = QValue[];

/**
 * Decoded rows of whole tables, kept after a full scan so the next full scan of an unchanged table
 * reads memory instead of LevelDB (where each row costs a Node-API round of its own, ~5 µs).
 *
 * An entry stands for a table as of one row version (projections/row-versions.ts) and one table
 * definition: a write to the table's rows, or an ALTER, makes it stale, and it is dropped at the
 * next lookup. Rows are shared by every query that reads the entry: operators never change a row
 * in place. Bounded by a total row count (sqlScanCacheRowsMax), least recently used out first.
 */
/** A table's rows in primary-key order, with each row's encoded primary key. */
export interface CachedTable {
  readonly pks: readonly Uint8Array[];
  readonly rows: readonly Row[];
}

interface Entry extends CachedTable {
  readonly def: TableDef;
  readonly version: number;
}

export class ScanCache {
  private readonly entries = new Map<TableId, Entry>();
  private rowsHeld = 0;
  /** Scans served from memory, and tables cached (for tests and metrics). */
  readonly counts = { hits: 0, fills: 0 };

  constructor(readonly rowsMax: number) {}

  /** Tables and rows held now. */
  get size(): { readonly tables: number; readonly rows: number } {
    return { tables: this.entries.size, rows: this.rowsHeld };
  }

  /** The rows of `def` at `version`, or null. */
  get(def: TableDef, version: number): CachedTable | null {
    const entry = this.entries.get(def.id);
    if (!entry) return null;
    if (entry.def !== def || entry.version !== version) {
      // Stale for this reader; a newer entry replaces it when a scan completes.
      if (entry.version < version) this.drop(def.id);
      return null;
    }
    this.entries.delete(def.id);
    this.entries.set(def.id, entry);
    this.counts.hits += 1;
    return entry;
  }

  /** Whether a table of about `rowCount` rows is worth collecting while scanning. */
  admits(rowCount: number): boolean {
    return rowCount <= this.rowsMax;
  }

  put(def: TableDef, version: number, table: CachedTable): void {
    const rows = table.rows;
    if (rows.length > this.rowsMax) return;
    const current = this.entries.get(def.id);
    if (current && current.version > version) return; // a later scan already cached a newer state
    this.drop(def.id);
    while (this.rowsHeld + rows.length > this.rowsMax && this.entries.size > 0) this.drop(this.entries.keys().next().value!);
    this.entries.set(def.id, { def, version, pks: table.pks, rows });
    this.rowsHeld += rows.length;
    this.counts.fills += 1;
  }

  /** Drops the entries of tables `exists` says are gone (after DROP TABLE). */
  retain(exists: (tableId: TableId) => boolean): void {
    for (const tableId of [...this.entries.keys()]) if (!exists(tableId)) this.drop(tableId);
  }

  private drop(tableId: TableId): void {
    const entry = this.entries.get(tableId);
    if (!entry) return;
    this.entries.delete(tableId);
    this.rowsHeld -= entry.rows.length;
  }
}
