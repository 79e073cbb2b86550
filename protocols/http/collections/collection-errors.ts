import type { FastifyInstance } from 'fastify';
import { errorBody, installErrorHandlers, type ErrorContext, type ErrorEnvelopeHook } from '../../errors.js';

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

/** The collection interface's envelope: the error body at the top level, with request_id. */
export const collectionEnvelope: ErrorEnvelopeHook = (error, answer): CollectionErrorBody => ({ ...errorBody(error), request_id: answer.requestId });

/** Error and not-found handlers of the /v1 plugin: the one sender, in the collection envelope. */
export function installCollectionErrors(app: FastifyInstance, context: ErrorContext): void {
  installErrorHandlers(app, context, collectionEnvelope);
}
