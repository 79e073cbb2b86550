import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { SvcError } from '../../core/errors.js';
import { newUlid } from '../../core/ids.js';
import { addressBucket, rateLimitHeaders, type RateLimitGate } from '../auth/rate-limit.js';
import { errorEnvelope, httpStatusOf, logFailure, MALFORMED_REQUEST_CODE } from '../errors.js';

export interface ClientErrorOptions {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  /** Largest header section node's parser accepts (node's --max-http-header-size). */
  readonly headerBytesMax: number;
  readonly rateLimit?: RateLimitGate;
}

/** What node's HTTP parser refused, as the error the client is told. */
function describe(error: NodeJS.ErrnoException, options: ClientErrorOptions): SvcError {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new SvcError(
        'REQUEST_TIMEOUT',
        `the request was not received in time (headers within ${options.headersTimeoutMs} ms, the whole request within ${options.requestTimeoutMs} ms); the connection is closed`,
        {
          headers_timeout_ms: options.headersTimeoutMs,
          request_timeout_ms: options.requestTimeoutMs,
        },
      );
    case 'HPE_HEADER_OVERFLOW':
      return new SvcError(MALFORMED_REQUEST_CODE, `the request's headers are larger than ${options.headerBytesMax} bytes`, {
        reason: 'headers_too_large',
        limit_bytes: options.headerBytesMax,
      });
    default:
      return new SvcError(MALFORMED_REQUEST_CODE, 'malformed HTTP request', { reason: 'malformed_http' });
  }
}

const CLIENT_ERROR_LOG_MESSAGES = { left: 'client error', failed: 'client error', rejected: 'client error' } as const;

/**
 * fastify's clientErrorHandler: a request node's parser refused (too slow, headers too large, not
 * HTTP) gets the error envelope, an X-Request-ID and the X-RateLimit-* headers like every other
 * answer, then the connection is closed. Only the error's code is logged: the error itself
 * carries the raw bytes received (`rawPacket`), credentials included.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket, options: ClientErrorOptions, log: FastifyBaseLogger): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const svcError = describe(error, options);
  const status = httpStatusOf(svcError.code);
  const requestId = newUlid();
  const failure = { error: svcError, original: error.code, clientLeft: false };
  logFailure(log, failure, { request_id: requestId, cause: error.code, remoteAddress: socket.remoteAddress }, CLIENT_ERROR_LOG_MESSAGES);
  if (socket.writable) {
    const body = JSON.stringify(errorEnvelope(svcError, requestId));
    const headers: Record<string, string> = {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
      connection: 'close',
      'x-request-id': requestId,
    };
    const gate = options.rateLimit;
    if (gate !== undefined) {
      const nowMs = Date.now();
      Object.assign(headers, rateLimitHeaders(gate.limiter.peek(addressBucket(socket.remoteAddress ?? ''), gate.rateLimitRequestsMax, nowMs), nowMs));
    }
    const head = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n${head}\r\n${body}`);
  }
  socket.destroy();
}
