import type { FastifyPluginAsync } from 'fastify';
import type { MetricsSource } from '../../metrics/service-metrics.js';

/**
 * GET /metrics: the Prometheus text format. Registered under /api/v1 behind the API key, and on the
 * ops port without one (docs/api.md, "Admin").
 */
export function metricsRoutes(options: { metrics: MetricsSource }): FastifyPluginAsync {
  return async (app) => {
    app.get('/metrics', async (_request, reply) => {
      const { contentType, body } = await options.metrics.render();
      return reply.code(200).type(contentType).send(body);
    });
  };
}
