import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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

/** The error object every protocol's envelope carries (the async query record carries it too). */
export interface ErrorBody {
  readonly code: ErrorCode;
  readonly message: string;
  readonly details: ErrorDetails;
}

/** The spec's error envelope (REST /api/v1 and the server's plumbing). */
export interface ErrorEnvelope {
  readonly error: ErrorBody & { readonly request_id: string };
}

/**
 * What a protocol wraps an error in; the one sender does the rest (status, logging, Retry-After,
 * the client-left branch). REST's is `restEnvelope`; the vector protocol adds Pinecone's
 * `status` and `message`; GraphQL will put the code in `extensions.code`.
 */
export type ErrorEnvelopeHook = (error: SvcError, answer: { readonly requestId: string; readonly status: number }) => unknown;

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

/** camelCase → snake_case (`limitBytes` → `limit_bytes`, `httpStatus`/`HTTPStatus` → `http_status`); snake_case stays. */
function snakeCase(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/**
 * `details` as sent: top-level keys in snake_case, whatever layer raised the error (the wire's
 * one style, like every other field of the API). Values are left as they are: they may hold
 * the client's own names (columns, metadata keys).
 */
export function wireDetails(details: ErrorDetails): ErrorDetails {
  const keys = Object.keys(details);
  if (keys.every((key) => snakeCase(key) === key)) return details;
  return Object.fromEntries(keys.map((key) => [snakeCase(key), details[key]]));
}

/** The code, message and wire details of an error: the part every envelope shares. */
export function errorBody(error: SvcError): ErrorBody {
  return { code: error.code, message: error.message, details: wireDetails(error.details) };
}

/** The spec's envelope: `{ error: { code, message, details, request_id } }`. */
export const restEnvelope = (error: SvcError, answer: { readonly requestId: string }): ErrorEnvelope => ({
  error: { ...errorBody(error), request_id: answer.requestId },
});

/** The envelope for an error and the request it failed. */
export function errorEnvelope(error: SvcError, requestId: string): ErrorEnvelope {
  return restEnvelope(error, { requestId });
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
      return new SvcError('PAYLOAD_TOO_LARGE', `request body is larger than the limit of ${context.bodyLimitBytes} bytes (SVC_BODY_LIMIT_BYTES)`, {
        limit_bytes: context.bodyLimitBytes,
      });
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

/**
 * Log a failed request once: a client that left at info (nothing failed on our side), 4xx at
 * info, 5xx at error with the original error (its message and stack stay in the log).
 */
export function logFailure(
  log: FastifyBaseLogger,
  failure: { readonly error: SvcError; readonly original: unknown; readonly clientLeft: boolean },
  fields: Record<string, unknown>,
  messages: { readonly left: string; readonly failed: string; readonly rejected: string },
): void {
  const { error, original } = failure;
  const statusCode = httpStatusOf(error.code);
  if (failure.clientLeft) log.info({ code: error.code, ...fields }, messages.left);
  else if (statusCode >= 500) log.error({ err: original, code: error.code, statusCode, ...fields }, messages.failed);
  else log.info({ code: error.code, statusCode, ...fields, reason: error.message }, messages.rejected);
}

const REQUEST_LOG_MESSAGES = { left: 'client closed the request', failed: 'request failed', rejected: 'request rejected' } as const;

/**
 * The one sender: the status from HTTP_STATUS_BY_CODE, one log line (logFailure), Retry-After on
 * every 429, and the protocol's envelope (`envelope`, REST's by default).
 */
export function sendError(
  original: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
  context: ErrorContext,
  envelope: ErrorEnvelopeHook = restEnvelope,
): FastifyReply {
  const error = toSvcError(original, context);
  const status = httpStatusOf(error.code);
  // The client left (and so its query was cancelled): the answer goes nowhere. Asked of the response,
  // which node destroys when its connection closes: the request is destroyed too once its body has
  // been read, whether the client is still there or not (every POST that failed after a turn of the
  // event loop was logged as a client that left, and a server failure at info without its stack).
  // (HTTP/2's response has no `destroyed`: its stream's says the same. A pipelined request's response
  // waiting behind another has no socket yet, and node does not destroy it: the request's socket says it.)
  const raw = reply.raw as { destroyed?: boolean; stream?: { destroyed: boolean } };
  const clientLeft = raw.destroyed === true || raw.stream?.destroyed === true || request.raw.socket?.destroyed === true;
  logFailure(request.log, { error, original, clientLeft }, { method: request.method, url: request.url }, REQUEST_LOG_MESSAGES);
  const resetAt = error.code === 'RATE_LIMIT_EXCEEDED' ? error.details['reset_at'] : undefined;
  if (typeof resetAt === 'string' && !reply.hasHeader('retry-after')) {
    // Every 429 says when to come back (RFC 9110's Retry-After, in seconds).
    reply.header('retry-after', String(Math.max(1, Math.ceil((Date.parse(resetAt) - Date.now()) / 1000))));
  }
  return reply
    .code(status)
    .type('application/json; charset=utf-8')
    .send(envelope(error, { requestId: request.id, status }));
}

/** Answer every error thrown in `app` (and its child plugins) through the one sender, in `envelope`. */
export function installErrorHandler(app: FastifyInstance, context: ErrorContext, envelope: ErrorEnvelopeHook = restEnvelope): void {
  app.setErrorHandler((error, request, reply) => sendError(error, request, reply, context, envelope));
}

/** Answer requests no route of `app` matches with 404 NOT_FOUND, through the one sender, in `envelope`. */
export function installNotFoundHandler(app: FastifyInstance, context: ErrorContext, envelope: ErrorEnvelopeHook = restEnvelope): void {
  app.setNotFoundHandler((request, reply) => {
    const error = new SvcError('NOT_FOUND', `no route for ${request.method} ${request.url.split('?')[0]}`, {
      method: request.method,
    });
    return sendError(error, request, reply, context, envelope);
  });
}

/** Install the error handler and the not-found handler that answer with the envelope. */
export function installErrorHandlers(app: FastifyInstance, context: ErrorContext, envelope: ErrorEnvelopeHook = restEnvelope): void {
  installErrorHandler(app, context, envelope);
  installNotFoundHandler(app, context, envelope);
}
