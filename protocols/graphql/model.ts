import { DEFAULT_SCHEMA, type ColumnDef, type TableDef } from '../../core/catalog.js';
import { graphqlNameOf, NameScope, quoteIdent } from './names.js';
import { ARRAY_ELEMENT_SCALARS, comparisonTypeOf, CUSTOM_SCALARS, graphqlTypeOf, ORDERED_SCALARS } from './types.js';

/**
 * The GraphQL view of one tenant's catalog: every table (and view) with its GraphQL names,
 * columns, primary key and foreign-key relations. Built once per catalog version; the SDL, the
 * resolvers, the where compiler and the mutations all read it.
 */
export interface ColumnModel {
  readonly def: ColumnDef;
  /** The GraphQL field name (names.ts rule). */
  readonly field: string;
  /** The quoted SQL identifier. */
  readonly sql: string;
  /** The GraphQL scalar (types.ts); `[Int]` for an array column. */
  readonly scalar: string;
  /** Its `<x>_comparison_exp` input type. */
  readonly comparison: string;
}

export type RelationKind = 'object' | 'array';

export interface RelationModel {
  readonly kind: RelationKind;
  readonly field: string;
  /** Array relations: the `<field>_aggregate` field (its name claimed like the field's). */
  readonly aggregateField: string | null;
  /** object: the referenced (parent) table; array: the referencing (child) table. */
  target: TableModel;
  /** Columns of this table and of the target that join, pairwise. */
  readonly from: readonly ColumnModel[];
  readonly to: readonly ColumnModel[];
}

export interface TableModel {
  readonly def: TableDef;
  /** The GraphQL base name: the type name, the list field, and the prefix of every derived name. */
  readonly base: string;
  /** `"schema"."table"` for SQL text. */
  readonly sql: string;
  readonly columns: readonly ColumnModel[];
  readonly columnByField: ReadonlyMap<string, ColumnModel>;
  /** Primary-key columns in key order (empty: no `_by_pk`, no `@key`). */
  readonly primaryKey: readonly ColumnModel[];
  readonly relations: RelationModel[];
  readonly relationByField: Map<string, RelationModel>;
  /** VECTOR columns (a `<base>_nearest` field when non-empty). */
  readonly vectorColumns: readonly ColumnModel[];
  /** Views have no primary key and take no writes. */
  readonly writable: boolean;
}

export interface SchemaModel {
  readonly tenant: string;
  readonly tables: readonly TableModel[];
  readonly tableByBase: ReadonlyMap<string, TableModel>;
}

/** Type names derived from a table's base name (suffixes); a base is taken only if all are free. */
export const DERIVED_TYPE_SUFFIXES = [
  '',
  '_bool_exp',
  '_order_by',
  '_select_column',
  '_aggregate',
  '_aggregate_fields',
  '_sum_fields',
  '_avg_fields',
  '_min_fields',
  '_max_fields',
  '_pk_columns_input',
  '_insert_input',
  '_set_input',
  '_inc_input',
  '_on_conflict',
  '_constraint',
  '_update_column',
  '_mutation_response',
  '_event',
  '_events',
] as const;

/** Root field names derived from a base name (queries, mutations, subscriptions). */
export const DERIVED_FIELD_NAMES = (base: string): string[] => [
  base,
  `${base}_by_pk`,
  `${base}_aggregate`,
  `${base}_nearest`,
  `${base}_events`,
  `insert_${base}`,
  `insert_${base}_one`,
  `update_${base}`,
  `update_${base}_by_pk`,
  `delete_${base}`,
  `delete_${base}_by_pk`,
];

/** Names no table may take: built-in and svcdb scalars, root types, shared inputs, federation types. */
export const RESERVED_NAMES: readonly string[] = [
  'Int',
  'Float',
  'String',
  'Boolean',
  'ID',
  'Query',
  'Mutation',
  'Subscription',
  'order_by',
  'cursor_ordering',
  // The change event types of `<table>_events` (subscriptions/index.ts).
  'svcdb_change_event',
  'svcdb_change_operation',
  '_Any',
  '_Entity',
  '_Service',
  '_FieldSet',
  '_service',
  '_entities',
  'link__Import',
  ...CUSTOM_SCALARS,
  ...[...ORDERED_SCALARS, 'jsonb', 'vector'].map((s) => `${s}_comparison_exp`),
  ...ARRAY_ELEMENT_SCALARS.map((s) => `${s}_array_comparison_exp`),
];

/** Field names that bool_exp and order_by inputs use themselves. */
const RESERVED_FIELDS = ['_and', '_or', '_not'];

function baseNameOf(def: TableDef): string {
  return graphqlNameOf(def.schema === DEFAULT_SCHEMA ? def.name : `${def.schema}_${def.name}`);
}

function columnsOf(def: TableDef): ColumnModel[] {
  const scope = new NameScope(RESERVED_FIELDS);
  return def.columns.map((column) => ({
    def: column,
    field: scope.claim(graphqlNameOf(column.name)),
    sql: quoteIdent(column.name),
    scalar: graphqlTypeOf(column.type),
    comparison: comparisonTypeOf(column.type),
  }));
}

function tableModel(def: TableDef, base: string): TableModel {
  const columns = columnsOf(def);
  const byId = new Map(columns.map((c) => [c.def.id, c]));
  return {
    def,
    base,
    sql: `${quoteIdent(def.schema)}.${quoteIdent(def.name)}`,
    columns,
    columnByField: new Map(columns.map((c) => [c.field, c])),
    primaryKey: def.primaryKey.map((id) => byId.get(id)!),
    relations: [],
    relationByField: new Map(),
    vectorColumns: columns.filter((c) => c.def.type.name === 'vector'),
    writable: def.kind === 'table',
  };
}

/**
 * A relation's field name: the target's base name; if taken, `<target>_by_<foreign-key columns>`
 * (the referencing side's columns, for both kinds); then `_2`, `_3`, …
 */
function addRelation(owner: TableModel, scope: NameScope, relation: Omit<RelationModel, 'field' | 'aggregateField'>): void {
  const plain = relation.target.base;
  const foreignKey = relation.kind === 'object' ? relation.from : relation.to;
  const qualified = `${plain}_by_${foreignKey.map((c) => c.field).join('_')}`;
  const free = (name: string) => relation.kind === 'object' || !scope.has(`${name}_aggregate`);
  const field = scope.has(plain) || !free(plain) ? scope.claim(qualified, free) : scope.claim(plain);
  const aggregateField = relation.kind === 'array' ? scope.claim(`${field}_aggregate`) : null;
  const model: RelationModel = { ...relation, field, aggregateField };
  owner.relations.push(model);
  owner.relationByField.set(field, model);
}

/** Object relations (child → parent) first, then array relations (parent → children), by table id. */
function linkRelations(tables: readonly TableModel[]): void {
  const byId = new Map(tables.map((t) => [t.def.id, t]));
  const scopes = new Map(tables.map((t) => [t, new NameScope([...RESERVED_FIELDS, ...t.columns.map((c) => c.field)])]));
  const links: { child: TableModel; parent: TableModel; from: ColumnModel[]; to: ColumnModel[] }[] = [];
  for (const child of tables) {
    for (const constraint of child.def.constraints) {
      if (constraint.kind !== 'foreign_key' || !constraint.references) continue;
      const parent = byId.get(constraint.references.tableId);
      if (!parent) continue;
      const from = constraint.columnIds.map((id) => child.columns.find((c) => c.def.id === id)!);
      const to = constraint.references.columnIds.map((id) => parent.columns.find((c) => c.def.id === id)!);
      if (from.includes(undefined as never) || to.includes(undefined as never)) continue;
      links.push({ child, parent, from, to });
    }
  }
  for (const l of links) addRelation(l.child, scopes.get(l.child)!, { kind: 'object', target: l.parent, from: l.from, to: l.to });
  for (const l of links) addRelation(l.parent, scopes.get(l.parent)!, { kind: 'array', target: l.child, from: l.to, to: l.from });
}

/** The model of one tenant's tables, in table-id order (so names are stable as tables are added). */
export function buildSchemaModel(tenant: string, defs: readonly TableDef[]): SchemaModel {
  const scope = new NameScope(RESERVED_NAMES);
  const free = (base: string) => DERIVED_TYPE_SUFFIXES.every((s) => !scope.has(`${base}${s}`)) && DERIVED_FIELD_NAMES(base).every((n) => !scope.has(n));
  const tables: TableModel[] = [];
  for (const def of [...defs].sort((a, b) => a.id - b.id)) {
    if (def.columns.length === 0) continue;
    const base = scope.claim(baseNameOf(def), free);
    for (const suffix of DERIVED_TYPE_SUFFIXES) scope.add(`${base}${suffix}`);
    for (const name of DERIVED_FIELD_NAMES(base)) scope.add(name);
    tables.push(tableModel(def, base));
  }
  linkRelations(tables);
  return { tenant, tables, tableByBase: new Map(tables.map((t) => [t.base, t])) };
}

/** The tenant's table definitions, as the catalog holds them now (their identities key the schema cache). */
export function tenantDefs(catalog: { tables(): Iterable<{ readonly def: TableDef }> }, tenant: string): TableDef[] {
  const defs: TableDef[] = [];
  for (const { def } of catalog.tables()) if (def.tenant === tenant) defs.push(def);
  return defs;
}
