import type { IndexDef, TableDef } from '../../core/catalog.js';
import type { SqlType } from '../../core/values.js';
import { plainKindOf } from './plain-cells.js';

/** A unique secondary index of a table: its column positions and their types (key encoding). */
export interface UniqueIndex {
  readonly index: IndexDef;
  readonly positions: number[];
  readonly types: SqlType[];
}

/** What a TableWriter and a JSON insert derive from a table's definition alone: worked out once per definition (DDL makes a new one). */
export interface TableShape {
  readonly pkTypes: SqlType[];
  readonly pkPositions: number[] | null;
  readonly uniques: UniqueIndex[];
  readonly pkOnly: boolean;
  readonly notNull: number[];
  readonly hasForeignKeys: boolean;
  /** Column positions by name (a JSON row names its columns). */
  readonly positions: ReadonlyMap<string, number>;
  /** Each column's plain kind (plain-cells.ts plainKindOf): how its JSON cells convert. */
  readonly plainKinds: readonly number[];
}

/** Keyed by the definition object: a definition never changes, and a dropped one lets its shape go. */
const tableShapes = new WeakMap<TableDef, TableShape>();

/** The shape of a table definition, worked out on its first statement. */
export function shapeOf(def: TableDef): TableShape {
  let shape = tableShapes.get(def);
  if (shape) return shape;
  const position = (id: number): number => def.columns.findIndex((c) => c.id === id);
  const pkPositions = def.primaryKey.length > 0 ? def.primaryKey.map(position) : null;
  const uniques = def.indexes
    .filter((i) => i.unique && !i.primary && i.kind === 'btree')
    .map((index) => {
      const positions = index.columnIds.map(position);
      return { index, positions, types: positions.map((p) => def.columns[p]!.type) };
    });
  const hasForeignKeys = def.constraints.some((c) => c.references);
  shape = {
    pkPositions,
    pkTypes: pkPositions ? pkPositions.map((p) => def.columns[p]!.type) : [{ name: 'int8' }],
    uniques,
    pkOnly: pkPositions !== null && uniques.length === 0 && !hasForeignKeys,
    notNull: def.columns.flatMap((c, i) => (c.nullable ? [] : [i])),
    hasForeignKeys,
    positions: new Map(def.columns.map((c, i) => [c.name, i])),
    plainKinds: def.columns.map((c) => plainKindOf(c.type.name)),
  };
  tableShapes.set(def, shape);
  return shape;
}
