import type { ColumnDef } from '../../../core/catalog.js';
import type { SqlType } from '../../../core/values.js';
import type { Collection } from './collection-table.js';
import { NAME_COLUMN } from './limits.js';

/** An OpenAPI 3.0 schema object (the JSON Schema subset OpenAPI 3.0 defines, plus nullable and readOnly). */
export type SchemaObject = Record<string, unknown>;

/**
 * The JSON form of each SQL type as the engine writes it in results (query/types/json-io.ts) and
 * reads it in bodies: the schema a generated client types a column with.
 */
function typeSchema(type: SqlType): SchemaObject {
  switch (type.name) {
    case 'bool':
      return { type: 'boolean' };
    case 'int2':
      return { type: 'integer', format: 'int32', minimum: -32768, maximum: 32767 };
    case 'int4':
      return { type: 'integer', format: 'int32' };
    // Beyond 2^53 the engine writes a BIGINT as a decimal string (a JSON number would lose digits).
    case 'int8':
      return { type: 'integer', format: 'int64', description: 'values beyond ±2^53 are sent as decimal strings' };
    case 'float4':
      return { type: 'number', format: 'float' };
    case 'float8':
      return { type: 'number', format: 'double' };
    // NUMERIC is exact: written as its decimal text; a JSON number is accepted on input.
    case 'numeric':
      return { type: 'string', format: 'decimal' };
    case 'text':
      return { type: 'string' };
    case 'varchar':
    case 'char':
      return type.length === undefined ? { type: 'string' } : { type: 'string', maxLength: type.length };
    case 'uuid':
      return { type: 'string', format: 'uuid' };
    // Any JSON value: the empty schema.
    case 'jsonb':
      return {};
    case 'timestamp':
    case 'timestamptz':
      return { type: 'string', format: 'date-time' };
    case 'date':
      return { type: 'string', format: 'date' };
    case 'vector':
      return { type: 'array', items: { type: 'number', format: 'float' }, minItems: type.dimension ?? 0, maxItems: type.dimension ?? 0 };
    // Elements may be NULL; a multi-dimensional value nests arrays, which items does not describe.
    case 'array':
      return { type: 'array', items: { ...typeSchema(type.element ?? { name: 'text' }), nullable: true } };
  }
}

function columnSchema(column: ColumnDef, readOnly: boolean): SchemaObject {
  return { ...typeSchema(column.type), ...(column.nullable ? { nullable: true } : {}), ...(readOnly ? { readOnly: true } : {}) };
}

/** The three schemas of one collection: the resource as read, the body of POST and PUT, the body of PATCH. */
export interface CollectionSchemas {
  readonly resource: SchemaObject;
  readonly input: SchemaObject;
  readonly patch: SchemaObject;
}

/** Schemas generated from the collection's table: a property per column, further fields when it has the extra column. */
export function collectionSchemas(collection: Collection): CollectionSchemas {
  const serverSet = new Set([collection.createdAt?.name, collection.updatedAt?.name].filter((n) => n !== undefined));
  const columns = collection.def.columns.filter((c) => c.id !== collection.extra?.id);
  const open = collection.extra !== null;
  const resourceProperties: Record<string, SchemaObject> = Object.fromEntries(columns.map((c) => [c.name, columnSchema(c, serverSet.has(c.name))]));
  const inputProperties: Record<string, SchemaObject> = Object.fromEntries(
    columns.filter((c) => !serverSet.has(c.name)).map((c) => [c.name, columnSchema(c, false)]),
  );
  // name is required of every write; without a column of its own it is an extra field.
  if (Object.hasOwn(inputProperties, NAME_COLUMN) || open)
    inputProperties[NAME_COLUMN] = { ...(inputProperties[NAME_COLUMN] ?? { type: 'string' }), minLength: 1 };
  const mustGive = columns
    .filter((c) => !c.nullable && c.defaultExpr === null && c.id !== collection.id.id && !serverSet.has(c.name) && c.name !== NAME_COLUMN)
    .map((c) => c.name);
  const description = `The collection ${collection.def.name} (table ${collection.def.schema}.${collection.def.name}).${open ? ' Fields without a column are kept in its JSONB column extra.' : ''}`;
  return {
    resource: { type: 'object', description, required: columns.map((c) => c.name), properties: resourceProperties, additionalProperties: open },
    input: { type: 'object', required: [NAME_COLUMN, ...mustGive], properties: inputProperties, additionalProperties: open },
    patch: { type: 'object', properties: inputProperties, additionalProperties: open },
  };
}

/** The spec's generic collection resource, and the input every collection takes. */
export const genericSchemas = {
  Resource: {
    type: 'object',
    required: ['id', 'name'],
    properties: {
      id: { type: 'string', format: 'uuid' },
      name: { type: 'string' },
      created_at: { type: 'string', format: 'date-time', readOnly: true },
      updated_at: { type: 'string', format: 'date-time', readOnly: true },
    },
    additionalProperties: true,
  },
  ResourceInput: {
    type: 'object',
    required: ['name'],
    properties: { id: { type: 'string', format: 'uuid' }, name: { type: 'string', minLength: 1 } },
    additionalProperties: true,
  },
  ResourcePatch: {
    type: 'object',
    properties: { name: { type: 'string', minLength: 1 } },
    additionalProperties: true,
  },
} as const;
