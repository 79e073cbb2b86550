import { SVC_VERSION } from '../../../core/version.js';
import { collectionErrorSchema } from './collection-errors.js';
import type { Collection } from './collection-table.js';
import { COLLECTION_NAME_PATTERN, LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, LIST_OFFSET_MAX } from './limits.js';
import { collectionSchemas, genericSchemas, type SchemaObject } from './openapi-schemas.js';

/** Collections described one by one in a document at most; past it the generic paths still cover them. */
export const OPENAPI_COLLECTIONS_MAX = 1000;

const ref = (path: string): SchemaObject => ({ $ref: `#/components/${path}` });
const json = (schema: SchemaObject): SchemaObject => ({ content: { 'application/json': { schema } } });

/**
 * The error answers an operation may give, each the collection error body: the ones a client
 * should expect by name, and `default` for the rest (409 not_a_collection, 5xx, 504 timeouts).
 */
function errors(...statuses: number[]): Record<string, SchemaObject> {
  const named = [...new Set([...statuses, 401, 403, 429])].sort((a, b) => a - b);
  return { ...Object.fromEntries(named.map((s) => [String(s), ref('responses/Error')])), default: ref('responses/Error') };
}

interface Shapes {
  readonly resource: SchemaObject;
  readonly input: SchemaObject;
  readonly patch: SchemaObject;
}

/** The six operations over one collection (or, with `suffix` null, any collection). */
function operations(shapes: Shapes, suffix: string | null, what: string): { list: SchemaObject; item: SchemaObject } {
  const id = (verb: string): string => (suffix === null ? `${verb}Resource` : `${verb}_${suffix}`);
  const collectionParameter = suffix === null ? [ref('parameters/collection')] : [];
  const list = {
    ...(collectionParameter.length > 0 ? { parameters: collectionParameter } : {}),
    get: {
      operationId: id('list'),
      summary: `List ${what}, oldest first`,
      parameters: [ref('parameters/limit'), ref('parameters/offset')],
      responses: { 200: { description: `A page of ${what}`, ...json({ type: 'array', items: shapes.resource }) }, ...errors(400, 404) },
    },
    post: {
      operationId: id('create'),
      summary: `Create one of ${what}`,
      requestBody: { required: true, ...json(shapes.input) },
      responses: { 201: { description: 'Created', ...json(shapes.resource) }, ...errors(400, 404, 409, 413, 422) },
    },
  };
  const item = {
    parameters: [...collectionParameter, ref('parameters/id')],
    get: {
      operationId: id('get'),
      summary: 'Read one by id',
      responses: { 200: { description: 'The resource', ...json(shapes.resource) }, ...errors(400, 404) },
    },
    put: {
      operationId: id('replace'),
      summary: 'Replace one by id, or create it with that id',
      requestBody: { required: true, ...json(shapes.input) },
      responses: {
        200: { description: 'Replaced', ...json(shapes.resource) },
        201: { description: 'Created', ...json(shapes.resource) },
        ...errors(400, 404, 409, 413, 422),
      },
    },
    patch: {
      operationId: id('update'),
      summary: 'Change the given fields of one (a null removes an extra field)',
      requestBody: { required: true, ...json(shapes.patch) },
      responses: { 200: { description: 'Updated', ...json(shapes.resource) }, ...errors(400, 404, 409, 413, 422) },
    },
    delete: { operationId: id('delete'), summary: 'Delete one by id', responses: { 204: { description: 'Deleted' }, ...errors(400, 404) } },
  };
  return { list, item };
}

const components = {
  securitySchemes: {
    ApiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
    BearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
  },
  parameters: {
    collection: { name: 'collection', in: 'path', required: true, schema: { type: 'string', pattern: COLLECTION_NAME_PATTERN } },
    id: { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'The id (a UUID in collections made by svcdb)' },
    limit: { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: LIST_LIMIT_MAX, default: LIST_LIMIT_DEFAULT } },
    offset: { name: 'offset', in: 'query', schema: { type: 'integer', minimum: 0, maximum: LIST_OFFSET_MAX, default: 0 } },
  },
  responses: { Error: { description: 'An error: code, message, details', ...json(ref('schemas/Error')) } },
};

/**
 * The OpenAPI 3.0 document of the collection interface for one tenant: the generic paths, and a
 * path pair and schemas per collection, generated from its table as the catalog has it now (so
 * an ALTER TABLE shows in the next document).
 */
export function openApiDocument(collections: readonly Collection[], serverUrl: string): Record<string, unknown> {
  const described = collections.slice(0, OPENAPI_COLLECTIONS_MAX);
  const generic = operations(
    { resource: ref('schemas/Resource'), input: ref('schemas/ResourceInput'), patch: ref('schemas/ResourcePatch') },
    null,
    'resources of a collection',
  );
  const paths: Record<string, unknown> = {
    '/api/{collection}': generic.list,
    '/api/{collection}/{id}': generic.item,
    '/openapi.json': {
      get: {
        operationId: 'getOpenApi',
        summary: 'This document',
        responses: { 200: { description: 'OpenAPI 3.0 document', ...json({ type: 'object' }) }, ...errors() },
      },
    },
  };
  const schemas: Record<string, unknown> = { ...genericSchemas, Error: collectionErrorSchema };
  for (const collection of described) {
    const name = collection.def.name;
    const shapes = collectionSchemas(collection);
    schemas[`collections.${name}`] = shapes.resource;
    schemas[`collections.${name}.input`] = shapes.input;
    schemas[`collections.${name}.patch`] = shapes.patch;
    const refs = {
      resource: ref(`schemas/collections.${name}`),
      input: ref(`schemas/collections.${name}.input`),
      patch: ref(`schemas/collections.${name}.patch`),
    };
    const own = operations(refs, name, `resources of ${name}`);
    paths[`/api/${name}`] = own.list;
    paths[`/api/${name}/{id}`] = own.item;
  }
  const omitted = collections.length - described.length;
  return {
    openapi: '3.0.0',
    info: {
      title: 'svcdb collection interface',
      version: SVC_VERSION,
      description: 'Collections are svcdb tables: SQL, REST rows, GraphQL and CDC see the same data. See docs/collections.md.',
      ...(omitted > 0 ? { 'x-collections-omitted': omitted } : {}),
    },
    servers: [{ url: serverUrl }],
    security: [{ ApiKeyAuth: [] }, { BearerAuth: [] }],
    paths,
    components: { ...components, schemas },
  };
}
