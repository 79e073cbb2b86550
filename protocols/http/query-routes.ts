import type { FastifyPluginAsync } from 'fastify';
import { newUlid } from '../../core/ids.js';
import { DEFAULT_TENANT } from '../../core/catalog.js';
import { SQL_LIMITS, type SqlEngine } from '../../query/index.js';

/** Largest timeout_ms a request may ask for (one hour). */
export const QUERY_TIMEOUT_MS_MAX = 3_600_000;

interface QueryBody {
  sql: string;
  params?: unknown[];
  timeout_ms: number;
  include_metadata: boolean;
  max_rows: number;
}

const bodySchema = {
  type: 'object',
  required: ['sql'],
  additionalProperties: false,
  properties: {
    sql: { type: 'string', minLength: 1, maxLength: SQL_LIMITS.queryTextBytesMax },
    params: { type: 'array' },
    timeout_ms: { type: 'integer', minimum: 1, maximum: QUERY_TIMEOUT_MS_MAX, default: 30_000 },
    include_metadata: { type: 'boolean', default: false },
    max_rows: { type: 'integer', minimum: 1, maximum: SQL_LIMITS.resultRowsMax, default: 10_000 },
  },
} as const;

/** POST /query (under /api/v1): runs SQL synchronously in the spec's result shape. */
export function queryRoutes(options: { engine: SqlEngine }): FastifyPluginAsync {
  return async (app) => {
    app.post<{ Body: QueryBody }>('/query', { schema: { body: bodySchema } }, async (request, reply) => {
      const started = performance.now();
      const body = request.body;
      const abort = new AbortController();
      const onClose = (): void => {
        if (!reply.raw.writableFinished) abort.abort();
      };
      reply.raw.once('close', onClose);
      try {
        const result = await options.engine.execute(body.sql, {
          params: body.params ?? [],
          timeoutMs: body.timeout_ms,
          maxRows: body.max_rows,
          signal: abort.signal,
          tenant: DEFAULT_TENANT,
        });
        const response: Record<string, unknown> = { success: true, data: result.rows };
        if (body.include_metadata) {
          response.metadata = {
            columns: result.columns,
            row_count: result.rowCount,
            execution_time_ms: Math.round(performance.now() - started),
            query_id: newUlid(),
            command: result.command,
            affected_rows: result.affectedRows,
            truncated: result.truncated,
          };
        }
        return reply.code(200).send(response);
      } finally {
        reply.raw.off('close', onClose);
      }
    });
  };
}
