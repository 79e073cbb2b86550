import type { IncomingMessage } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { newUlid } from '../../core/ids.js';
import { SvcError } from '../../core/errors.js';
import { errorEnvelopeSchema, installErrorHandlers, sendError, type ErrorContext } from '../errors.js';

export const REQUEST_ID_HEADER = 'x-request-id';

/** Visible ASCII, no spaces: safe to echo and to log. Longer or odd ids are replaced, not refused. */
const CLIENT_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** The client's X-Request-ID when it is sane, else a fresh ULID (sortable by time). */
export function requestIdOf(raw: IncomingMessage): string {
  const header = raw.headers[REQUEST_ID_HEADER];
  return typeof header === 'string' && CLIENT_REQUEST_ID.test(header) ? header : newUlid();
}

/**
 * fastify's request lines, tuned to the house style: no "incoming request" line, the completion
 * line at debug (like PostgreSQL, which does not log every statement by default); failures are
 * logged once by the error handler (4xx info, 5xx error).
 */
class SvcLogController extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) {
      reply.log.error({ err: error, statusCode: reply.statusCode }, 'response failed');
      return;
    }
    reply.log.debug(
      { method: request.method, url: request.url, statusCode: reply.statusCode, responseTimeMs: reply.elapsedTime },
      'request completed',
    );
  }

  override routeNotFound(): void {}
}

export interface BaseServerOptions {
  readonly logger: FastifyBaseLogger;
  readonly bodyLimitBytes: number;
}

/**
 * A fastify instance with what every svcdb listener shares: request ids, the error envelope,
 * body limit, and a SHUTTING_DOWN answer once close() has begun. Library options are explicit.
 */
export function createBaseServer(options: BaseServerOptions): FastifyInstance {
  const context: ErrorContext = { bodyLimitBytes: options.bodyLimitBytes };
  const app = Fastify({
    loggerInstance: options.logger,
    logController: new SvcLogController({ requestIdLogLabel: 'request_id' }),
    genReqId: requestIdOf,
    requestIdHeader: false,
    bodyLimit: options.bodyLimitBytes,
    // Queries carry their own deadlines (timeout_ms); a socket-level timeout would cut streams.
    requestTimeout: 0,
    keepAliveTimeout: 72_000,
    connectionTimeout: 0,
    forceCloseConnections: 'idle',
    // Our own hook answers SHUTTING_DOWN in the envelope instead of fastify's fixed body.
    return503OnClosing: false,
    exposeHeadRoutes: true,
    routerOptions: { caseSensitive: true, ignoreTrailingSlash: false, maxParamLength: 200 },
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    ajv: {
      customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false },
      plugins: [],
    },
    frameworkErrors: (error, request, reply) => {
      reply.header(REQUEST_ID_HEADER, request.id);
      sendError(error, request, reply, context);
    },
  });
  app.addSchema(errorEnvelopeSchema);
  acceptEmptyJsonBodies(app);

  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    if (closing) {
      reply.header('connection', 'close');
      throw new SvcError('SHUTTING_DOWN', 'the server is shutting down; retry on another instance or after restart');
    }
  });
  installErrorHandlers(app, context);
  return app;
}

/**
 * Many clients send `Content-Type: application/json` on every request, DELETE and bodiless POSTs
 * (commit, rollback) included: an empty body is then no body, not malformed JSON. Anything else
 * goes to fastify's own parser (prototype-poisoning checks included).
 */
function acceptEmptyJsonBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '' || body.length === 0) {
      done(null, undefined);
      return;
    }
    parseJson(request, body as string, done);
  });
}
