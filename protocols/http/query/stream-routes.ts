import type { ServerResponse } from 'node:http';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { stringifyJson } from '../../../core/json-exact.js';
import type { SqlEngine } from '../../../query/index.js';
import { errorEnvelope, logFailure, toSvcError } from '../../errors.js';
import { engineScope, principalOf } from '../../auth/principal.js';
import { measured, type QueryMetrics } from '../../metrics/query-metrics.js';
import { untilClientLeaves } from '../client-abort.js';
import { sqlBodySchema, type QueryRouteLimits } from './sql-body-schema.js';

export const NDJSON = 'application/x-ndjson';

/** Rows per write (docs/api.md): big enough to amortize a syscall, small enough to reach the client soon. */
export const STREAM_BATCH_SIZE_DEFAULT = 1000;
export const STREAM_BATCH_SIZE_MAX = 10_000;

export interface StreamRouteLimits extends QueryRouteLimits {
  readonly bodyLimitBytes: number;
}

interface StreamBody {
  sql: string;
  params?: unknown[];
  batch_size: number;
  timeout_ms: number;
}

function bodySchema(limits: QueryRouteLimits) {
  return sqlBodySchema(limits, { batch_size: { type: 'integer', minimum: 1, maximum: STREAM_BATCH_SIZE_MAX, default: STREAM_BATCH_SIZE_DEFAULT } });
}

/** Resolves when the socket can take more, the client left, the query was aborted, or its deadline passed. */
function writable(res: ServerResponse, signal: AbortSignal, deadlineMs: number): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      res.off('drain', done);
      res.off('close', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, deadlineMs - Date.now()) + 1);
    res.once('drain', done);
    res.once('close', done);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Switches the reply to a raw NDJSON response, keeping the headers hooks set (X-Request-ID). */
function startNdjson(reply: FastifyReply): ServerResponse {
  reply.hijack();
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
  reply.raw.writeHead(200, { 'content-type': `${NDJSON}; charset=utf-8` });
  return reply.raw;
}

const STREAM_LOG_MESSAGES = { left: 'query stream stopped', failed: 'query stream failed', rejected: 'query stream failed' } as const;

/** After the first line is sent the status is fixed: an error is one last line, the envelope. */
function endWithError(error: unknown, request: FastifyRequest, res: ServerResponse, limits: StreamRouteLimits, rows: number): void {
  const svcError = toSvcError(error, { bodyLimitBytes: limits.bodyLimitBytes });
  const clientLeft = res.destroyed || res.writableEnded;
  logFailure(request.log, { error: svcError, original: error, clientLeft }, clientLeft ? { reason: 'client_closed', rows } : { rows }, STREAM_LOG_MESSAGES);
  // The client left: make sure the socket goes too (a half-closed one would keep the server's close waiting).
  if (clientLeft) res.destroy();
  else res.end(`${JSON.stringify(errorEnvelope(svcError, request.id))}\n`);
}

/**
 * POST /query/stream (under /api/v1): one JSON row object per line, written every batch_size rows
 * as the client reads them (at most one batch in memory). The query stops when the client leaves.
 */
export function streamRoutes(options: { engine: SqlEngine; limits: StreamRouteLimits; metrics?: QueryMetrics }): FastifyPluginAsync {
  const schema = { body: bodySchema(options.limits) };
  return async (app) => {
    app.post<{ Body: StreamBody }>('/query/stream', { schema }, async (request, reply) => {
      const body = request.body;
      const deadlineMs = Date.now() + body.timeout_ms;
      let res: ServerResponse | null = null;
      let rows = 0;
      try {
        await measured(options.metrics, principalOf(request).tenant, () =>
          untilClientLeaves(reply, async (signal) => {
            const stream = await options.engine.stream(body.sql, {
              params: body.params ?? [],
              timeoutMs: body.timeout_ms,
              signal,
              ...engineScope(request),
              batchRows: body.batch_size,
            });
            // The next batch is pulled only once the socket took this one (backpressure); a client
            // that left aborts the signal, and the engine stops at the next pull.
            for await (const batch of stream) {
              res ??= startNdjson(reply);
              rows += batch.length;
              let text = '';
              for (const row of batch) text += `${stringifyJson(row)}\n`;
              if (!res.write(text)) await writable(res, signal, deadlineMs);
            }
          }),
        );
      } catch (error) {
        if (res === null) throw error;
        endWithError(error, request, res, options.limits, rows);
        return reply;
      }
      if (res === null) return reply.code(200).type(`${NDJSON}; charset=utf-8`).send('');
      (res as ServerResponse).end();
      request.log.debug({ rows }, 'query stream completed');
      return reply;
    });
  };
}
