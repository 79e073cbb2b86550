import type { FastifyInstance } from 'fastify';
import { SvcError } from '../../core/errors.js';
import { errorEnvelope, httpStatusOf, toSvcError, type ErrorContext } from '../errors.js';

/**
 * Errors of the vector protocol: svcdb's envelope (same codes, same status table) plus Pinecone's
 * top-level `status` and `message`, which its clients read (they show `message`).
 */
export function installVectorErrors(app: FastifyInstance, context: ErrorContext): void {
  app.setErrorHandler((original, request, reply) => {
    const error = toSvcError(original, context);
    const status = httpStatusOf(error.code);
    if (status >= 500) request.log.error({ err: original, code: error.code, statusCode: status, url: request.url }, 'request failed');
    else request.log.info({ code: error.code, statusCode: status, url: request.url, reason: error.message }, 'request rejected');
    return reply.code(status).type('application/json; charset=utf-8').send({ ...errorEnvelope(error, request.id), status, message: error.message });
  });
}

/** Pinecone's 404 for an index or a route of one. */
export const indexNotFound = (name: string): SvcError => new SvcError('NOT_FOUND', `Resource ${name} not found`, { index: name });
