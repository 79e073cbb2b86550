import { maxHeaderSize, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Http2ServerRequest, Http2Session, Http2SecureServer } from 'node:http2';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyHttp2SecureOptions,
  type FastifyHttpOptions,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type preSerializationHookHandler,
} from 'fastify';
import { stringifyJson } from '../../core/json-exact.js';
import { SvcError, shuttingDown } from '../../core/errors.js';
import { errorEnvelopeSchema, installErrorHandlers, sendError, type ErrorContext } from '../errors.js';
import type { RateLimitGate } from '../auth/rate-limit.js';
import { answerClientError } from './client-errors.js';
import type { DirectRoutes } from './direct/direct-lane.js';
import { inFrontOfFastify } from './in-front.js';
import { cannotPoison, keptValue, takenBeforeClosing } from './direct/kept-body.js';
import { lazyChildLogger } from './lazy-logger.js';
import { countUnmatched, showLimit } from './rate-limit-headers.js';
import { ajvOptions, requestValidators } from './request-validators.js';
import { REQUEST_ID_HEADER, requestIdOf } from './request-id.js';

export { REQUEST_ID_HEADER, requestIdOf } from './request-id.js';

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
    // Asked first: the line's object (and the elapsed time read) would be built for nothing at info.
    if ((reply.log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.('debug') === false) return;
    reply.log.debug({ method: request.method, url: request.url, statusCode: reply.statusCode, responseTimeMs: reply.elapsedTime }, 'request completed');
  }

  override routeNotFound(): void {}
}

/** Key and certificate chain of an HTTPS listener (PEM). */
export interface TlsMaterial {
  readonly key: string | Buffer;
  readonly cert: string | Buffer;
}

export interface BaseServerOptions {
  readonly logger: FastifyBaseLogger;
  readonly bodyLimitBytes: number;
  /** Time a client has to send a request's headers (slowloris); then 408 REQUEST_TIMEOUT and close. */
  readonly headersTimeoutMs: number;
  /** Time a client has to send a whole request, body included; the response is not limited. */
  readonly requestTimeoutMs: number;
  /** Set: X-RateLimit-* on every answer of the listener, unmatched paths counted per address. */
  readonly rateLimit?: RateLimitGate;
  /** Set: an HTTPS listener speaking HTTP/2, and HTTP/1.1 to clients that do not offer h2 (ALPN). */
  readonly tls?: TlsMaterial;
  /** Asked of every request after its id is set (e.g. the connection limit): the error to answer with, or undefined. */
  readonly admit?: (request: FastifyRequest, reply: FastifyReply) => Error | undefined;
  /** Every payload sent passes through it (e.g. content negotiation): what to send instead, or the payload itself. */
  readonly reencode?: (request: FastifyRequest, reply: FastifyReply, payload: unknown) => unknown;
  /**
   * Set on a plain HTTP listener: the direct path (direct/direct-lane.ts) answers the point reads in
   * front of fastify; `refuses` says a connection was accepted past the connection limit.
   */
  readonly direct?: { readonly routes: DirectRoutes; refuses(socket: Socket): boolean };
}

/** Idle keep-alive connections and HTTP/2 sessions are closed after this long (as nginx's 75 s). */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/** How often node looks for requests past their timeouts (its default, 30 s, would let one run 30 s late). */
const checkingIntervalMs = (headersTimeoutMs: number): number => Math.max(100, Math.min(1000, Math.floor(headersTimeoutMs / 4)));

/**
 * Ends the connection once this response is sent: `Connection: close` on HTTP/1.1; on HTTP/2, where
 * that header is forbidden, a graceful GOAWAY (the session's open streams still finish).
 */
export function closeAfterResponse(request: FastifyRequest, reply: FastifyReply): void {
  if (request.raw.httpVersionMajor >= 2) (request.raw as unknown as Http2ServerRequest).stream.session?.close();
  else reply.header('connection', 'close');
}

/**
 * A fastify instance with what every svcdb listener shares: request ids, the error envelope,
 * body limit, and a SHUTTING_DOWN answer once close() has begun. Library options are explicit.
 */
export function createBaseServer(options: BaseServerOptions): FastifyInstance {
  const context: ErrorContext = { bodyLimitBytes: options.bodyLimitBytes };
  if (options.headersTimeoutMs > options.requestTimeoutMs) {
    throw new SvcError(
      'CONFIG_INVALID',
      `headersTimeoutMs (${options.headersTimeoutMs}) must not be larger than requestTimeoutMs (${options.requestTimeoutMs})`,
      { setting: 'headersTimeoutMs' },
    );
  }
  const clientErrors = {
    headersTimeoutMs: options.headersTimeoutMs,
    requestTimeoutMs: options.requestTimeoutMs,
    headerBytesMax: maxHeaderSize,
    ...(options.rateLimit ? { rateLimit: options.rateLimit } : {}),
  };
  // close() has begun (the preClose hook below): requests are answered SHUTTING_DOWN.
  let closing = false;
  const app = createFastify(options, () => closing, {
    loggerInstance: options.logger,
    logController: new SvcLogController({ requestIdLogLabel: 'request_id' }),
    // A request's logger is made only when it logs (lazy-logger.ts says why).
    childLoggerFactory: lazyChildLogger,
    genReqId: requestIdOf,
    requestIdHeader: false,
    bodyLimit: options.bodyLimitBytes,
    // node's request and headers timeouts cover receiving the request only, never the response:
    // queries carry their own deadlines (timeout_ms), and an idle-socket timeout would cut streams.
    requestTimeout: options.requestTimeoutMs,
    http: { headersTimeout: options.headersTimeoutMs, connectionsCheckingInterval: checkingIntervalMs(options.headersTimeoutMs) },
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    connectionTimeout: 0,
    clientErrorHandler(error, socket) {
      answerClientError(error, socket, clientErrors, options.logger);
    },
    forceCloseConnections: 'idle',
    // Our own hook answers SHUTTING_DOWN in the envelope instead of fastify's fixed body.
    return503OnClosing: false,
    exposeHeadRoutes: true,
    routerOptions: { caseSensitive: true, ignoreTrailingSlash: false, maxParamLength: 200 },
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // Bodies validated without type coercion, query strings, params and headers with it (request-validators.ts).
    ajv: ajvOptions,
    schemaController: { compilersFactory: { buildValidator: requestValidators() } },
    frameworkErrors: (error, request, reply) => {
      reply.header(REQUEST_ID_HEADER, request.id);
      sendError(error, request, reply, context);
    },
  });
  app.addSchema(errorEnvelopeSchema);
  acceptEmptyJsonBodies(app);
  serializeJsonbExactly(app);
  awaitHandlersOnClose(app);

  app.addHook('preClose', async () => {
    closing = true;
  });
  installRequestHooks(app, options, () => closing);
  // close() closes only the connections idle at that moment: one that was busy becomes idle once
  // its response is sent, and kept alive it would hold close() for 72 s. Close such connections as
  // they go idle (a connection with a pipelined request waiting is not idle: that one is answered
  // SHUTTING_DOWN by installRequestHooks, with Connection: close). HTTP/2 sessions end with GOAWAY instead.
  // (A callback hook, not an async one: it runs on every response and must cost no promise.)
  app.addHook('onResponse', (_request, _reply, done) => {
    if (closing) {
      const server = app.server as { closeIdleConnections?: () => void };
      setImmediate(() => server.closeIdleConnections?.());
    }
    done();
  });
  installErrorHandlers(app, context);
  return app;
}

/**
 * The listener's own onRequest and onSend hooks: one of each per request, whatever the listener
 * has (every hook fastify runs costs a call and a step of its hook runner on every request).
 * onRequest, in this order: a path no route matches counts against the client's address (429 past
 * the limit, rate-limit-headers.ts), the request id goes on the reply, SHUTTING_DOWN once close()
 * has begun, then `admit` (the connection limit). onSend: X-RateLimit-* on an answer without them,
 * then `reencode` (content negotiation). Callback hooks, not async ones: no promise per request.
 */
function installRequestHooks(app: FastifyInstance, options: BaseServerOptions, closing: () => boolean): void {
  const { rateLimit, admit, reencode } = options;
  app.addHook('onRequest', (request, reply, done) => {
    if (rateLimit !== undefined && request.is404) {
      const refused = countUnmatched(rateLimit, request, reply);
      if (refused !== undefined) return done(refused);
    }
    reply.header(REQUEST_ID_HEADER, request.id);
    // (A request the direct path took in before close() began was taken in then: answered as such.)
    if (closing() && !takenBeforeClosing(request.raw)) {
      closeAfterResponse(request, reply);
      return done(shuttingDown());
    }
    const refused = admit?.(request, reply);
    return refused === undefined ? done() : done(refused);
  });
  if (rateLimit === undefined && reencode === undefined) return;
  app.addHook('onSend', (request, reply, payload, done) => {
    if (rateLimit !== undefined) showLimit(rateLimit, request, reply);
    if (reencode === undefined) return done(null, payload);
    let encoded: unknown;
    try {
      encoded = reencode(request, reply, payload);
    } catch (error) {
      return done(error as Error);
    }
    return done(null, encoded);
  });
}

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';

/** How long close() waits for route handlers still running (the whole shutdown has its own limit). */
const HANDLERS_DRAIN_MS_MAX = 30_000;

/**
 * close() resolves only once every route handler has returned. Connections closing is not enough:
 * a handler whose client left keeps running (a vector search waiting on the hnsw worker, a write
 * waiting for the log), and what the server stops next (projections, the log) must outlive it.
 */
function awaitHandlersOnClose(app: FastifyInstance): void {
  let running = 0;
  let onIdle: (() => void) | null = null;
  const finished = (): void => {
    running -= 1;
    if (running === 0) onIdle?.();
  };
  app.addHook('onRoute', (route) => {
    const handler = route.handler as (this: unknown, request: FastifyRequest, reply: FastifyReply) => unknown;
    // Not an async function: a handler's promise is followed by one then(), not wrapped in a
    // promise of its own and awaited (one promise and one turn less per request). A handler that
    // has answered by the time it returns (nothing returned, the reply sent: a cached point read)
    // leaves nothing to wait for; anything else becomes a promise, as an async wrapper's answer was.
    // This relies on every onSend hook of these listeners being synchronous: with an async one the
    // reply is not yet `sent` when a synchronous handler returns, and its undefined would be answered
    // again (test/http/request-path.test.ts: pipelined cached reads, one answer each, in order).
    route.handler = function tracked(this: unknown, request: FastifyRequest, reply: FastifyReply): Promise<unknown> | undefined {
      running += 1;
      let result: unknown;
      try {
        result = handler.call(this, request, reply);
      } catch (error) {
        finished();
        return Promise.reject(error as Error);
      }
      if (!isThenable(result)) {
        finished();
        return result === undefined && reply.sent ? undefined : Promise.resolve(result);
      }
      // A native promise is itself here (Promise.resolve returns it); another thenable is followed.
      return Promise.resolve(result).then(
        (value: unknown) => {
          finished();
          return value;
        },
        (error: unknown) => {
          finished();
          throw error;
        },
      );
    } as typeof route.handler;
  });
  app.addHook('onClose', async () => {
    if (running === 0) return;
    await new Promise<void>((resolve) => {
      onIdle = resolve;
      setTimeout(resolve, HANDLERS_DRAIN_MS_MAX).unref();
    });
  });
}

/**
 * jsonb numbers keep their exact text on the wire (`{"a": 1.0}`, big integers whole), as PostgreSQL
 * sends them: replies without a response schema are written by stringifyJson, which is JSON.stringify
 * plus that. Routes with a schema keep their compiled serializer (fastify's reply serializer would replace it).
 * Decided once per route when it is added (a hook of its own), not per reply: request.routeOptions
 * builds a new object on every read. Replies of no route (404) are error envelopes, the same text either way.
 */
function serializeJsonbExactly(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (route.schema?.response !== undefined) return;
    const own = route.preSerialization;
    route.preSerialization = own === undefined ? [serializeExactly] : [serializeExactly, ...(Array.isArray(own) ? own : [own])];
  });
}

const serializeExactly: preSerializationHookHandler = (_request, reply, payload, done) => {
  reply.serializer(stringifyJson);
  done(null, payload);
};

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
    const text = body as string;
    // A body the direct path read and parsed before handing the request over (direct/kept-body.ts).
    const kept = keptValue(request.raw, text);
    if (kept !== undefined) {
      done(null, kept);
      return;
    }
    if (cannotPoison(text)) {
      try {
        done(null, JSON.parse(text));
        return;
      } catch {
        // Malformed: the default parser answers with its own error.
      }
    }
    // The default parser is the callback form (typed as either form): it answers through done.
    (parseJson as (request: FastifyRequest, body: string, onDone: typeof done) => void)(request, text, done);
  });
}

type FastifyOptions = FastifyHttpOptions<Server, FastifyBaseLogger>;

/**
 * Plain HTTP/1.1, or with `tls` node's HTTP/2 secure server with the HTTP/1.1 fallback. Requests go
 * through in-front.ts first: pipelined writes in order, and on a plain listener with `direct` the
 * direct path of the point reads.
 */
function createFastify(options: BaseServerOptions, closing: () => boolean, common: FastifyOptions): FastifyInstance {
  if (options.tls === undefined) {
    const app = Fastify(common);
    inFrontOfFastify(app.server, { direct: options.direct, bodyLimitBytes: options.bodyLimitBytes, logger: options.logger, closing });
    return app;
  }
  const { key, cert } = options.tls;
  const secure: FastifyHttp2SecureOptions<Http2SecureServer, FastifyBaseLogger> = {
    ...withoutHttpOptions(common),
    http2: true,
    // A client that opens a connection and never finishes the TLS handshake is dropped as one
    // that never sends its headers is.
    https: { allowHTTP1: true, key, cert, handshakeTimeout: options.headersTimeoutMs },
    http2SessionTimeout: KEEP_ALIVE_TIMEOUT_MS,
  } as FastifyHttp2SecureOptions<Http2SecureServer, FastifyBaseLogger>;
  // The routes are written against fastify's default (HTTP/1) types; node's HTTP/2 compatibility
  // request and response offer the same API (tested in test/protocols/https-server.test.ts).
  const app = Fastify(secure) as unknown as FastifyInstance;
  configureSecureServer(app, options);
  // (No direct path here: HTTP/2's requests are not node's IncomingMessage; the HTTP/1.1 fallback's pipelining is kept in order.)
  inFrontOfFastify(app.server, { direct: undefined, bodyLimitBytes: options.bodyLimitBytes, logger: options.logger, closing });
  return app;
}

function withoutHttpOptions(common: FastifyOptions): Omit<FastifyOptions, 'http'> {
  const { http: _http1Only, ...rest } = common;
  return rest;
}

/**
 * fastify tunes only an HTTP/1 server: give the HTTP/1.1 fallback the plain listener's timeouts,
 * and close HTTP/2 sessions gracefully (GOAWAY) when the server closes, as idle keep-alive
 * connections are (node 20 does not, and server.close() would wait for them).
 */
function configureSecureServer(app: FastifyInstance, options: BaseServerOptions): void {
  const server = app.server as unknown as Http2SecureServer & { keepAliveTimeout: number; requestTimeout: number; headersTimeout: number };
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.requestTimeout = options.requestTimeoutMs;
  server.headersTimeout = options.headersTimeoutMs;
  const sessions = new Set<Http2Session>();
  server.on('session', (session: Http2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  app.addHook('preClose', async () => {
    for (const session of sessions) session.close();
  });
}
