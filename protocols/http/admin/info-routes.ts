import { version as nodeVersion } from 'node:process';
import type { FastifyPluginAsync } from 'fastify';
import { SVC_VERSION } from '../../../core/version.js';

/** The REST interface version, the path prefix's v1. */
export const API_VERSION = 'v1';

/**
 * What this build really serves, as /info reports it. The spec lists more protocols (postgresql,
 * mongodb, redis, cassandra, grpc); a client that trusted them would connect to nothing.
 */
export const SERVED_PROTOCOLS: readonly string[] = ['http'];

/** Each flag is true only when its endpoints exist in this build (docs/api.md, "Admin"). */
export const FEATURES = Object.freeze({
  // /api/v1/vectors/* and the vector-compatible protocol (docs/vectors-api.md).
  vector_search: true,
  // The GraphQL endpoint is not built yet.
  graph_queries: false,
  // No time-series tables, retention or downsampling.
  time_series: false,
  // Every table, query and async query belongs to a tenant (X-Tenant-ID / the credential's tenant).
  multi_tenancy: true,
  // POST /query/stream (NDJSON rows as they are produced).
  streaming: true,
});

export interface InfoLimits {
  readonly queryTextBytesMax: number;
  readonly resultRowsMax: number;
  readonly connectionsMax: number;
}

/** `7.0.0+node.20.18.0`: the service version with the runtime as semver build metadata (no git in a package). */
export function buildString(serviceVersion: string = SVC_VERSION, runtimeVersion: string = nodeVersion): string {
  return `${serviceVersion}+node.${runtimeVersion.replace(/^v/, '')}`;
}

export function infoBody(limits: InfoLimits) {
  return {
    version: SVC_VERSION,
    build: buildString(),
    api_version: API_VERSION,
    features: { ...FEATURES },
    protocols: [...SERVED_PROTOCOLS],
    limits: {
      max_query_size_bytes: limits.queryTextBytesMax,
      max_result_rows: limits.resultRowsMax,
      max_connections: limits.connectionsMax,
    },
  };
}

const flag = { type: 'boolean' } as const;
const integer = { type: 'integer' } as const;
const infoSchema = {
  type: 'object',
  required: ['version', 'build', 'api_version', 'features', 'protocols', 'limits'],
  properties: {
    version: { type: 'string' },
    build: { type: 'string' },
    api_version: { type: 'string' },
    features: {
      type: 'object',
      required: Object.keys(FEATURES),
      properties: { vector_search: flag, graph_queries: flag, time_series: flag, multi_tenancy: flag, streaming: flag },
    },
    protocols: { type: 'array', items: { type: 'string' } },
    limits: {
      type: 'object',
      required: ['max_query_size_bytes', 'max_result_rows', 'max_connections'],
      properties: { max_query_size_bytes: integer, max_result_rows: integer, max_connections: integer },
    },
  },
} as const;

/** GET /info (under /api/v1): version, build, features, protocols and limits of this server. */
export function infoRoutes(options: { limits: InfoLimits }): FastifyPluginAsync {
  const body = infoBody(options.limits);
  return async (app) => {
    app.get('/info', { schema: { response: { 200: infoSchema } } }, async () => body);
  };
}
