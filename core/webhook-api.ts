/**
 * The webhook service's vocabulary: what a registration takes, what the API shows, the delivery
 * records, and the service's interface. In core because both sides use it: protocols/ (the
 * routes, the metrics) and sinks/ (the service, the deliveries), which may not import each other;
 * the composition root hands sinks' implementation to protocols.
 */
import type { WebhookCircuitBreaker, WebhookFilter, WebhookRetry, WebhookTls, WebhookTransform } from './webhook.js';

/** POST /api/v1/webhooks (and the in-process call): the fields a user gives. */
export interface WebhookInput {
  readonly url: string;
  readonly secret: string;
  readonly tables: readonly string[];
  /** Default: INSERT, UPDATE, DELETE. */
  readonly operations?: readonly string[];
  readonly filter?: WebhookFilter | null;
  readonly transform?: WebhookTransform | null;
  readonly retry?: Partial<WebhookRetry>;
  readonly circuit_breaker?: Partial<WebhookCircuitBreaker>;
  readonly tls?: WebhookTls | null;
  readonly enabled?: boolean;
}

/** PATCH /api/v1/webhooks/{id}: any of the input's fields (secret included: rotation). */
export type WebhookPatch = Partial<WebhookInput>;

/** Circuit breaker state as GET shows it. */
export interface BreakerView {
  readonly state: 'closed' | 'open' | 'half_open';
  readonly failure_count: number;
  readonly opened_at: string | null;
}

/** What GET /api/v1/webhooks/{id} shows: the definition without the secret, and live state. */
export interface WebhookView {
  readonly id: string;
  readonly url: string;
  readonly tables: readonly string[];
  readonly operations: readonly string[];
  readonly filter: WebhookFilter | null;
  readonly transform: WebhookTransform | null;
  readonly retry: WebhookRetry;
  readonly circuit_breaker: WebhookCircuitBreaker & { readonly status: BreakerView };
  /** TLS settings shown without the client key. */
  readonly tls: { readonly ca: boolean; readonly cert: boolean; readonly key: boolean } | null;
  readonly enabled: boolean;
  readonly disabled_reason: string | null;
  readonly created_at: string;
  readonly updated_at: string;
  readonly stats: {
    readonly delivered: number;
    readonly failed_attempts: number;
    readonly dead_lettered: number;
    readonly filtered: number;
    readonly pending: number;
    readonly last_sequence: number | null;
    /** Why delivery is stuck, when it is (a filter that no longer compiles, a log read that failed). */
    readonly last_error: { readonly message: string; readonly at: string } | null;
  };
}

export type DeliveryStatus = 'delivered' | 'dead_lettered' | 'pending';

/** One event's delivery to one webhook (GET /api/v1/webhooks/{id}/deliveries). */
export interface DeliveryRecord {
  readonly event_id: string;
  readonly sequence: number;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  /** Each failed attempt: when, the HTTP status (null: no answer) and what went wrong. */
  readonly errors: readonly { readonly at: string; readonly status: number | null; readonly error: string }[];
  readonly last_status: number | null;
  readonly updated_at: string;
}

export interface DeliveryQuery {
  readonly status?: DeliveryStatus;
  readonly limit: number;
}

/** The webhook service as protocols/ and the server object see it. */
export interface WebhookApi {
  create(tenant: string, input: WebhookInput): Promise<WebhookView>;
  list(tenant: string): WebhookView[];
  get(tenant: string, id: string): WebhookView;
  update(tenant: string, id: string, patch: WebhookPatch): Promise<WebhookView>;
  remove(tenant: string, id: string): Promise<void>;
  deliveries(tenant: string, id: string, query: DeliveryQuery): Promise<DeliveryRecord[]>;
  /** Sends a dead-lettered event again (now, outside the retry schedule); resolves with its new record. */
  redeliver(tenant: string, id: string, eventId: string): Promise<DeliveryRecord>;
}

/** What the running deliveries tell the service (implemented by the webhook registry). */
export interface WebhookRuntime {
  /** Live state of a webhook's runner, or null when it does not run (yet). */
  status(id: string): { readonly breaker: BreakerView; readonly stats: WebhookView['stats'] } | null;
  deliveries(id: string, query: DeliveryQuery): Promise<DeliveryRecord[]>;
  /** Sends a dead-lettered event again; NOT_FOUND when the webhook has no such dead letter. */
  redeliver(id: string, eventId: string): Promise<DeliveryRecord>;
}

/** One webhook's state at scrape time (/metrics). */
export interface WebhookMetricRow {
  readonly id: string;
  readonly tenant: string;
  readonly breakerGauge: number;
  readonly pending: number;
  readonly filtered: number;
}
