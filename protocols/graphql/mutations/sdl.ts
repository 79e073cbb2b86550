import type { ColumnModel, SchemaModel, TableModel } from '../model.js';
import { graphqlNameOf, NameScope } from '../names.js';
import { isNumericSql } from '../types.js';

/**
 * The mutation view of a writable table: its `<t>_constraint` enum (primary key and unique
 * indexes, by name) and the columns `<t>_update_column` and `_inc` may name.
 */
export interface MutationTable {
  readonly table: TableModel;
  /** Enum value → the columns of that unique index (the ON CONFLICT target). */
  readonly constraints: ReadonlyMap<string, readonly ColumnModel[]>;
  /** Columns that can be enum values (GraphQL forbids `true`, `false`, `null` as enum values). */
  readonly updatable: readonly ColumnModel[];
  /** Columns `_inc` may add to (numeric types). */
  readonly incrementable: readonly ColumnModel[];
}

/** Names GraphQL forbids as enum values. */
const NOT_ENUM_VALUES = ['true', 'false', 'null'];

/** Hasura's value for an enum that would otherwise be empty (GraphQL requires at least one value). */
export const PLACEHOLDER = '_PLACEHOLDER';

/** A unique index (the primary key's included) as an enum value: its name by the naming rule; indexes over hidden columns are left out. */
function constraintsOf(table: TableModel): Map<string, readonly ColumnModel[]> {
  const scope = new NameScope(NOT_ENUM_VALUES);
  const byId = new Map(table.columns.map((c) => [c.def.id, c]));
  const out = new Map<string, readonly ColumnModel[]>();
  for (const index of table.def.indexes) {
    if (index.kind !== 'btree' || !index.unique) continue;
    const columns = index.columnIds.map((id) => byId.get(id));
    if (columns.some((c) => c === undefined)) continue;
    out.set(scope.claim(graphqlNameOf(index.name)), columns as ColumnModel[]);
  }
  return out;
}

/** The mutation view of every writable table (views take no writes). */
export function mutationTables(model: SchemaModel): MutationTable[] {
  return model.tables
    .filter((t) => t.writable)
    .map((table) => ({
      table,
      constraints: constraintsOf(table),
      updatable: table.columns.filter((c) => !NOT_ENUM_VALUES.includes(c.field)),
      incrementable: table.columns.filter((c) => isNumericSql(c.def.type)),
    }));
}

const fieldsOf = (columns: readonly ColumnModel[], required = false): string =>
  columns.map((c) => `  ${c.field}: ${c.scalar}${required ? '!' : ''}`).join('\n');
const enumOf = (name: string, values: readonly string[]): string =>
  `enum ${name} {\n${(values.length ? values : [PLACEHOLDER]).map((v) => `  ${v}`).join('\n')}\n}`;

/** The input, enum and response types of one table's mutations. */
function typesOf(m: MutationTable): string[] {
  const b = m.table.base;
  const parts = [
    `input ${b}_insert_input {\n${fieldsOf(m.table.columns)}\n}`,
    `input ${b}_set_input {\n${fieldsOf(m.table.columns)}\n}`,
    `type ${b}_mutation_response {\n  "rows changed (inserted, updated or deleted)"\n  affected_rows: Int!\n  "the rows as they were written (deleted rows as they were)"\n  returning: [${b}!]!\n}`,
  ];
  if (m.incrementable.length) parts.push(`input ${b}_inc_input {\n${fieldsOf(m.incrementable)}\n}`);
  if (m.table.primaryKey.length) parts.push(`input ${b}_pk_columns_input {\n${fieldsOf(m.table.primaryKey, true)}\n}`);
  if (m.constraints.size) {
    parts.push(enumOf(`${b}_constraint`, [...m.constraints.keys()]));
    parts.push(
      enumOf(
        `${b}_update_column`,
        m.updatable.map((c) => c.field),
      ),
    );
    parts.push(`input ${b}_on_conflict {\n  constraint: ${b}_constraint!\n  update_columns: [${b}_update_column!]! = []\n  where: ${b}_bool_exp\n}`);
  }
  return parts;
}

/** The Mutation fields of one table (Hasura's names and arguments). */
function fieldsOfTable(m: MutationTable): string[] {
  const b = m.table.base;
  const conflict = m.constraints.size ? `, on_conflict: ${b}_on_conflict` : '';
  const changes = `_set: ${b}_set_input${m.incrementable.length ? `, _inc: ${b}_inc_input` : ''}`;
  const fields = [
    `  insert_${b}(objects: [${b}_insert_input!]!${conflict}): ${b}_mutation_response`,
    `  insert_${b}_one(object: ${b}_insert_input!${conflict}): ${b}`,
    `  update_${b}(where: ${b}_bool_exp!, ${changes}): ${b}_mutation_response`,
    `  delete_${b}(where: ${b}_bool_exp!): ${b}_mutation_response`,
  ];
  if (m.table.primaryKey.length) {
    fields.push(`  update_${b}_by_pk(pk_columns: ${b}_pk_columns_input!, ${changes}): ${b}`);
    fields.push(`  delete_${b}_by_pk(${m.table.primaryKey.map((c) => `${c.field}: ${c.scalar}!`).join(', ')}): ${b}`);
  }
  return fields;
}

/** The mutation SDL of a tenant: nothing when it has no writable table (the schema then has no Mutation type). */
export function mutationSdl(tables: readonly MutationTable[]): string {
  if (tables.length === 0) return '';
  return [...tables.flatMap(typesOf), `type Mutation {\n${tables.flatMap(fieldsOfTable).join('\n')}\n}`].join('\n\n');
}
