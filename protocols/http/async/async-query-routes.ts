import type { FastifyPluginAsync } from 'fastify';
import { SvcError } from '../../../core/errors.js';
import type { AsyncQueries } from './async-queries.js';
import { asyncQueryView, cancelledView, submittedView } from './async-view.js';
import { callerOf, engineScope, principalOf } from '../../auth/principal.js';
import { maxRowsProperty, sqlBodySchema, type QueryRouteLimits } from '../query/sql-body-schema.js';

/** Async queries are for what should not hold a request open: 5 minutes, not POST /query's 30 s (docs/api.md). */
export const ASYNC_TIMEOUT_MS_DEFAULT = 300_000;
/** POST /query's default max_rows. */
const CALLBACK_URL_LENGTH_MAX = 2048;

interface AsyncBody {
  sql: string;
  params?: unknown[];
  timeout_ms: number;
  max_rows: number;
  callback_url?: string;
}

function bodySchema(limits: QueryRouteLimits) {
  return sqlBodySchema(
    limits,
    { max_rows: maxRowsProperty(limits), callback_url: { type: 'string', pattern: '^https?://', maxLength: CALLBACK_URL_LENGTH_MAX } },
    ASYNC_TIMEOUT_MS_DEFAULT,
  );
}

/** Query ids are ULIDs; anything else cannot name a record (and is answered 404 as well). */
const idParams = {
  type: 'object',
  required: ['query_id'],
  additionalProperties: false,
  properties: { query_id: { type: 'string', minLength: 1, maxLength: 64 } },
} as const;

const createdSchema = {
  type: 'object',
  required: ['query_id', 'status', 'status_url', 'estimated_time_ms'],
  properties: {
    query_id: { type: 'string' },
    status: { type: 'string' },
    status_url: { type: 'string' },
    estimated_time_ms: { type: 'integer' },
  },
} as const;

const cancelledSchema = {
  type: 'object',
  required: ['query_id', 'status', 'cancelled_at'],
  properties: { query_id: { type: 'string' }, status: { type: 'string' }, cancelled_at: { type: 'string' } },
} as const;

function checkedCallbackUrl(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  if (!URL.canParse(raw)) {
    throw new SvcError('VALIDATION_ERROR', 'body.callback_url is not a valid http(s) URL', {
      reason: 'schema_validation',
      location: 'body',
      field: 'callback_url',
    });
  }
  return raw;
}

/** POST /query/async, GET /query/{query_id}, DELETE /query/{query_id} (under /api/v1). */
export function asyncQueryRoutes(options: { queries: AsyncQueries; limits: QueryRouteLimits }): FastifyPluginAsync {
  const { queries } = options;
  return async (app) => {
    app.post<{ Body: AsyncBody }>(
      '/query/async',
      { schema: { body: bodySchema(options.limits), response: { 202: createdSchema } } },
      async (request, reply) => {
        const body = request.body;
        const callbackUrl = checkedCallbackUrl(body.callback_url);
        const created = queries.submit({
          sql: body.sql,
          params: body.params ?? [],
          timeoutMs: body.timeout_ms,
          maxRows: body.max_rows,
          callbackUrl,
          owner: principalOf(request).credential,
          ...engineScope(request),
        });
        const statusUrl = queries.statusPath(created.queryId);
        return reply.code(202).header('location', statusUrl).send(submittedView(created, statusUrl));
      },
    );
    app.get<{ Params: { query_id: string } }>('/query/:query_id', { schema: { params: idParams } }, async (request) => {
      const info = queries.get(request.params.query_id, callerOf(request));
      return asyncQueryView(info, queries.statusPath(info.queryId));
    });
    app.delete<{ Params: { query_id: string } }>('/query/:query_id', { schema: { params: idParams, response: { 200: cancelledSchema } } }, async (request) =>
      cancelledView(queries.cancel(request.params.query_id, callerOf(request))),
    );
  };
}
