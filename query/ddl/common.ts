import { DEFAULT_SCHEMA, type ColumnDef, type ConstraintDef, type IndexDef, type TableDef, type TableId } from '../../core/catalog.js';
import { SvcError, columnNotFound } from '../../core/errors.js';
import { newUuid } from '../../core/ids.js';
import type { TxnOp, TxnRecord } from '../../core/log-records.js';
import type { CatalogState, TableEntry } from '../../projections/index.js';
import type { QualifiedName } from '../parse/index.js';
import { checkCatalogNames } from './names.js';

export const nowMicros = (): bigint => BigInt(Date.now()) * 1000n;

/** A log record of `ops`; `txnId` names it (a REST transaction's id), else a fresh UUID. */
export function txnRecord(tenant: string, ops: TxnOp[], txnId: string = newUuid()): TxnRecord {
  return { type: 'txn', txnId, tenant, timestampMicros: nowMicros(), ops };
}

/**
 * The log record of a catalog change: every DDL record is made here, so the names it would store
 * are checked here (names.ts) before it can reach the log.
 */
export function catalogRecord(tenant: string, ops: TxnOp[]): TxnRecord {
  checkCatalogNames(ops);
  return txnRecord(tenant, ops);
}

export function alreadyExists(kind: string, name: string): SvcError {
  return new SvcError('CONSTRAINT_VIOLATION', `${kind} "${name}" already exists`, { name, reason: 'already_exists' });
}

/** The schema a name means: its own, else the default one. */
export function schemaOf(name: QualifiedName): string {
  return name.schema ?? DEFAULT_SCHEMA;
}

/** schema + name of a table reference (schema defaulted). */
export function tableRef(name: QualifiedName): { schema: string; name: string } {
  return { schema: schemaOf(name), name: name.name };
}

/** The internal sequence name of a SERIAL column (unique per tenant and schema). */
export function sequenceName(tenant: string, schema: string, table: string, column: string): string {
  return `${tenant}:${schema}.${table}_${column}_seq`;
}

/** Ids above everything in use (the builder runs under the write lock). */
export class IdAllocator {
  private table: number;
  private index: number;
  /** Per table id, the last column id handed out by this statement. */
  private readonly columns = new Map<TableId, number>();
  constructor(private readonly catalog: CatalogState) {
    const max = catalog.maxIds();
    this.table = max.tableId;
    this.index = max.indexId;
  }
  nextTable(): number {
    return ++this.table;
  }
  nextIndex(): number {
    return ++this.index;
  }
  /**
   * A column id `table` never had: above its columns, the ones dropped before (the catalog keeps the
   * highest ever put) and those given out earlier in this statement (`DROP COLUMN b, ADD COLUMN n`).
   */
  nextColumn(table: TableDef): number {
    const last = this.columns.get(table.id) ?? Math.max(this.catalog.columnIdHigh(table.id), ...table.columns.map((c) => c.id));
    this.columns.set(table.id, last + 1);
    return last + 1;
  }
}

/** Every index and constraint name of a schema (PostgreSQL names share one namespace per schema). */
export function namesInSchema(catalog: CatalogState, tenant: string, schema: string): Set<string> {
  const names = new Set<string>();
  for (const entry of catalog.tables()) {
    if (entry.def.tenant !== tenant || entry.def.schema !== schema) continue;
    names.add(entry.def.name);
    for (const index of entry.def.indexes) names.add(index.name);
    for (const c of entry.def.constraints) names.add(c.name);
  }
  return names;
}

/** PostgreSQL's choice of a free name: base, then base1, base2, ... */
export function freeName(base: string, taken: Set<string>): string {
  let name = base;
  for (let n = 1; taken.has(name); n++) name = `${base}${n}`;
  taken.add(name);
  return name;
}

export function columnByName(table: TableDef, name: string): ColumnDef {
  const column = table.columns.find((c) => c.name === name);
  if (!column) throw columnNotFound(name, { relation: table.name });
  return column;
}

export function findTableOrNull(catalog: CatalogState, tenant: string, schema: string, name: string): TableEntry | undefined {
  return catalog.tableByName(tenant, schema, name);
}

/** Tables (other than `table`) with a foreign key referencing it. */
export function referencingTables(catalog: CatalogState, table: TableDef): TableEntry[] {
  return [...catalog.tables()].filter((e) => e.def.id !== table.id && e.def.constraints.some((c) => c.references?.tableId === table.id));
}

export function btreeIndex(
  id: number,
  name: string,
  columnIds: readonly number[],
  options: { unique: boolean; primary: boolean; descending?: readonly boolean[] },
): IndexDef {
  return {
    id,
    name,
    kind: 'btree',
    columnIds,
    descending: options.descending ?? columnIds.map(() => false),
    unique: options.unique,
    primary: options.primary,
    options: {},
  };
}

export function keyConstraint(kind: 'primary_key' | 'unique', name: string, columns: readonly ColumnDef[]): ConstraintDef {
  const list = columns.map((c) => c.name).join(', ');
  return { name, kind, definition: `${kind === 'primary_key' ? 'PRIMARY KEY' : 'UNIQUE'} (${list})`, columnIds: columns.map((c) => c.id) };
}
