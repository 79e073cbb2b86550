import type { FastifyPluginAsync } from 'fastify';
import { connectionGauge, connectionsAvailable, type ConnectionGauge } from '../connections.js';
import { healthBody, healthBodySchema, healthHttpStatus, readyBody, readyBodySchema, readyHttpStatus } from './health.js';
import type { EngineStatus } from '../types.js';

export interface AdminRoutesOptions {
  readonly status: EngineStatus;
  /** What /ready's connections_available reads; default: this listener's own connections. */
  readonly connections?: ConnectionGauge;
}

const liveSchema = {
  type: 'object',
  required: ['alive'],
  properties: { alive: { type: 'boolean' } },
} as const;

/**
 * GET /live, /ready, /health (registered under /api/v1). No credentials: probes and load balancers
 * call them. /ready and /health answer 503 with the same body shape when not ready / unhealthy.
 */
export const adminRoutes: FastifyPluginAsync<AdminRoutesOptions> = async (app, options) => {
  const { status } = options;
  const gauge = options.connections ?? connectionGauge(app.server);

  app.get('/live', { schema: { response: { 200: liveSchema } } }, async () => ({ alive: true }));

  app.get('/ready', { schema: { response: { 200: readyBodySchema, 503: readyBodySchema } } }, async (_request, reply) => {
    const body = readyBody(status, await connectionsAvailable(gauge), Date.now());
    return reply.code(readyHttpStatus(body)).send(body);
  });

  app.get('/health', { schema: { response: { 200: healthBodySchema, 503: healthBodySchema } } }, async (_request, reply) => {
    const body = healthBody(status, Date.now());
    return reply.code(healthHttpStatus(body)).send(body);
  });
};
