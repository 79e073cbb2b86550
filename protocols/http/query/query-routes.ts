import type { FastifyPluginAsync } from 'fastify';
import { newUlid } from '../../../core/ids.js';
import type { SqlEngine } from '../../../query/index.js';
import { engineScope, principalOf } from '../../auth/principal.js';
import { measured, type QueryMetrics } from '../../metrics/query-metrics.js';
import { untilClientLeaves } from '../client-abort.js';
import { resultMetadataView } from './result-view.js';
import { maxRowsProperty, sqlBodySchema, type QueryRouteLimits } from './sql-body-schema.js';

export type { QueryRouteLimits } from './sql-body-schema.js';

interface QueryBody {
  sql: string;
  params?: unknown[];
  timeout_ms: number;
  include_metadata: boolean;
  max_rows: number;
}

function bodySchema(limits: QueryRouteLimits) {
  return sqlBodySchema(limits, { include_metadata: { type: 'boolean', default: false }, max_rows: maxRowsProperty(limits) });
}

/** POST /query (under /api/v1): runs SQL synchronously in the spec's result shape. */
export function queryRoutes(options: { engine: SqlEngine; limits: QueryRouteLimits; metrics?: QueryMetrics }): FastifyPluginAsync {
  const schema = { body: bodySchema(options.limits) };
  return async (app) => {
    app.post<{ Body: QueryBody }>('/query', { schema }, async (request, reply) => {
      const started = performance.now();
      const body = request.body;
      const result = await measured(options.metrics, principalOf(request).tenant, () =>
        untilClientLeaves(reply, (signal) =>
          options.engine.execute(body.sql, { params: body.params ?? [], timeoutMs: body.timeout_ms, maxRows: body.max_rows, signal, ...engineScope(request) }),
        ),
      );
      const metadata = body.include_metadata ? { metadata: resultMetadataView(result, { elapsedMs: performance.now() - started, queryId: newUlid() }) } : {};
      return reply.code(200).send({ success: true, data: result.rows, ...metadata });
    });
  };
}
