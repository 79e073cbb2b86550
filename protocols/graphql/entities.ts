import type { GraphQLFieldResolver, GraphQLResolveInfo } from 'graphql';
import { SvcError } from '../../core/errors.js';
import { getNamedType, GraphQLError, GraphQLScalarType, isObjectType, type GraphQLSchema } from './graphql-lib.js';
import type { SchemaModel, TableModel } from './model.js';

type Row = Record<string, unknown>;

const badRepresentation = (message: string, details: Record<string, unknown>): SvcError =>
  new SvcError('VALIDATION_ERROR', message, { reason: 'graphql_entity', ...details });

/** `value` coerced by `scalar` as a variable would be; null is no key. */
function coerced(scalar: GraphQLScalarType, value: unknown): unknown {
  const parsed: unknown = scalar.parseValue(value);
  if (parsed === undefined || parsed === null) throw new Error('no value');
  return parsed;
}

/**
 * A representation's primary key, each component coerced by its column's scalar (as a variable
 * would be), so a bad key fails its own entity instead of the statement its batch shares.
 */
export function entityKey(table: TableModel, reference: Row, info: GraphQLResolveInfo): unknown[] {
  const type = info.schema.getType(table.base);
  const fields = type && isObjectType(type) ? type.getFields() : {};
  return table.primaryKey.map((column) => {
    const value = reference[column.field];
    if (value === undefined || value === null)
      throw badRepresentation(`${table.base}: the representation lacks its key ${column.field}`, { field: column.field });
    const scalar = fields[column.field] ? getNamedType(fields[column.field]!.type) : undefined;
    if (!(scalar instanceof GraphQLScalarType)) return value;
    try {
      return coerced(scalar, value);
    } catch (error) {
      // A gateway may send a numeric key as text ("5", as keys are in JSON objects): taken when its number fits.
      if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) {
        try {
          return coerced(scalar, Number(value));
        } catch {
          // The text's own error below says more.
        }
      }
      const reason = error instanceof GraphQLError || error instanceof SvcError ? error.message : 'not a valid value';
      throw badRepresentation(`${table.base}: bad key ${column.field}: ${reason}`, { field: column.field });
    }
  });
}

/**
 * Federation's `_entities`, answered entity by entity: each representation runs through the
 * original resolver alone, so a bad one nulls only its own entry (with its error), and a
 * `__typename` that is no table with a primary key is VALIDATION_ERROR (the library's is an
 * internal error failing the whole list).
 */
export function entitiesOneByOne(schema: GraphQLSchema, model: SchemaModel): void {
  const field = schema.getQueryType()?.getFields()._entities;
  if (!field?.resolve) return;
  const original: GraphQLFieldResolver<unknown, unknown> = field.resolve;
  field.resolve = (source, args: { representations?: readonly Row[] }, context, info) =>
    (args.representations ?? []).map(async (reference) => {
      const typename = reference?.__typename;
      const table = typeof typename === 'string' ? model.tableByBase.get(typename) : undefined;
      if (!table || table.primaryKey.length === 0) {
        throw badRepresentation(`_entities: ${JSON.stringify(typename ?? null)} is no entity type of this schema`, { typename: typename ?? null });
      }
      const [entity] = (await original(source, { representations: [reference] }, context, info)) as unknown[];
      return entity;
    });
}
