import { OFFSET_MAX } from '../rows/rows-schemas.js';

/** JSON schemas of the table routes (tables-routes.ts). Unknown fields are refused everywhere. */

/** Names of tables, columns and indexes: no double quote (svcdb's SQL cannot quote one) and no NUL. */
const NAME = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[^"\\u0000]+$' } as const;

/** At most 1600 columns, as PostgreSQL. */
export const COLUMNS_MAX = 1600;
/** Indexes in one request, and operations in one PATCH. */
export const DEFINITIONS_MAX = 100;
/** Tables per page of GET /tables: all of them by default, as a catalog listing should be. */
export const TABLE_LIST_LIMIT_MAX = 10_000;

export const tableParams = {
  type: 'object',
  required: ['table_name'],
  additionalProperties: false,
  properties: { table_name: { type: 'string', minLength: 1, maxLength: 200 } },
} as const;

const sqlText = (maxBytes: number) => ({ type: 'string', minLength: 1, maxLength: maxBytes });

export function columnDefinitionSchema(queryTextBytesMax: number) {
  return {
    type: 'object',
    required: ['name', 'type'],
    additionalProperties: false,
    properties: {
      name: NAME,
      type: { type: 'string', minLength: 1, maxLength: 128 },
      nullable: { type: 'boolean' },
      primary_key: { type: 'boolean' },
      default: { anyOf: [sqlText(queryTextBytesMax), { type: 'number' }, { type: 'boolean' }, { type: 'null' }] },
      check: { anyOf: [sqlText(queryTextBytesMax), { type: 'null' }] },
    },
  } as const;
}

export const indexDefinitionSchema = {
  type: 'object',
  required: ['columns'],
  additionalProperties: false,
  properties: {
    name: NAME,
    columns: { type: 'array', minItems: 1, maxItems: 32, items: NAME },
    unique: { type: 'boolean', default: false },
    type: { type: 'string', enum: ['btree', 'hnsw'], default: 'btree' },
    options: {
      type: 'object',
      maxProperties: 16,
      propertyNames: { pattern: '^[a-z_][a-z0-9_]{0,62}$' },
      // hnsw: the distance its operator class serves, as GET /tables/{name} shows it.
      properties: { metric: { type: 'string', enum: ['cosine', 'l2', 'inner_product'] } },
      additionalProperties: { type: 'integer', minimum: 0, maximum: 1_000_000_000 },
    },
  },
} as const;

export function createTableSchema(queryTextBytesMax: number) {
  return {
    type: 'object',
    required: ['name', 'columns'],
    additionalProperties: false,
    properties: {
      name: NAME,
      schema: { ...NAME, default: 'public' },
      columns: { type: 'array', minItems: 1, maxItems: COLUMNS_MAX, items: columnDefinitionSchema(queryTextBytesMax) },
      indexes: { type: 'array', maxItems: DEFINITIONS_MAX, items: indexDefinitionSchema },
      if_not_exists: { type: 'boolean', default: false },
    },
  } as const;
}

/** `then: required` per operation, so a missing field is named (operations.0 must have column). */
const needs = (operation: string, fields: string[]) => ({ if: { properties: { operation: { const: operation } } }, then: { required: fields } });

export function alterTableSchema(queryTextBytesMax: number) {
  return {
    type: 'object',
    required: ['operations'],
    additionalProperties: false,
    properties: {
      operations: {
        type: 'array',
        minItems: 1,
        maxItems: DEFINITIONS_MAX,
        items: {
          type: 'object',
          required: ['operation'],
          additionalProperties: false,
          properties: {
            operation: { type: 'string', enum: ['add_column', 'drop_column', 'rename_column', 'add_index'] },
            column: columnDefinitionSchema(queryTextBytesMax),
            column_name: NAME,
            old_name: NAME,
            new_name: NAME,
            index: indexDefinitionSchema,
          },
          allOf: [
            needs('add_column', ['column']),
            needs('drop_column', ['column_name']),
            needs('rename_column', ['old_name', 'new_name']),
            needs('add_index', ['index']),
          ],
        },
      },
    },
  } as const;
}

export const listTablesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    schema: { type: 'string', minLength: 1, maxLength: 128 },
    pattern: { type: 'string', minLength: 1, maxLength: 1000 },
    include_views: { type: 'boolean', default: true },
    include_system: { type: 'boolean', default: false },
    limit: { type: 'integer', minimum: 1, maximum: TABLE_LIST_LIMIT_MAX, default: TABLE_LIST_LIMIT_MAX },
    offset: { type: 'integer', minimum: 0, maximum: OFFSET_MAX, default: 0 },
  },
} as const;

export const dropTableQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    cascade: { type: 'boolean', default: false },
    if_exists: { type: 'boolean', default: false },
  },
} as const;
