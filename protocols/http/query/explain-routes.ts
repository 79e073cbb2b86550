import type { FastifyPluginAsync } from 'fastify';
import type { SqlEngine } from '../../../query/index.js';
import { engineScope, principalOf } from '../../auth/principal.js';
import { measured, type QueryMetrics } from '../../metrics/query-metrics.js';
import { untilClientLeaves } from '../client-abort.js';
import { sqlBodySchema, type QueryRouteLimits } from './sql-body-schema.js';

/** POST /query's default; with analyze the query runs, and so has a deadline. */

type Format = 'json' | 'text' | 'yaml';

interface ExplainBody {
  sql: string;
  params?: unknown[];
  analyze: boolean;
  format: Format;
  timeout_ms: number;
}

function bodySchema(limits: QueryRouteLimits) {
  return sqlBodySchema(limits, {
    analyze: { type: 'boolean', default: false },
    format: { type: 'string', enum: ['json', 'text', 'yaml'], default: 'json' },
  });
}

const responseSchema = {
  200: {
    type: 'object',
    required: ['plan', 'planning_time_ms'],
    properties: {
      // json: the plan object tree (node fields vary by node type); text and yaml: a string.
      plan: {},
      planning_time_ms: { type: 'number' },
      execution_time_ms: { type: 'number' },
    },
  },
} as const;

/**
 * POST /query/explain (under /api/v1): the plan of one SELECT. `plan` is in the requested
 * format: the spec's plan object for json, PostgreSQL's EXPLAIN text or YAML as one string.
 */
export function explainRoutes(options: { engine: SqlEngine; limits: QueryRouteLimits; metrics?: QueryMetrics }): FastifyPluginAsync {
  const schema = { body: bodySchema(options.limits), response: responseSchema };
  return async (app) => {
    app.post<{ Body: ExplainBody }>('/query/explain', { schema }, async (request, reply) => {
      const body = request.body;
      const result = await measured(options.metrics, principalOf(request).tenant, () =>
        untilClientLeaves(reply, (signal) =>
          options.engine.explain(body.sql, {
            params: body.params ?? [],
            analyze: body.analyze,
            format: body.format,
            timeoutMs: body.timeout_ms,
            signal,
            ...engineScope(request),
          }),
        ),
      );
      const plan = body.format === 'text' ? result.text : body.format === 'yaml' ? result.yaml : result.plan;
      return reply.code(200).send({
        plan,
        planning_time_ms: result.planning_time_ms,
        ...(result.execution_time_ms !== undefined ? { execution_time_ms: result.execution_time_ms } : {}),
      });
    });
  };
}
