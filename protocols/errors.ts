import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CODES, SvcError, isSvcError, type ErrorCode, type ErrorDetails } from '../core/errors.js';

/**
 * The ONE table from error code to HTTP status. TypeScript forces it complete; docs/errors.md lists
 * the same pairs and test/protocols/errors-doc.test.ts keeps the two in step.
 */
export const HTTP_STATUS_BY_CODE: Readonly<Record<ErrorCode, number>> = Object.freeze({
  AUTHENTICATION_REQUIRED: 401,
  AUTHENTICATION_FAILED: 401,
  AUTHORIZATION_DENIED: 403,
  INVALID_QUERY: 400,
  TABLE_NOT_FOUND: 404,
  // A column is part of the request, not a resource of the URL (PostgREST answers 400 too).
  COLUMN_NOT_FOUND: 400,
  CONSTRAINT_VIOLATION: 409,
  TYPE_MISMATCH: 422,
  // 504 as gRPC/Google APIs map DEADLINE_EXCEEDED; 408 means "the client was too slow to send"
  // and makes browsers and proxies retry the request on their own.
  QUERY_TIMEOUT: 504,
  RATE_LIMIT_EXCEEDED: 429,
  TRANSACTION_CONFLICT: 409,
  INTERNAL_ERROR: 500,
  VALIDATION_ERROR: 422,
  NOT_FOUND: 404,
  PAYLOAD_TOO_LARGE: 413,
  NOT_READY: 503,
  STORAGE_UNAVAILABLE: 503,
  LOG_CORRUPT: 500,
  DATA_DIR_INVALID: 500,
  DATA_DIR_LOCKED: 500,
  CONFIG_INVALID: 500,
  // A request asked for more than a configured limit allows (ids per fetch, rows per page...).
  LIMIT_EXCEEDED: 400,
  SHUTTING_DOWN: 503,
  // The resource exists but its state refuses the operation (cancel of a finished async query).
  INVALID_STATE: 409,
  // Server capacity, not a fault of the request: 503 as for other capacity refusals (PostgreSQL's
  // too_many_connections); LIMIT_EXCEEDED is 400, for requests asking more than a limit allows.
  TOO_MANY_CONNECTIONS: 503,
  // The client was too slow to send its request (headers or body): HTTP's own 408, which is
  // exactly this case (QUERY_TIMEOUT is the server being slow, 504).
  REQUEST_TIMEOUT: 408,
  // The GraphQL-over-HTTP spec's status for a request that fails before execution.
  GRAPHQL_PARSE_FAILED: 400,
  GRAPHQL_VALIDATION_FAILED: 400,
});

/**
 * The code given to requests fastify rejects before a handler runs (malformed JSON, schema
 * validation, bad Content-Type): the spec's 400 is "invalid syntax or parameters", and
 * INVALID_QUERY is the one 400 code of core/errors.ts. One line to change if core gains a
 * dedicated INVALID_REQUEST code.
 */
export const MALFORMED_REQUEST_CODE: ErrorCode = 'INVALID_QUERY';

/** The spec's error envelope. */
export interface ErrorEnvelope {
  readonly error: {
    readonly code: ErrorCode;
    readonly message: string;
    readonly details: ErrorDetails;
    readonly request_id: string;
  };
}

/** JSON schema of the envelope, for routes that declare their error responses. */
export const errorEnvelopeSchema = {
  $id: 'svcErrorEnvelope',
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'details', 'request_id'],
      properties: {
        code: { type: 'string', enum: [...ERROR_CODES] },
        message: { type: 'string' },
        details: { type: 'object', additionalProperties: true },
        request_id: { type: 'string' },
      },
    },
  },
} as const;

/** HTTP status of a code. */
export function httpStatusOf(code: ErrorCode): number {
  return HTTP_STATUS_BY_CODE[code];
}

/** The envelope for an error and the request it failed. */
export function errorEnvelope(error: SvcError, requestId: string): ErrorEnvelope {
  return { error: { code: error.code, message: error.message, details: error.details, request_id: requestId } };
}

export interface ErrorContext {
  /** To say what the limit is when a body is too large. */
  readonly bodyLimitBytes: number;
}

/**
 * Turn anything thrown while serving a request into a SvcError. Unknown errors become a bare
 * INTERNAL_ERROR: their message may carry internals (paths, SQL, stack) and is only logged.
 */
export function toSvcError(error: unknown, context: ErrorContext): SvcError {
  if (isSvcError(error)) return error;
  if (!(error instanceof Error)) return internalError();
  const fastifyError = error as Partial<FastifyError>;
  if (Array.isArray(fastifyError.validation)) return validationError(fastifyError as FastifyError);
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new SvcError(
        'PAYLOAD_TOO_LARGE',
        `request body is larger than the limit of ${context.bodyLimitBytes} bytes (SVC_BODY_LIMIT_BYTES)`,
        { limit_bytes: context.bodyLimitBytes },
      );
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return malformed('request body is not valid JSON', 'malformed_json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return malformed('request body is empty but Content-Type is application/json', 'empty_body');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return malformed('unsupported Content-Type; send application/json', 'unsupported_media_type');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return malformed('request body size does not match Content-Length', 'content_length_mismatch');
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return malformed('the URL is malformed or a path parameter is too long', 'bad_url');
    default:
      return fromStatus(fastifyError);
  }
}

/** Map fastify's remaining client errors by status; everything else is internal. */
function fromStatus(error: Partial<FastifyError>): SvcError {
  const status = error.statusCode;
  if (typeof status !== 'number' || status < 400 || status >= 500) return internalError();
  const message = error.message ?? 'bad request';
  if (status === 404) return new SvcError('NOT_FOUND', message);
  if (status === 413) return new SvcError('PAYLOAD_TOO_LARGE', message);
  if (status === 429) return new SvcError('RATE_LIMIT_EXCEEDED', message);
  return new SvcError(MALFORMED_REQUEST_CODE, message, { reason: 'bad_request' });
}

function validationError(error: FastifyError): SvcError {
  const first = error.validation?.[0];
  const location = error.validationContext ?? 'request';
  const path = first === undefined ? '' : first.instancePath.replace(/^\//, '').replaceAll('/', '.');
  const missing = first?.params?.['missingProperty'];
  const field = [path, typeof missing === 'string' ? missing : ''].filter((p) => p !== '').join('.');
  const reason = first?.message ?? 'is invalid';
  const where = field === '' ? location : `${location}.${field}`;
  // A well-formed body with wrong content is a validation error (422, the spec's "validation
  // error"); a bad query string or path parameter is a malformed request (400).
  const code: ErrorCode = location === 'body' ? 'VALIDATION_ERROR' : MALFORMED_REQUEST_CODE;
  return new SvcError(code, `${where} ${reason}`, {
    reason: 'schema_validation',
    location,
    ...(field === '' ? {} : { field }),
  });
}

function malformed(message: string, reason: string): SvcError {
  return new SvcError(MALFORMED_REQUEST_CODE, message, { reason });
}

function internalError(): SvcError {
  return new SvcError('INTERNAL_ERROR', 'internal error; the server log has the details under this request_id');
}

/** Send the envelope for an error, logging 4xx at info and 5xx at error (with the original error). */
export function sendError(original: unknown, request: FastifyRequest, reply: FastifyReply, context: ErrorContext): FastifyReply {
  const error = toSvcError(original, context);
  const statusCode = httpStatusOf(error.code);
  if (request.raw.destroyed) {
    // The client left (and so its query was cancelled): nothing failed on our side.
    request.log.info({ code: error.code, method: request.method, url: request.url }, 'client closed the request');
  } else if (statusCode >= 500) {
    request.log.error({ err: original, code: error.code, statusCode, method: request.method, url: request.url }, 'request failed');
  } else {
    request.log.info({ code: error.code, statusCode, method: request.method, url: request.url, reason: error.message }, 'request rejected');
  }
  const resetAt = error.code === 'RATE_LIMIT_EXCEEDED' ? error.details.reset_at : undefined;
  if (typeof resetAt === 'string' && !reply.hasHeader('retry-after')) {
    // Every 429 says when to come back (RFC 9110's Retry-After, in seconds).
    reply.header('retry-after', String(Math.max(1, Math.ceil((Date.parse(resetAt) - Date.now()) / 1000))));
  }
  return reply.code(statusCode).type('application/json; charset=utf-8').send(errorEnvelope(error, request.id));
}

/** Install the error handler and the not-found handler that answer with the envelope. */
export function installErrorHandlers(app: FastifyInstance, context: ErrorContext): void {
  app.setErrorHandler((error, request, reply) => sendError(error, request, reply, context));
  app.setNotFoundHandler((request, reply) => {
    const error = new SvcError('NOT_FOUND', `no route for ${request.method} ${request.url.split('?')[0]}`, {
      method: request.method,
    });
    return sendError(error, request, reply, context);
  });
}
