import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { engineScope } from '../../auth/principal.js';
import { untilClientLeaves } from '../client-abort.js';
import { TIMEOUT_MS_DEFAULT } from '../query/sql-body-schema.js';
import type { Caller, CollectionStore } from './collection-store.js';
import { COLLECTION_NAME_PATTERN, ID_PARAM_LENGTH_MAX, LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, LIST_OFFSET_MAX } from './limits.js';

export interface CollectionRouteLimits {
  readonly queryTimeoutMsMax: number;
  readonly resultRowsMax: number;
}

const collectionParam = { type: 'string', pattern: COLLECTION_NAME_PATTERN } as const;
const idParam = { type: 'string', minLength: 1, maxLength: ID_PARAM_LENGTH_MAX } as const;
const collectionParams = { type: 'object', required: ['collection'], properties: { collection: collectionParam } } as const;
const itemParams = { type: 'object', required: ['collection', 'id'], properties: { collection: collectionParam, id: idParam } } as const;
const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: LIST_LIMIT_MAX, default: LIST_LIMIT_DEFAULT },
    offset: { type: 'integer', minimum: 0, maximum: LIST_OFFSET_MAX, default: 0 },
  },
} as const;

type CollectionRequest = { Params: { collection: string } };
type ItemRequest = { Params: { collection: string; id: string } };

/**
 * GET/POST /api/{collection}, GET/PUT/PATCH/DELETE /api/{collection}/{id} (under /v1). Bodies are
 * checked by resource.ts rather than by a route schema: each collection has its own fields, and a
 * wrong type is refused in the collection interface's words.
 */
export function collectionRoutes(store: CollectionStore, limits: CollectionRouteLimits): FastifyPluginAsync {
  const callerOf = (request: FastifyRequest, signal?: AbortSignal): Caller => ({
    timeoutMs: Math.min(TIMEOUT_MS_DEFAULT, limits.queryTimeoutMsMax),
    maxRows: limits.resultRowsMax,
    ...engineScope(request),
    ...(signal ? { signal } : {}),
  });
  const location = (request: FastifyRequest<CollectionRequest>, id: unknown): string =>
    `/v1/api/${request.params.collection}/${encodeURIComponent(String(id))}`;

  return async (app) => {
    app.get<CollectionRequest & { Querystring: { limit: number; offset: number } }>(
      '/api/:collection',
      { schema: { params: collectionParams, querystring: listQuery } },
      async (request, reply) => {
        const page = { limit: Math.min(request.query.limit, limits.resultRowsMax), offset: request.query.offset };
        return untilClientLeaves(reply, (signal) => store.list(request.params.collection, page, callerOf(request, signal)));
      },
    );

    app.post<CollectionRequest>('/api/:collection', { schema: { params: collectionParams } }, async (request, reply) => {
      const resource = await store.create(request.params.collection, request.body, callerOf(request));
      return reply.code(201).header('location', location(request, resource.id)).send(resource);
    });

    app.get<ItemRequest>('/api/:collection/:id', { schema: { params: itemParams } }, async (request, reply) => {
      return untilClientLeaves(reply, (signal) => store.get(request.params.collection, request.params.id, callerOf(request, signal)));
    });

    app.put<ItemRequest>('/api/:collection/:id', { schema: { params: itemParams } }, async (request, reply) => {
      const { resource, created } = await store.replace(request.params.collection, request.params.id, request.body, callerOf(request));
      if (created) reply.code(201).header('location', location(request, resource.id));
      return reply.send(resource);
    });

    app.patch<ItemRequest>('/api/:collection/:id', { schema: { params: itemParams } }, async (request) => {
      return store.merge(request.params.collection, request.params.id, request.body, callerOf(request));
    });

    app.delete<ItemRequest>('/api/:collection/:id', { schema: { params: itemParams } }, async (request, reply) => {
      await store.remove(request.params.collection, request.params.id, callerOf(request));
      return reply.code(204).send();
    });
  };
}
