/**
 * Webhook and event-queue metrics (the spec's table). Deliveries are observed as they happen
 * (the composition root passes observeAttempt and observeRetry to the sinks); breaker states and
 * queue sizes are read at scrape time.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { WebhookMetricRow } from '../../core/webhook-api.js';
import type { CdcMetricRow } from './cdc-metrics.js';

const DELIVERY_SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export interface WebhookMetrics {
  /** One delivery attempt ended: success, failure (retried or not), gone, or dead_lettered. */
  observeAttempt(webhookId: string, status: string, durationMs: number): void;
  observeRetry(webhookId: string): void;
}

export function registerWebhookMetrics(
  registry: Registry,
  webhooks: () => readonly WebhookMetricRow[],
  streams: () => readonly CdcMetricRow[],
): WebhookMetrics {
  const registers = [registry];
  const duration = new Histogram({
    name: 'svc_webhook_delivery_duration_seconds',
    help: 'Time of one webhook delivery attempt, from the request to the end of the answer',
    labelNames: ['webhook'],
    buckets: DELIVERY_SECONDS_BUCKETS,
    registers,
  });
  const deliveries = new Counter({
    name: 'svc_webhook_delivery_total',
    help: 'Webhook delivery attempts by outcome (success, failure, gone, dead_lettered)',
    labelNames: ['status', 'webhook'],
    registers,
  });
  const retries = new Counter({
    name: 'svc_webhook_retry_total',
    help: 'Webhook delivery attempts scheduled again after a failure',
    labelNames: ['webhook'],
    registers,
  });
  new Gauge({
    name: 'svc_circuit_breaker_state',
    help: 'Circuit breaker of a webhook endpoint: 0 closed, 1 half-open, 2 open',
    labelNames: ['webhook', 'database'],
    registers,
    collect(this: Gauge<'webhook' | 'database'>) {
      this.reset();
      for (const row of webhooks()) this.set({ webhook: row.id, database: row.tenant }, row.breakerGauge);
    },
  });
  new Gauge({
    name: 'svc_event_queue_size',
    help: 'Events read from the log and not yet delivered, by queue (cdc: per stream, webhook: per webhook)',
    labelNames: ['queue_type', 'stream', 'webhook', 'database'],
    registers,
    collect(this: Gauge<'queue_type' | 'stream' | 'webhook' | 'database'>) {
      this.reset();
      for (const row of streams()) this.set({ queue_type: 'cdc', stream: row.name, database: row.tenant }, row.queued);
      for (const row of webhooks()) this.set({ queue_type: 'webhook', webhook: row.id, database: row.tenant }, row.pending);
    },
  });
  return {
    observeAttempt(webhookId, status, durationMs) {
      deliveries.inc({ status, webhook: webhookId });
      if (status !== 'dead_lettered') duration.observe({ webhook: webhookId }, durationMs / 1000);
    },
    observeRetry(webhookId) {
      retries.inc({ webhook: webhookId });
    },
  };
}
