import type { EngineStatus } from '../types.js';

/** Component status values; the spec shows only `healthy` (docs/decisions.md has the others). */
export const COMPONENT_STATUSES = ['healthy', 'starting', 'unhealthy', 'not_configured'] as const;
export type ComponentStatus = (typeof COMPONENT_STATUSES)[number];

/** Overall status: `unhealthy` (HTTP 503) exactly when storage cannot write. */
export const OVERALL_STATUSES = ['healthy', 'unhealthy'] as const;
export type OverallStatus = (typeof OVERALL_STATUSES)[number];

export interface HealthBody {
  readonly status: OverallStatus;
  readonly version: string;
  readonly uptime_seconds: number;
  readonly components: {
    readonly storage: ComponentStatus;
    readonly query_engine: ComponentStatus;
    readonly replication: ComponentStatus;
    readonly cache: ComponentStatus;
  };
}

export interface ReadyBody {
  readonly ready: boolean;
  readonly checks: {
    readonly database: boolean;
    readonly connections_available: boolean;
    readonly replication_synced: boolean;
  };
}

/** Whole seconds since the engine started. */
export function uptimeSeconds(status: EngineStatus, nowMs: number): number {
  return Math.max(0, Math.floor((nowMs - status.startedAtMs) / 1000));
}

export function storageStatus(status: EngineStatus): ComponentStatus {
  return status.storageHealthy() ? 'healthy' : 'unhealthy';
}

/**
 * The database answers queries once the engine is open and projections caught up; a projection
 * that stalls behind the log (nothing applied for projectionStallMs) makes it unhealthy.
 */
export function databaseStatus(status: EngineStatus, nowMs: number): ComponentStatus {
  if (!status.storageHealthy()) return 'unhealthy';
  if (!status.isReady()) return 'starting';
  return status.projectionStalled(nowMs) ? 'unhealthy' : 'healthy';
}

/** svcdb feeds no replicas: `not_configured`, never a made-up `healthy`. */
export function replicationStatus(status: EngineStatus): ComponentStatus {
  return status.replicaCount === 0 ? 'not_configured' : 'healthy';
}

/**
 * The caches (the scan cache and the projections it reads) follow the projection store: unhealthy
 * when it is not open or its apply loops stopped (a log that cannot be written stops them too).
 */
export function cacheStatus(status: EngineStatus): ComponentStatus {
  if (!status.storeHealthy()) return 'unhealthy';
  return status.isReady() ? 'healthy' : 'starting';
}

/**
 * Watches a projection's progress between health checks (time passed in): stalled when it is
 * behind the log and its applied LSN has not moved for stallMs. Caught up, or moving: not stalled.
 */
export class ProgressWatch {
  private lastAppliedLsn = -1;
  private sinceMs = 0;

  constructor(private readonly stallMs: number) {}

  stalled(appliedLsn: number, durableLsn: number, nowMs: number): boolean {
    if (appliedLsn >= durableLsn || appliedLsn !== this.lastAppliedLsn) {
      this.lastAppliedLsn = appliedLsn;
      this.sinceMs = nowMs;
      return false;
    }
    return nowMs - this.sinceMs >= this.stallMs;
  }
}

export function overallStatus(status: EngineStatus): OverallStatus {
  return status.storageHealthy() ? 'healthy' : 'unhealthy';
}

export function healthBody(status: EngineStatus, nowMs: number): HealthBody {
  return {
    status: overallStatus(status),
    version: status.version,
    uptime_seconds: uptimeSeconds(status, nowMs),
    components: {
      storage: storageStatus(status),
      query_engine: databaseStatus(status, nowMs),
      replication: replicationStatus(status),
      cache: cacheStatus(status),
    },
  };
}

/**
 * Ready when every check passes. `connectionsAvailable` comes from the listener. With no replica
 * configured nothing can be behind: `replication_synced` is true (`replication` says not_configured).
 */
export function readyBody(status: EngineStatus, connectionsAvailable: boolean, nowMs: number): ReadyBody {
  const checks = {
    database: databaseStatus(status, nowMs) === 'healthy',
    connections_available: connectionsAvailable,
    replication_synced: status.replicaCount === 0,
  };
  return { ready: checks.database && checks.connections_available && checks.replication_synced, checks };
}

/** HTTP status for a health body / ready body. */
export const healthHttpStatus = (body: HealthBody): 200 | 503 => (body.status === 'healthy' ? 200 : 503);
export const readyHttpStatus = (body: ReadyBody): 200 | 503 => (body.ready ? 200 : 503);

export const healthBodySchema = {
  type: 'object',
  required: ['status', 'version', 'uptime_seconds', 'components'],
  properties: {
    status: { type: 'string', enum: [...OVERALL_STATUSES] },
    version: { type: 'string' },
    uptime_seconds: { type: 'integer' },
    components: {
      type: 'object',
      required: ['storage', 'query_engine', 'replication', 'cache'],
      properties: {
        storage: { type: 'string', enum: [...COMPONENT_STATUSES] },
        query_engine: { type: 'string', enum: [...COMPONENT_STATUSES] },
        replication: { type: 'string', enum: [...COMPONENT_STATUSES] },
        cache: { type: 'string', enum: [...COMPONENT_STATUSES] },
      },
    },
  },
} as const;

export const readyBodySchema = {
  type: 'object',
  required: ['ready', 'checks'],
  properties: {
    ready: { type: 'boolean' },
    checks: {
      type: 'object',
      required: ['database', 'connections_available', 'replication_synced'],
      properties: {
        database: { type: 'boolean' },
        connections_available: { type: 'boolean' },
        replication_synced: { type: 'boolean' },
      },
    },
  },
} as const;
