import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { isSvcError } from '../../../core/errors.js';
import { rememberedCaller, type AuthGate, type CredentialMemo } from '../../auth/authenticate.js';
import { requestsMaxOf, writeRateLimitHeaders } from '../../auth/rate-limit.js';
import type { QueryMetrics } from '../../metrics/query-metrics.js';
import { httpStatusOf } from '../../errors.js';
import { API_PREFIX } from '../api-prefix.js';
import { JSON_TYPE, negotiate } from '../content-negotiation.js';
import { requestIdOf, REQUEST_ID_HEADER } from '../request-id.js';
import { JSON_CONTENT_TYPE } from '../json-reply.js';
import { cannotPoison, keepBody } from './kept-body.js';

/**
 * The direct path: the two point reads (GET /api/v1/tables/{t}/rows/{id} and a point SELECT over
 * POST /api/v1/query) answered from the node request, in front of fastify, on the plain HTTP
 * listener. fastify's routing, request and reply objects, hooks, body parser and schema validation
 * cost about a third of such a request (docs/benchmarks.md, the fourteenth session); issue 16 asks
 * for a direct path from the route to the store.
 *
 * It answers only the common request, with the bytes fastify's path sends (test/http/direct-lane.test.ts
 * compares the two): a remembered credential (API key or admin key, verified before) in its home
 * tenant, JSON answered, the request within its rate limit, the answer already known (a cached point
 * read, no wait at the read barrier). Everything else — and anything that throws — is handed to
 * fastify untouched, which answers it as before (errors, 404s, 429s, metadata, other tenants, debug
 * logging, a closing server, a connection past the limit). A POST body the direct path has read is
 * handed over with the request (kept-body.ts), so fastify parses the same bytes. A throw is counted
 * (DirectDeclines): fastify's answer hides it, and a fault of the direct path alone would show nowhere else.
 */

/** Requests the direct path answered since start, by route (the ops port's svc_http_direct_answers_total). */
export class DirectAnswers {
  row = 0;
  query = 0;
}

/** How a throw of the direct path's work is counted: the client's error (fastify answers it 4xx), or a fault. */
export interface DeclineCounts {
  /** Anything else: an error fastify's path answers 5xx, or not an SvcError at all (a bug, if only the direct path throws it). */
  error: number;
  /** An SvcError fastify's path answers with a 4xx status (the client's input: an id of a table without a primary key, a parameter of the wrong type). */
  refused: number;
}

/** Requests the direct path began and handed to fastify because its work threw, by route (the ops port's svc_http_direct_declines_total). */
export class DirectDeclines {
  readonly row: DeclineCounts = { error: 0, refused: 0 };
  readonly query: DeclineCounts = { error: 0, refused: 0 };
}

/** What the direct path answers; each returns the whole answer's JSON text, or undefined: fastify answers. */
export interface DirectRoutes {
  readonly gate: AuthGate;
  readonly metrics?: QueryMetrics;
  readonly answers: DirectAnswers;
  readonly declines: DirectDeclines;
  /** GET of one row by its URL (no query string), in `tenant`. */
  readonly row: (tenant: string, url: string) => string | undefined;
  /** POST /query with its JSON body parsed (an object), for `caller`. */
  readonly query: (caller: CredentialMemo, body: Record<string, unknown>) => string | undefined;
}

/** What the direct path asks of its listener. */
export interface DirectListener {
  /** close() has begun: fastify answers SHUTTING_DOWN. */
  closing(): boolean;
  /** The connection was accepted past the connection limit: fastify answers TOO_MANY_CONNECTIONS. */
  refuses(socket: Socket): boolean;
  /** Every request is logged (debug): fastify's path logs it. */
  logsEveryRequest(): boolean;
  /** Called after each direct answer (what fastify's onResponse hook does: once closing, close the connections gone idle). */
  afterAnswer(): void;
}

export const ROW_PREFIX = `${API_PREFIX}/tables/`;
export const QUERY_PATH = `${API_PREFIX}/query`;

/** A POST body the direct path reads: at most this many bytes (a point SELECT is a few hundred). */
export const DIRECT_BODY_BYTES_MAX = 16 * 1024;

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * The listener's request handler: the direct path first, fastify's `handler` for what it does not
 * answer. `bodyLimitBytes` is the listener's (a body past it is fastify's to refuse).
 */
export function directHandler(routes: DirectRoutes, listener: DirectListener, bodyLimitBytes: number, handler: Handler): Handler {
  const bodyBytesMax = Math.min(DIRECT_BODY_BYTES_MAX, bodyLimitBytes);
  return (req, res) => {
    const method = req.method;
    const url = req.url ?? '';
    const row = method === 'GET' && url.startsWith(ROW_PREFIX);
    const query = !row && method === 'POST' && url === QUERY_PATH;
    if (!(row || query) || !ordinary(req, listener)) return handler(req, res);
    const nowMs = Date.now();
    const caller = rememberedCaller(routes.gate, req.headers, nowMs);
    // A caller past its limit costs no read: fastify's path answers the 429 (and counts nothing, as a refused request is not).
    if (caller === undefined || !withinLimit(routes.gate, caller, nowMs)) return handler(req, res);
    if (row) {
      const started = performance.now();
      const text = attempt(() => routes.row(caller.home.tenant, url), routes.declines.row);
      if (text === undefined || !sendAnswer(routes, 'row', caller, req, res, text, nowMs, started)) return handler(req, res);
      return listener.afterAnswer();
    }
    const length = bodyLength(req, bodyBytesMax);
    if (length === undefined) return handler(req, res);
    // Taken in before close() began: fastify's path answers it whatever happens meanwhile, as it would have (kept-body.ts).
    readBody(req, (body, failure) => {
      if (failure !== undefined) {
        // The client left mid-body: fastify's path counts the request and logs it, as it does for a body it reads.
        keepBody(req, body, undefined, failure);
        return handler(req, res);
      }
      // Timed from the body's end, as the route (after fastify has read the body) times a statement.
      const started = performance.now();
      const parsed = body.length === length ? parseObject(body) : undefined;
      const text = parsed === undefined ? undefined : attempt(() => routes.query(caller, parsed.value), routes.declines.query);
      if (text !== undefined && sendAnswer(routes, 'query', caller, req, res, text, Date.now(), started)) return listener.afterAnswer();
      // fastify parses the same bytes (and, where the text is the one parsed here, takes the object made of it).
      keepBody(req, body, parsed);
      handler(req, res);
    });
  };
}

/** The caller's rate limit would let one more request through now (nothing counted). */
function withinLimit(gate: AuthGate, caller: CredentialMemo, nowMs: number): boolean {
  return gate.limiter.peek(caller.bucket, requestsMaxOf(gate, caller.requestsMax), nowMs).allowed;
}

/** Nothing about the request or the listener that only fastify's path handles. */
function ordinary(req: IncomingMessage, listener: DirectListener): boolean {
  const headers = req.headers;
  if (headers['x-tenant-id'] !== undefined) return false;
  const accept = headers.accept;
  if (accept !== undefined && accept !== '*/*' && accept !== JSON_TYPE && negotiate(accept).format !== 'json') return false;
  return !listener.closing() && !listener.refuses(req.socket) && !listener.logsEveryRequest();
}

/** The Content-Type of a JSON body as common clients send it (fastify's parser takes each the same way: the body read as UTF-8). */
const JSON_BODY_TYPES: ReadonlySet<string> = new Set([
  JSON_TYPE,
  JSON_CONTENT_TYPE,
  'application/json; charset=UTF-8',
  'application/json;charset=utf-8',
  'application/json;charset=UTF-8',
]);

/** The body's length when the direct path may read it: a JSON body of known length, not encoded, within `max`; else undefined. */
function bodyLength(req: IncomingMessage, max: number): number | undefined {
  const headers = req.headers;
  const type = headers['content-type'];
  if (type === undefined || !JSON_BODY_TYPES.has(type)) return undefined;
  if (headers['transfer-encoding'] !== undefined || headers['content-encoding'] !== undefined) return undefined;
  const declared = headers['content-length'];
  if (declared === undefined) return undefined;
  const length = Number(declared);
  return Number.isInteger(length) && length > 0 && length <= max ? length : undefined;
}

/** Reads the whole body, or what came of it before the connection failed (and the failure). */
function readBody(req: IncomingMessage, then: (body: Buffer, failure?: Error) => void): void {
  const chunks: Buffer[] = [];
  const bytes = (): Buffer => (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => then(bytes()));
  req.once('error', (error: Error) => then(bytes(), error));
}

/** The body as fastify's JSON parser reads it (fastify-base.ts), when that is a plain JSON object; else undefined. */
function parseObject(body: Buffer): { text: string; value: Record<string, unknown> } | undefined {
  const text = body.toString('utf8');
  if (!cannotPoison(text)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? { text, value: value as Record<string, unknown> } : undefined;
}

/**
 * `work`'s answer; undefined when it throws (fastify's path runs it again and answers the error in
 * the envelope), the throw counted in `declines` by what fastify's path will answer.
 */
function attempt(work: () => string | undefined, declines: DeclineCounts): string | undefined {
  try {
    return work();
  } catch (error) {
    if (isSvcError(error) && httpStatusOf(error.code) < 500) declines.refused += 1;
    else declines.error += 1;
    return undefined;
  }
}

/**
 * Counts the request against its credential's rate limit and sends `text` with the headers
 * fastify's path sends (request id, X-RateLimit-*, content type, Vary); false, having sent nothing,
 * when the limit refuses it (fastify's path answers the 429; a refused request is not counted).
 */
function sendAnswer(
  routes: DirectRoutes,
  route: keyof DirectAnswers,
  caller: CredentialMemo,
  req: IncomingMessage,
  res: ServerResponse,
  text: string,
  nowMs: number,
  started: number,
): boolean {
  const gate = routes.gate;
  const decision = gate.limiter.hit(caller.bucket, requestsMaxOf(gate, caller.requestsMax), nowMs);
  if (!decision.allowed) return false;
  // In fastify's order (its onRequest hooks, then the reply's content type, then the onSend hook's Vary).
  const head = [
    REQUEST_ID_HEADER,
    requestIdOf(req),
    // The four X-RateLimit-* headers, written in below (a literal of the whole list: no array grown per answer).
    '',
    '',
    '',
    '',
    '',
    '',
    '',
    '',
    'content-type',
    JSON_CONTENT_TYPE,
    'vary',
    'Accept',
    'content-length',
    String(Buffer.byteLength(text)),
  ];
  writeRateLimitHeaders(head, 2, decision, nowMs);
  res.writeHead(200, head);
  res.end(text);
  // Counted as fastify's path counts it (query-routes.ts, countedAsQueries): one query, its time from the request's start.
  routes.metrics?.observe({ database: caller.home.tenant, durationSeconds: (performance.now() - started) / 1000, ok: true });
  routes.answers[route] += 1;
  return true;
}
