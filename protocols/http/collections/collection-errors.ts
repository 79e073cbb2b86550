import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SvcError } from '../../../core/errors.js';
import { httpStatusOf, toSvcError, type ErrorContext } from '../../errors.js';

/**
 * The collection interface's error body: `{code, message, details}` at the top level, as the spec
 * says for this interface (the /api/v1 envelope nests them under `error`). Same codes, same status
 * table, same logging; request_id is added beside them, as every svcdb error carries it.
 */
export interface CollectionErrorBody {
  readonly code: string;
  readonly message: string;
  readonly details: Record<string, unknown>;
  readonly request_id: string;
}

/** JSON schema of the body, for the OpenAPI document. */
export const collectionErrorSchema = {
  type: 'object',
  required: ['code', 'message', 'details'],
  properties: {
    code: { type: 'string' },
    message: { type: 'string' },
    details: { type: 'object', additionalProperties: true },
    request_id: { type: 'string' },
  },
} as const;

function sendCollectionError(original: unknown, request: FastifyRequest, reply: FastifyReply, context: ErrorContext): FastifyReply {
  const error = toSvcError(original, context);
  const statusCode = httpStatusOf(error.code);
  if (request.raw.destroyed) request.log.info({ code: error.code, method: request.method, url: request.url }, 'client closed the request');
  else if (statusCode >= 500) request.log.error({ err: original, code: error.code, statusCode, method: request.method, url: request.url }, 'request failed');
  else request.log.info({ code: error.code, statusCode, method: request.method, url: request.url, reason: error.message }, 'request rejected');
  const resetAt = error.code === 'RATE_LIMIT_EXCEEDED' ? error.details.reset_at : undefined;
  if (typeof resetAt === 'string' && !reply.hasHeader('retry-after')) {
    reply.header('retry-after', String(Math.max(1, Math.ceil((Date.parse(resetAt) - Date.now()) / 1000))));
  }
  const body: CollectionErrorBody = { code: error.code, message: error.message, details: error.details, request_id: request.id };
  return reply.code(statusCode).type('application/json; charset=utf-8').send(body);
}

/**
 * Error and not-found handlers of the /v1 plugin. (To be folded into protocols/errors.ts's one
 * sender as an envelope shape; until then this mirrors sendError.)
 */
export function installCollectionErrors(app: FastifyInstance, context: ErrorContext): void {
  app.setErrorHandler((error, request, reply) => sendCollectionError(error, request, reply, context));
  app.setNotFoundHandler((request, reply) => {
    const error = new SvcError('NOT_FOUND', `no route for ${request.method} ${request.url.split('?')[0]}`, { method: request.method });
    return sendCollectionError(error, request, reply, context);
  });
}
