import type { FastifyInstance } from 'fastify';
import { SvcError } from '../../core/errors.js';
import { installErrorHandler, restEnvelope, type ErrorContext, type ErrorEnvelopeHook } from '../errors.js';

/**
 * The vector protocol's envelope: svcdb's (same codes, same status table) plus Pinecone's
 * top-level `status` and `message`, which its clients read (they show `message`).
 */
export const vectorEnvelope: ErrorEnvelopeHook = (error, answer) => ({ ...restEnvelope(error, answer), status: answer.status, message: error.message });

/** Errors of the vector protocol go through the one sender, in the vector envelope. */
export function installVectorErrors(app: FastifyInstance, context: ErrorContext): void {
  installErrorHandler(app, context, vectorEnvelope);
}

/** Pinecone's 404 for an index or a route of one. */
export const indexNotFound = (name: string): SvcError => new SvcError('NOT_FOUND', `Resource ${name} not found`, { index: name });
