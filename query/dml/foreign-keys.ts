import type { ConstraintDef, TableDef } from '../../core/catalog.js';
import { decodeKey, encodeKey } from '../../core/key-encoding.js';
import { decodeRowInto } from '../../core/row-codec.js';
import type { SqlType, SqlValue } from '../../core/values.js';
import type { CatalogState, WriteView } from '../../projections/index.js';
import type { QValue, TypeSystem } from '../types/contract.js';
import { fkChildViolation, fkParentViolation, notNullViolation } from './errors.js';
import { keyBytes, keyText } from '../../core/key-text.js';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/** What foreign-key checks need of a table's writer. */
export interface FkTableWriter {
  readonly def: TableDef;
  readonly pkTypes: SqlType[];
  readonly pending: Map<string, Uint8Array | null>;
  current(key: Uint8Array): Promise<Uint8Array | undefined>;
  prefetchKeys(keys: readonly Uint8Array[]): Promise<void>;
  update(key: Uint8Array, before: Uint8Array, oldValues: readonly QValue[], values: QValue[]): Promise<void>;
  delete(key: Uint8Array, before: Uint8Array, values: readonly QValue[]): Promise<boolean>;
  describeKey(positions: readonly number[], values: readonly QValue[]): string;
}

export interface FkHost {
  readonly view: WriteView;
  readonly catalog: CatalogState;
  readonly types: TypeSystem;
  writer(table: TableDef): FkTableWriter;
}

const positionsOf = (table: TableDef, ids: readonly number[]): number[] => ids.map((id) => table.columns.findIndex((c) => c.id === id));

/** Both directions of every FOREIGN KEY: the child's reference must exist; a parent's delete acts on children. */
export class ForeignKeys {
  constructor(private readonly host: FkHost) {}

  childColumnsChanged(table: TableDef, changed: (positions: readonly number[]) => boolean): boolean {
    return table.constraints.some((c) => c.references && changed(positionsOf(table, c.columnIds)));
  }

  async checkChild(table: TableDef, values: readonly QValue[]): Promise<void> {
    for (const c of table.constraints) {
      if (!c.references) continue;
      const positions = positionsOf(table, c.columnIds);
      const keyValues = positions.map((p) => values[p] ?? null);
      if (keyValues.some((v) => v === null)) continue;
      const parent = c.references.tableId === table.id ? table : this.host.catalog.table(c.references.tableId)?.def;
      if (!parent) continue;
      if (!(await this.parentExists(parent, c, keyValues))) {
        const w = this.host.writer(table);
        throw fkChildViolation(table.name, c.name, w.describeKey(positions, values), parent.name);
      }
    }
  }

  /** Reads ahead the parents (by primary key) that checkChild will look up for these rows. */
  async prefetchParents(table: TableDef, rows: readonly (readonly QValue[])[], assigned?: ReadonlySet<number>): Promise<void> {
    const work: Promise<void>[] = [];
    for (const c of table.constraints) {
      if (!c.references) continue;
      const parent = c.references.tableId === table.id ? table : this.host.catalog.table(c.references.tableId)?.def;
      const refIds = c.references.columnIds;
      if (!parent || !this.byPrimaryKey(parent, refIds)) continue;
      const positions = positionsOf(table, c.columnIds);
      if (assigned && !positions.some((p) => assigned.has(p))) continue; // an UPDATE not touching the FK columns
      const writer = this.host.writer(parent);
      const keys: Uint8Array[] = [];
      for (const values of rows) {
        const keyValues = positions.map((p) => values[p] ?? null);
        if (keyValues.some((v) => v === null)) continue;
        keys.push(
          encodeKey(
            writer.pkTypes,
            parent.primaryKey.map((id) => keyValues[refIds.indexOf(id)] as SqlValue),
          ),
        );
      }
      if (keys.length > 0) work.push(writer.prefetchKeys(keys));
    }
    await Promise.all(work);
  }

  private byPrimaryKey(parent: TableDef, refIds: readonly number[]): boolean {
    return parent.primaryKey.length === refIds.length && parent.primaryKey.every((id) => refIds.includes(id));
  }

  private async parentExists(parent: TableDef, c: ConstraintDef, keyValues: readonly QValue[]): Promise<boolean> {
    const refIds = c.references!.columnIds;
    const writer = this.host.writer(parent);
    if (this.byPrimaryKey(parent, refIds)) {
      const ordered = parent.primaryKey.map((id) => keyValues[refIds.indexOf(id)] as SqlValue);
      return (await writer.current(encodeKey(writer.pkTypes, ordered))) !== undefined;
    }
    // Referenced by a unique index: scan for a live row with those values.
    return (await this.findRows(parent, refIds, keyValues, 1)).length > 0;
  }

  /** Rows of `table` whose columns `ids` equal `keyValues` (as this statement sees them). */
  private async findRows(
    table: TableDef,
    ids: readonly number[],
    keyValues: readonly QValue[],
    max: number,
  ): Promise<{ key: Uint8Array; image: Uint8Array; values: QValue[] }[]> {
    const positions = positionsOf(table, ids);
    const types = positions.map((p) => table.columns[p]!.type);
    const wanted = hex(encodeKey(types, keyValues as SqlValue[]));
    const columnIds = table.columns.map((c) => c.id);
    const missing = table.columns.map((c) => c.missingValue);
    const writer = this.host.writer(table);
    const out: { key: Uint8Array; image: Uint8Array; values: QValue[] }[] = [];
    const consider = (key: Uint8Array, image: Uint8Array): boolean => {
      const values = decodeRowInto(image, columnIds, missing) as QValue[];
      const own = positions.map((p) => values[p] as SqlValue);
      if (own.some((v) => v === null) || hex(encodeKey(types, own)) !== wanted) return false;
      out.push({ key, image, values });
      return out.length >= max;
    };
    for (const [k, image] of writer.pending) {
      if (image && consider(keyBytes(k), image)) return out;
    }
    for await (const batch of this.host.view.rows(table.id)) {
      for (const [key, image] of batch) {
        if (writer.pending.has(keyText(key))) continue;
        if (consider(key, image)) return out;
      }
    }
    return out;
  }

  private referencing(table: TableDef): { child: TableDef; constraint: ConstraintDef }[] {
    const out: { child: TableDef; constraint: ConstraintDef }[] = [];
    for (const entry of this.host.catalog.tables()) {
      for (const c of entry.def.constraints)
        if (c.references?.tableId === table.id) out.push({ child: entry.def.id === table.id ? table : entry.def, constraint: c });
    }
    return out;
  }

  async onParentDelete(table: TableDef, values: readonly QValue[]): Promise<void> {
    for (const { child, constraint } of this.referencing(table)) {
      const refPositions = positionsOf(table, constraint.references!.columnIds);
      const keyValues = refPositions.map((p) => values[p] ?? null);
      if (keyValues.some((v) => v === null)) continue;
      const action = constraint.references!.onDelete;
      const rows = await this.findRows(child, constraint.columnIds, keyValues, action === 'cascade' || action === 'set_null' ? Number.MAX_SAFE_INTEGER : 1);
      if (rows.length === 0) continue;
      if (action === 'restrict' || action === 'no_action') {
        throw fkParentViolation(table.name, constraint.name, child.name, this.host.writer(table).describeKey(refPositions, values));
      }
      const writer = this.host.writer(child);
      const childPositions = positionsOf(child, constraint.columnIds);
      for (const row of rows) {
        if (action === 'cascade') await writer.delete(row.key, row.image, row.values);
        else {
          const next = [...row.values];
          for (const p of childPositions) {
            if (!child.columns[p]!.nullable) throw notNullViolation(child.name, child.columns[p]!.name);
            next[p] = null;
          }
          await writer.update(row.key, row.image, row.values, next);
        }
      }
    }
  }

  /** Changing a referenced key while children still point at the old value is refused (NO ACTION). */
  async onParentUpdate(
    table: TableDef,
    oldValues: readonly QValue[],
    values: readonly QValue[],
    changed: (positions: readonly number[]) => boolean,
  ): Promise<void> {
    for (const { child, constraint } of this.referencing(table)) {
      const refPositions = positionsOf(table, constraint.references!.columnIds);
      if (!changed(refPositions)) continue;
      const keyValues = refPositions.map((p) => oldValues[p] ?? null);
      if (keyValues.some((v) => v === null)) continue;
      const rows = await this.findRows(child, constraint.columnIds, keyValues, 1);
      if (rows.length > 0) throw fkParentViolation(table.name, constraint.name, child.name, this.host.writer(table).describeKey(refPositions, oldValues));
    }
  }
}

export const decodePk = decodeKey;
