import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Config } from '../../core/config.js';
import { connectionsAvailable, type ConnectionGauge } from '../http/connections.js';
import { createBaseServer } from '../http/fastify-base.js';
import {
  COMPONENT_STATUSES,
  OVERALL_STATUSES,
  cacheStatus,
  databaseStatus,
  healthBody,
  healthBodySchema,
  healthHttpStatus,
  overallStatus,
  readyBody,
  readyBodySchema,
  readyHttpStatus,
  replicationStatus,
  storageStatus,
  uptimeSeconds,
} from '../http/admin/health.js';
import { metricsRoutes } from '../http/admin/metrics-routes.js';
import type { EngineStatus } from '../http/types.js';
import type { MetricsSource } from '../metrics/service-metrics.js';
import type { RateLimitGate } from '../auth/rate-limit.js';
import { CpuMeter, diskUsagePercent, memoryUsagePercent } from './system-metrics.js';

export interface OpsServerDeps {
  readonly config: Config;
  readonly logger: FastifyBaseLogger;
  readonly status: EngineStatus;
  /** Connections of the database's API listeners (the ConnectionLimiter they share). */
  readonly connections: ConnectionGauge;
  /** Set: its answers carry X-RateLimit-* too (the probes are never counted). */
  readonly rateLimit?: RateLimitGate;
  /** Served as GET /metrics (no credentials: the ops port is for the operator's network). */
  readonly metrics?: MetricsSource;
}

const component = { type: 'string', enum: [...COMPONENT_STATUSES] } as const;
const detailedSchema = {
  type: 'object',
  required: ['status', 'timestamp', 'version', 'components', 'metrics'],
  properties: {
    status: { type: 'string', enum: [...OVERALL_STATUSES] },
    timestamp: { type: 'string', format: 'date-time' },
    version: { type: 'string' },
    components: {
      type: 'object',
      required: ['database', 'replication', 'cache', 'storage'],
      properties: { database: component, replication: component, cache: component, storage: component },
    },
    metrics: {
      type: 'object',
      required: ['uptime_seconds', 'connections', 'memory_usage_pct', 'disk_usage_pct', 'cpu_usage_pct'],
      properties: {
        uptime_seconds: { type: 'integer' },
        connections: { type: 'integer' },
        memory_usage_pct: { type: 'number' },
        disk_usage_pct: { type: 'number' },
        cpu_usage_pct: { type: 'number' },
      },
    },
  },
} as const;

/**
 * The operations listener (SVC_OPS_PORT): GET /health, /health/ready, /health/detailed and, given
 * `metrics`, GET /metrics. Not yet listening.
 */
export function createOpsServer(deps: OpsServerDeps): FastifyInstance {
  const app = createBaseServer({
    logger: deps.logger.child({ component: 'ops' }),
    bodyLimitBytes: deps.config.bodyLimitBytes,
    headersTimeoutMs: deps.config.headersTimeoutMs,
    requestTimeoutMs: deps.config.requestTimeoutMs,
    ...(deps.rateLimit ? { rateLimit: deps.rateLimit } : {}),
  });
  const { status, connections } = deps;
  const cpu = new CpuMeter();

  app.get('/health', { schema: { response: { 200: healthBodySchema, 503: healthBodySchema } } }, async (_request, reply) => {
    const body = healthBody(status, Date.now());
    return reply.code(healthHttpStatus(body)).send(body);
  });

  app.get('/health/ready', { schema: { response: { 200: readyBodySchema, 503: readyBodySchema } } }, async (_request, reply) => {
    const body = readyBody(status, await connectionsAvailable(connections), Date.now());
    return reply.code(readyHttpStatus(body)).send(body);
  });

  app.get('/health/detailed', { schema: { response: { 200: detailedSchema, 503: detailedSchema } } }, async (_request, reply) => {
    const nowMs = Date.now();
    const body = {
      status: overallStatus(status),
      timestamp: new Date(nowMs).toISOString(),
      version: status.version,
      components: {
        database: databaseStatus(status, nowMs),
        replication: replicationStatus(status),
        cache: cacheStatus(status),
        storage: storageStatus(status),
      },
      metrics: {
        uptime_seconds: uptimeSeconds(status, nowMs),
        connections: await connections.count(),
        memory_usage_pct: memoryUsagePercent(),
        disk_usage_pct: await diskUsagePercent(deps.config.dataDir),
        cpu_usage_pct: cpu.percent(),
      },
    };
    return reply.code(body.status === 'healthy' ? 200 : 503).send(body);
  });

  if (deps.metrics) app.register(metricsRoutes({ metrics: deps.metrics }));
  return app;
}
