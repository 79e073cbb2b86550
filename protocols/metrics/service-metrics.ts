import { registerCdcMetrics, type CdcMetricRow } from './cdc-metrics.js';
import type { WebhookMetricRow } from '../../core/webhook-api.js';
import { registerWebhookMetrics, type WebhookMetrics } from './webhook-metrics.js';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { DEFAULT_TENANT } from '../../core/catalog.js';
import type { ConnectionGauge } from '../http/connections.js';
import type { QueryMetrics, QuerySample } from './query-metrics.js';
import { QueryCounts, QueryDurations, registerSeries } from './query-series.js';

/**
 * Distinct `database` label values kept; queries of further tenants count under OTHER_DATABASE.
 * Each value costs a counter pair and a histogram (~20 series): tenants are few, but a label must
 * never grow without bound (Prometheus's cardinality rule).
 */
export const DATABASE_LABELS_MAX = 100;
export const OTHER_DATABASE = '_other';

/** From a point lookup (1 ms) to the longest sensible synchronous query (5 min). */
export const QUERY_DURATION_BUCKETS_SECONDS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** The direct path's routes and the reasons of its declines (protocols/http/direct/direct-lane.ts), as the metrics label them. */
const DIRECT_ROUTES = ['row', 'query'] as const;
const DECLINE_REASONS = ['refused', 'error'] as const;
type DirectRoute = (typeof DIRECT_ROUTES)[number];
type DeclineReason = (typeof DECLINE_REASONS)[number];

export interface ServiceMetricsDeps {
  /** Open connections of the API listeners. */
  readonly connections: ConnectionGauge;
  /** The SQL engine's scan cache counters since start (SqlEngine.scanCacheStats()). */
  scanCache(): { readonly hits: number; readonly fills: number };
  /** Storage can write (the health rule): svc_up is 1 then, 0 otherwise. */
  healthy(): boolean;
}

/** A /metrics body in the Prometheus text format. */
export interface MetricsText {
  readonly contentType: string;
  readonly body: string;
}

/** What a /metrics route serves. */
export interface MetricsSource {
  render(): Promise<MetricsText>;
}

let processRegistry: Registry | null = null;

/**
 * Default metrics left out: gauges named like counters, which `promtool check metrics` refuses
 * ("non-counter metrics should not have _total suffix"); each is the sum of a labelled gauge kept
 * (nodejs_active_handles, nodejs_active_requests, nodejs_active_resources).
 */
const DROPPED_DEFAULT_METRICS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/**
 * prom-client's default process metrics (CPU, memory, event loop lag, GC, handles), once per
 * process: they describe the process, and each collector installs observers that are never removed.
 */
function processMetrics(): Registry {
  if (processRegistry === null) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, eventLoopMonitoringPrecision: 10 });
    for (const name of DROPPED_DEFAULT_METRICS) processRegistry.removeSingleMetric(name);
  }
  return processRegistry;
}

/**
 * The service's Prometheus metrics (the spec's table, plus the ops port's gauges and the default
 * process metrics), in a registry of its own rather than prom-client's global one.
 */
export class ServiceMetrics implements QueryMetrics, MetricsSource {
  private readonly registry = new Registry();
  private readonly databases = new Set<string>();
  /** Kept by hand (query-series.ts): observed on every query and row request, written as prom-client writes its own. */
  private readonly queries: QueryCounts;
  private readonly duration: QueryDurations;

  /** Adds the CDC streams' and webhooks' metrics (called once by the composition root). */
  registerEvents(streams: () => readonly CdcMetricRow[], webhooks: () => readonly WebhookMetricRow[]): WebhookMetrics {
    registerCdcMetrics(this.registry, streams, webhooks);
    return registerWebhookMetrics(this.registry, webhooks, streams);
  }

  /**
   * Adds svc_http_direct_answers_total: the requests the direct path answered, by route; and
   * svc_http_direct_declines_total: those it began and handed to the router because its work threw,
   * by route and reason (refused: the client's error; error: a fault). Called once by the composition root.
   */
  registerDirect(
    answers: () => Readonly<Record<DirectRoute, number>>,
    declines: () => Readonly<Record<DirectRoute, Readonly<Record<DeclineReason, number>>>>,
  ): void {
    new Counter({
      name: 'svc_http_direct_answers_total',
      help: 'Requests answered by the direct path in front of the router (GET of a row by id: row; a point SELECT over POST /query: query)',
      labelNames: ['route'],
      registers: [this.registry],
      collect(this: Counter<'route'>) {
        const now = answers();
        this.reset();
        for (const route of DIRECT_ROUTES) this.inc({ route }, now[route]);
      },
    });
    new Counter({
      name: 'svc_http_direct_declines_total',
      help: 'Requests the direct path began and handed to the router because its work threw, by route and reason (refused: an error the router answers 4xx; error: any other throw)',
      labelNames: ['route', 'reason'],
      registers: [this.registry],
      collect(this: Counter<'route' | 'reason'>) {
        const now = declines();
        this.reset();
        for (const route of DIRECT_ROUTES) {
          for (const reason of DECLINE_REASONS) this.inc({ route, reason }, now[route][reason]);
        }
      },
    });
  }

  constructor(deps: ServiceMetricsDeps) {
    const registers = [this.registry];
    this.queries = new QueryCounts('svc_queries_total', 'Queries run (POST /query, /query/stream, /query/explain, async), by outcome and database (tenant)');
    registerSeries(this.registry, this.queries);
    this.duration = new QueryDurations(
      'svc_query_duration_seconds',
      'Time from the start of a query to its result or error, by database (tenant)',
      QUERY_DURATION_BUCKETS_SECONDS,
    );
    registerSeries(this.registry, this.duration);
    const connections = async function (this: Gauge): Promise<void> {
      this.set(await deps.connections.count());
    };
    new Gauge({ name: 'svc_connections_active', help: 'Open connections of the API listeners (HTTP and HTTPS)', registers, collect: connections });
    new Gauge({
      name: 'svc_connections',
      help: "Open connections of the API listeners (the ops port's name for svc_connections_active)",
      registers,
      collect: connections,
    });
    new Gauge({
      name: 'svc_cache_hit_ratio',
      help: 'Share of full table scans served from the scan cache since start: hits / (hits + fills); 0 before any',
      registers,
      collect(this: Gauge) {
        const { hits, fills } = deps.scanCache();
        this.set(hits + fills === 0 ? 0 : hits / (hits + fills));
      },
    });
    new Gauge({
      name: 'svc_up',
      help: '1 while the service is healthy (storage can write), 0 when /health answers unhealthy',
      registers,
      collect(this: Gauge) {
        this.set(deps.healthy() ? 1 : 0);
      },
    });
    new Gauge({
      name: 'svc_memory_usage_bytes',
      help: 'Resident memory of the process',
      registers,
      collect(this: Gauge) {
        this.set(process.memoryUsage.rss());
      },
    });
    // Series exist from the start (a rate over a counter that appears late misses its first step).
    for (const status of ['success', 'error'] as const) this.queries.add(status, DEFAULT_TENANT, 0);
    this.duration.zero(DEFAULT_TENANT);
    this.databases.add(DEFAULT_TENANT);
  }

  observe(sample: QuerySample): void {
    const database = this.databaseLabel(sample.database);
    this.queries.add(sample.ok ? 'success' : 'error', database);
    this.duration.observe(database, sample.durationSeconds);
  }

  async render(): Promise<MetricsText> {
    const merged = Registry.merge([processMetrics(), this.registry]);
    return { contentType: merged.contentType, body: await merged.metrics() };
  }

  private databaseLabel(database: string): string {
    if (this.databases.has(database)) return database;
    if (this.databases.size >= DATABASE_LABELS_MAX) return OTHER_DATABASE;
    this.databases.add(database);
    return database;
  }
}
