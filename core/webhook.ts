/**
 * A webhook's definition: what POST /api/v1/webhooks (or the in-process call) wrote into the log,
 * a catalog object of kind 'webhook' named by its id. The writer (query/) builds it, the tables
 * projection keeps it, the sinks deliver to it. Field names are the REST API's (snake_case).
 */
import type { TableId } from './catalog.js';
import { SvcError } from './errors.js';

export const WEBHOOK_OBJECT = 'webhook';
export const WEBHOOK_DEF_VERSION = 1;

/** The spec's delivery defaults (interface spec, "Delivery behaviour"). */
export const WEBHOOK_RETRY_DEFAULTS: WebhookRetry = Object.freeze({
  max_retries: 3,
  initial_retry_delay_ms: 100,
  max_retry_delay_ms: 30_000,
  multiplier: 2,
  jitter: true,
  timeout_secs: 30,
});

/** The spec's circuit breaker defaults (per endpoint). */
export const WEBHOOK_BREAKER_DEFAULTS: WebhookCircuitBreaker = Object.freeze({
  failure_threshold: 5,
  success_threshold: 2,
  timeout_secs: 60,
  half_open_max_calls: 3,
});

export interface WebhookRetry {
  readonly max_retries: number;
  readonly initial_retry_delay_ms: number;
  readonly max_retry_delay_ms: number;
  readonly multiplier: number;
  readonly jitter: boolean;
  /** A delivery attempt that gets no 2xx within this long has failed. */
  readonly timeout_secs: number;
}

export interface WebhookCircuitBreaker {
  readonly failure_threshold: number;
  readonly success_threshold: number;
  readonly timeout_secs: number;
  readonly half_open_max_calls: number;
}

/** Which events pass (all given parts must hold). */
export interface WebhookFilter {
  /** Per table: an UPDATE passes only when one of these columns changed. */
  readonly columns?: Readonly<Record<string, readonly string[]>>;
  /** A SQL boolean condition in PostgreSQL syntax; bare columns are the new row (old for DELETE), OLD.c / NEW.c as in a trigger's WHEN. */
  readonly predicate?: string;
}

/** How the body is built: the event as JSON (none), a nunjucks template, or a JSONPath map. */
export type WebhookTransform = { readonly template: string; readonly content_type?: string } | { readonly jsonpath: Readonly<Record<string, string>> };

/** Mutual TLS and trust for https receivers (PEM text). */
export interface WebhookTls {
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
}

export interface WebhookDef {
  readonly version: number;
  readonly id: string;
  readonly tenant: string;
  readonly url: string;
  /** The signing secret: never returned by the API after creation. */
  readonly secret: string;
  readonly tables: readonly string[];
  /** The tables' ids when the webhook was created or last changed (a webhook follows ids, as a CDC stream does). */
  readonly table_ids: readonly TableId[];
  readonly operations: readonly string[];
  readonly filter: WebhookFilter | null;
  readonly transform: WebhookTransform | null;
  readonly retry: WebhookRetry;
  readonly circuit_breaker: WebhookCircuitBreaker;
  readonly tls: WebhookTls | null;
  /** Off after the receiver answered 410 Gone (or by PATCH {enabled: false}). */
  readonly enabled: boolean;
  readonly disabled_reason: string | null;
  readonly created_at: string;
  readonly updated_at: string;
}

export function encodeWebhookDef(def: WebhookDef): string {
  return JSON.stringify(def);
}

export function decodeWebhookDef(json: string): WebhookDef {
  const def = JSON.parse(json) as WebhookDef;
  if (def.version !== WEBHOOK_DEF_VERSION) {
    throw new SvcError('INTERNAL_ERROR', `webhook definition of unknown version ${String(def.version)}`, { version: def.version });
  }
  return def;
}
