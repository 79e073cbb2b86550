import type { ColumnModel, SchemaModel, TableModel } from './model.js';
import { ORDER_BY_SQL } from './order-by.js';
import { ARRAY_ELEMENT_SCALARS, CUSTOM_SCALARS, isComparableSql, isNumericSql, ORDERED_SCALARS } from './types.js';
import { ARRAY_OPERATORS, COMPARISON_OPERATORS, TEXT_OPERATORS } from './where.js';

/**
 * The SDL of a tenant's query schema (Hasura's naming; docs/graphql.md). Federation metadata
 * (`@key` on every table type with a primary key) is part of it; buildFederationSchema adds
 * `_service` and `_entities`.
 */
const LIST_ARGS = (base: string): string => `where: ${base}_bool_exp, order_by: [${base}_order_by!], limit: Int, offset: Int`;

/** Names GraphQL forbids as enum values. */
const NOT_ENUM_VALUES = new Set(['true', 'false', 'null']);

function comparisonTypes(): string {
  const ops = (scalar: string, extra: readonly string[]) =>
    [...COMPARISON_OPERATORS, ...extra]
      .map((op) => `  ${op}: ${op === '_is_null' ? 'Boolean' : op === '_in' || op === '_nin' ? `[${scalar}!]` : scalar}`)
      .join('\n');
  const ordered = ORDERED_SCALARS.map((s) => `input ${s}_comparison_exp {\n${ops(s, s === 'String' ? TEXT_OPERATORS : [])}\n}`);
  return [
    ...ordered,
    'input jsonb_comparison_exp {\n  _eq: jsonb\n  _neq: jsonb\n  _is_null: Boolean\n}',
    'input vector_comparison_exp {\n  _is_null: Boolean\n}',
    // Array columns (Hasura's array operators): whole-array equality, @> and <@.
    ...ARRAY_ELEMENT_SCALARS.map(
      (s) => `input ${s}_array_comparison_exp {\n${ARRAY_OPERATORS.map((op) => `  ${op}: [${s}]`).join('\n')}\n  _is_null: Boolean\n}`,
    ),
  ].join('\n');
}

const fieldType = (c: ColumnModel): string => `${c.scalar}${c.def.nullable ? '' : '!'}`;

function objectType(table: TableModel): string {
  const key = table.primaryKey.length > 0 ? ` @key(fields: "${table.primaryKey.map((c) => c.field).join(' ')}")` : '';
  const fields = table.columns.map((c) => `  ${c.field}: ${fieldType(c)}`);
  for (const r of table.relations) {
    fields.push(r.kind === 'object' ? `  ${r.field}: ${r.target.base}` : `  ${r.field}(${LIST_ARGS(r.target.base)}): [${r.target.base}!]!`);
    if (r.aggregateField) fields.push(`  ${r.aggregateField}(where: ${r.target.base}_bool_exp): ${r.target.base}_aggregate!`);
  }
  return `type ${table.base}${key} {\n${fields.join('\n')}\n}`;
}

function inputTypes(table: TableModel): string {
  const b = table.base;
  const where = [`  _and: [${b}_bool_exp!]`, `  _or: [${b}_bool_exp!]`, `  _not: ${b}_bool_exp`];
  for (const c of table.columns) where.push(`  ${c.field}: ${c.comparison}`);
  for (const r of table.relations) where.push(`  ${r.field}: ${r.target.base}_bool_exp`);
  const order = table.columns.map((c) => `  ${c.field}: order_by`);
  for (const r of table.relations) if (r.kind === 'object') order.push(`  ${r.field}: ${r.target.base}_order_by`);
  const selectable = table.columns.filter((c) => !NOT_ENUM_VALUES.has(c.field)).map((c) => `  ${c.field}`);
  return [
    `input ${b}_bool_exp {\n${where.join('\n')}\n}`,
    `input ${b}_order_by {\n${order.join('\n')}\n}`,
    selectable.length ? `enum ${b}_select_column {\n${selectable.join('\n')}\n}` : '',
  ].join('\n');
}

function aggregateTypes(table: TableModel): string {
  const b = table.base;
  const numeric = table.columns.filter((c) => isNumericSql(c.def.type));
  const comparable = table.columns.filter((c) => isComparableSql(c.def.type));
  const parts: string[] = [];
  const fields = [`  count${table.columns.some((c) => !NOT_ENUM_VALUES.has(c.field)) ? `(columns: [${b}_select_column!], distinct: Boolean)` : ''}: Int!`];
  if (numeric.length) {
    parts.push(`type ${b}_sum_fields {\n${numeric.map((c) => `  ${c.field}: numeric`).join('\n')}\n}`);
    parts.push(`type ${b}_avg_fields {\n${numeric.map((c) => `  ${c.field}: Float`).join('\n')}\n}`);
    fields.push(`  sum: ${b}_sum_fields`, `  avg: ${b}_avg_fields`);
  }
  if (comparable.length) {
    for (const kind of ['min', 'max']) parts.push(`type ${b}_${kind}_fields {\n${comparable.map((c) => `  ${c.field}: ${c.scalar}`).join('\n')}\n}`);
    fields.push(`  min: ${b}_min_fields`, `  max: ${b}_max_fields`);
  }
  parts.push(`type ${b}_aggregate_fields {\n${fields.join('\n')}\n}`);
  parts.push(`type ${b}_aggregate {\n  aggregate: ${b}_aggregate_fields\n  nodes: [${b}!]!\n}`);
  return parts.join('\n');
}

function queryFields(table: TableModel): string[] {
  const b = table.base;
  const fields = [`  ${b}(${LIST_ARGS(b)}): [${b}!]!`, `  ${b}_aggregate(${LIST_ARGS(b)}): ${b}_aggregate!`];
  if (table.primaryKey.length > 0) fields.push(`  ${b}_by_pk(${table.primaryKey.map((c) => `${c.field}: ${c.scalar}!`).join(', ')}): ${b}`);
  if (table.vectorColumns.length > 0) {
    const column = table.vectorColumns.length > 1 ? `, column: ${b}_select_column` : '';
    fields.push(`  ${b}_nearest(vector: vector!, k: Int!, where: ${b}_bool_exp${column}): [${b}!]!`);
  }
  return fields;
}

/** The query SDL of one tenant (without the mutation and subscription contributions). */
export function querySdl(model: SchemaModel): string {
  const parts = [
    ...CUSTOM_SCALARS.map((s) => `scalar ${s}`),
    `enum order_by {\n${Object.keys(ORDER_BY_SQL)
      .map((v) => `  ${v}`)
      .join('\n')}\n}`,
    comparisonTypes(),
  ];
  for (const table of model.tables) parts.push(objectType(table), inputTypes(table), aggregateTypes(table));
  const fields = model.tables.flatMap(queryFields);
  // A tenant without tables still has a valid Query type (federation adds _service to it).
  parts.push(`type Query {\n${fields.length ? fields.join('\n') : '  _tables_count: Int!'}\n}`);
  return parts.filter((p) => p !== '').join('\n\n');
}
