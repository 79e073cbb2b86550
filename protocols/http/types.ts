import type { FastifyBaseLogger, FastifyPluginAsync } from 'fastify';
import type { Config } from '../../core/config.js';
import type { ConnectionLimiter } from './connection-limit.js';
import type { DirectRoutes } from './direct/direct-lane.js';
import type { TlsMaterial } from './fastify-base.js';
import type { RateLimitGate } from '../auth/rate-limit.js';

/** What the protocols need to know about the engine to answer health and readiness. */
export interface EngineStatus {
  readonly version: string;
  readonly startedAtMs: number;
  /** The engine is open and its projections have caught up with the log (at start) and not failed. */
  isReady(): boolean;
  /** The log can be written (the last append or fsync did not fail) and the projections apply it. */
  storageHealthy(): boolean;
  /** The projection store (LevelDB, which the caches read) is open and its apply loops have not failed. */
  storeHealthy(): boolean;
  /** A projection is behind the log and has applied nothing for projectionStallMs (ProgressWatch). */
  projectionStalled(nowMs: number): boolean;
  /** Replicas this node feeds. svcdb has no replication: 0, and the health reports say so. */
  readonly replicaCount: number;
}

export interface HttpServerDeps {
  readonly config: Config;
  /** The root pino logger (or a child of it); the server logs through `child({ component })`. */
  readonly logger: FastifyBaseLogger;
  readonly status: EngineStatus;
  /** Resource plugins; each is registered under /api/v1. */
  readonly plugins?: readonly FastifyPluginAsync[];
  /** Plugins registered at the root, beside /api/v1 (the vector-compatible protocol). */
  readonly rootPlugins?: readonly FastifyPluginAsync[];
  /** Set: an HTTPS listener (HTTP/2 with the HTTP/1.1 fallback) instead of plain HTTP. */
  readonly tls?: TlsMaterial;
  /** The rate limiter of /api/v1: set, every answer of the listener carries X-RateLimit-* (protocols/http/rate-limit-headers.ts). */
  readonly rateLimit?: RateLimitGate;
  /** The max_connections count shared by every API listener; default: one of its own (config.connectionsMax). */
  readonly connections?: ConnectionLimiter;
  /** The direct path's routes (direct/direct-lane.ts), answered in front of fastify on a plain HTTP listener. */
  readonly direct?: DirectRoutes;
}
