import type { ColumnId, IndexDef, IndexId, TableDef, TableId } from '../core/catalog.js';
import { assert } from '../core/errors.js';
import { encodeKey } from '../core/key-encoding.js';
import { decodeRowInto } from '../core/row-codec.js';
import type { SqlType, SqlValue } from '../core/values.js';

/** A secondary btree index compiled for the write path: row image -> index key. */
export interface CompiledIndex {
  readonly tableId: TableId;
  readonly def: IndexDef;
  /** Encodes the index key of a row image. */
  keyOf(image: Uint8Array): Uint8Array;
}

export interface TableStats {
  rowCount: number;
  sizeBytes: number;
  indexSizeBytes: number;
}

/** A table and what the apply path derives from it once (not per row). */
export interface TableEntry {
  readonly def: TableDef;
  /** Secondary btree indexes (the primary key is the row key itself). */
  readonly btreeIndexes: readonly CompiledIndex[];
  readonly stats: TableStats;
}

/** A catalog object other than a table (a CDC stream, a webhook), as applied from the log. */
export interface CatalogObject {
  readonly objectKind: string;
  readonly tenant: string;
  readonly name: string;
  /** JSON text of the definition, as the writer put it. */
  readonly definition: string;
  /** LSN of the record that created it (a put of an existing name keeps the first one's). */
  readonly createdLsn: number;
  /** LSN of the record that last put it. */
  readonly updatedLsn: number;
  /** Its first change-event sequence (the put that created it), for snapshot numbering. */
  readonly createdSequence: bigint;
  /** Rows copied for its snapshot (0: none); see TablesProjection. */
  readonly snapshotRows: bigint;
}

export const objectKey = (objectKind: string, tenant: string, name: string): string => `${objectKind}\u0000${tenant}\u0000${name}`;

export const qualifiedName = (tenant: string, schema: string, name: string): string => `${tenant}\u0000${schema}\u0000${name}`;

/** The largest ids ever used (dropped ones included), as the tables projection stores them: column ids per table id. */
export interface HighIds {
  readonly tableId: number;
  readonly indexId: number;
  readonly columns: Readonly<Record<string, number>>;
}

/**
 * The in-memory catalog as of the store's applied offset: tables, indexes, sequences and
 * statistics. Only the tables projection mutates it, while applying log records.
 */
export class CatalogState {
  private readonly tablesById = new Map<TableId, TableEntry>();
  private readonly tableIdsByName = new Map<string, TableId>();
  private readonly indexesById = new Map<IndexId, CompiledIndex>();
  private readonly sequences = new Map<string, bigint>();
  private readonly objectsByKey = new Map<string, CatalogObject>();
  /** The highest ids ever put (they never go down; kept by the tables projection). */
  private highTableId = 0;
  private highIndexId = 0;
  /** Per table id, the largest column id it ever had (a Map: a load puts every table, an object copied per put would be quadratic). */
  private readonly highColumnIds = new Map<TableId, number>();
  /** idsHigh as last built; null after a change. */
  private highIdsView: HighIds | null = null;

  table(tableId: TableId): TableEntry | undefined {
    return this.tablesById.get(tableId);
  }

  tableByName(tenant: string, schema: string, name: string): TableEntry | undefined {
    // Requests name the same table again and again (GET row, POST rows): compared with the last name
    // found, without building the qualified name (a new string per request) and hashing it.
    const last = this.lastByName;
    if (last !== null && last.name === name && last.schema === schema && last.tenant === tenant) return this.tablesById.get(last.id);
    const id = this.tableIdsByName.get(qualifiedName(tenant, schema, name));
    if (id === undefined) return undefined;
    this.lastByName = { tenant, schema, name, id };
    return this.tablesById.get(id);
  }

  /** tableByName's last name found and its table's id; forgotten whenever a name is set or dropped (the map changes). */
  private lastByName: { readonly tenant: string; readonly schema: string; readonly name: string; readonly id: TableId } | null = null;

  tables(): IterableIterator<TableEntry> {
    return this.tablesById.values();
  }

  index(indexId: IndexId): CompiledIndex | undefined {
    return this.indexesById.get(indexId);
  }

  sequence(name: string): bigint | undefined {
    return this.sequences.get(name);
  }

  sequenceEntries(): IterableIterator<[string, bigint]> {
    return this.sequences.entries();
  }

  object(objectKind: string, tenant: string, name: string): CatalogObject | undefined {
    return this.objectsByKey.get(objectKey(objectKind, tenant, name));
  }

  /** Objects of one kind, of every tenant. */
  objects(objectKind: string): CatalogObject[] {
    return [...this.objectsByKey.values()].filter((o) => o.objectKind === objectKind);
  }

  putObject(object: CatalogObject): void {
    this.objectsByKey.set(objectKey(object.objectKind, object.tenant, object.name), object);
  }

  dropObject(objectKind: string, tenant: string, name: string): CatalogObject | undefined {
    const key = objectKey(objectKind, tenant, name);
    const object = this.objectsByKey.get(key);
    this.objectsByKey.delete(key);
    return object;
  }

  /**
   * The largest table and index ids ever used, dropped ones included (the writer allocates above
   * them): an id never names two tables, so what follows a table by id (CDC streams, webhooks,
   * caches) never meets another table under it.
   */
  maxIds(): { tableId: number; indexId: number } {
    let tableId = this.highTableId;
    let indexId = this.highIndexId;
    for (const entry of this.tablesById.values()) {
      tableId = Math.max(tableId, entry.def.id);
      for (const index of entry.def.indexes) indexId = Math.max(indexId, index.id);
    }
    return { tableId, indexId };
  }

  /**
   * The largest column id a table ever had, dropped columns included (ALTER TABLE ADD COLUMN
   * allocates above it): a row written before DROP COLUMN keeps the dropped column's value under its
   * id, and a new column under that id would show it (PostgreSQL never reuses an attnum either).
   */
  columnIdHigh(tableId: TableId): number {
    return this.highColumnIds.get(tableId) ?? 0;
  }

  /** The highest ids ever put, as the tables projection stores them. */
  get idsHigh(): HighIds {
    // Object.fromEntries orders integer keys ascending: the stored text does not depend on the order of puts.
    this.highIdsView ??= { tableId: this.highTableId, indexId: this.highIndexId, columns: Object.fromEntries(this.highColumnIds) };
    return this.highIdsView;
  }

  /** Raises the highest ids ever put (loading them, or a table put); stored ids from before column ids were kept have no `columns`. */
  raiseIds(ids: { readonly tableId: number; readonly indexId: number; readonly columns?: Readonly<Record<string, number>> }): void {
    if (ids.tableId > this.highTableId || ids.indexId > this.highIndexId) {
      this.highTableId = Math.max(this.highTableId, ids.tableId);
      this.highIndexId = Math.max(this.highIndexId, ids.indexId);
      this.highIdsView = null;
    }
    for (const [key, high] of Object.entries(ids.columns ?? {})) this.raiseColumnId(Number(key), high);
  }

  private raiseColumnId(tableId: TableId, high: number): void {
    if (high <= (this.highColumnIds.get(tableId) ?? 0)) return;
    this.highColumnIds.set(tableId, high);
    this.highIdsView = null;
  }

  /** Creates or replaces a table definition; statistics carry over. */
  putTable(def: TableDef, stats?: TableStats): TableEntry {
    this.raiseIds({ tableId: def.id, indexId: Math.max(0, ...def.indexes.map((i) => i.id)) });
    this.raiseColumnId(def.id, Math.max(0, ...def.columns.map((c) => c.id)));
    const previous = this.tablesById.get(def.id);
    if (previous) this.forgetTable(previous);
    const entry: TableEntry = {
      def,
      btreeIndexes: def.indexes.filter((index) => index.kind === 'btree' && !index.primary).map((index) => compileIndex(def, index)),
      stats: stats ?? previous?.stats ?? { rowCount: 0, sizeBytes: 0, indexSizeBytes: 0 },
    };
    this.tablesById.set(def.id, entry);
    this.tableIdsByName.set(qualifiedName(def.tenant, def.schema, def.name), def.id);
    this.lastByName = null;
    for (const index of entry.btreeIndexes) this.indexesById.set(index.def.id, index);
    return entry;
  }

  dropTable(tableId: TableId): TableEntry | undefined {
    const entry = this.tablesById.get(tableId);
    if (entry) this.forgetTable(entry);
    // A table id is never used again (tableId above): its column ids need no keeping.
    if (this.highColumnIds.delete(tableId)) this.highIdsView = null;
    return entry;
  }

  setSequence(name: string, lastValue: bigint): void {
    this.sequences.set(name, lastValue);
  }

  private forgetTable(entry: TableEntry): void {
    const { def } = entry;
    this.tablesById.delete(def.id);
    const key = qualifiedName(def.tenant, def.schema, def.name);
    if (this.tableIdsByName.get(key) === def.id) this.tableIdsByName.delete(key);
    this.lastByName = null;
    for (const index of entry.btreeIndexes) this.indexesById.delete(index.def.id);
  }
}

function compileIndex(table: TableDef, def: IndexDef): CompiledIndex {
  const types: SqlType[] = [];
  const missing: SqlValue[] = [];
  for (const columnId of def.columnIds) {
    const column = table.columns.find((c) => c.id === columnId);
    assert(column, `index ${def.name} names unknown column id ${columnId}`);
    types.push(column.type);
    missing.push(column.missingValue);
  }
  const columnIds: readonly ColumnId[] = def.columnIds;
  const scratch: SqlValue[] = new Array(columnIds.length);
  return {
    tableId: table.id,
    def,
    keyOf: (image) => encodeKey(types, decodeRowInto(image, columnIds, missing, scratch), def.descending),
  };
}
