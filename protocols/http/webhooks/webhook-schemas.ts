/**
 * JSON schemas of the webhook routes: types and structure only, unknown fields refused everywhere
 * (422 VALIDATION_ERROR for a body, 400 for a path or query string). Bounds and meaning (a URL
 * that parses, a known table, a template that compiles, retries in range) are the webhook
 * service's to check, once, with the field named in `details.field`.
 */

const retry = {
  type: 'object',
  additionalProperties: false,
  properties: {
    max_retries: { type: 'integer' },
    initial_retry_delay_ms: { type: 'integer' },
    max_retry_delay_ms: { type: 'integer' },
    multiplier: { type: 'number' },
    jitter: { type: 'boolean' },
    timeout_secs: { type: 'number' },
  },
} as const;

const circuitBreaker = {
  type: 'object',
  additionalProperties: false,
  properties: {
    failure_threshold: { type: 'integer' },
    success_threshold: { type: 'integer' },
    timeout_secs: { type: 'number' },
    half_open_max_calls: { type: 'integer' },
  },
} as const;

const filter = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: {
    columns: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
    predicate: { type: 'string' },
  },
} as const;

/** template (+ content_type) or jsonpath: which one is given is the service's check (one clear message). */
const transform = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: {
    template: { type: 'string' },
    content_type: { type: 'string' },
    jsonpath: { type: 'object', additionalProperties: { type: 'string' } },
  },
} as const;

const tls = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: { ca: { type: 'string' }, cert: { type: 'string' }, key: { type: 'string' } },
} as const;

const fields = {
  url: { type: 'string' },
  secret: { type: 'string' },
  tables: { type: 'array', items: { type: 'string' } },
  operations: { type: 'array', items: { type: 'string' } },
  filter,
  transform,
  retry,
  circuit_breaker: circuitBreaker,
  tls,
  enabled: { type: 'boolean' },
} as const;

/** POST /webhooks. */
export const createWebhookSchema = {
  type: 'object',
  required: ['url', 'secret', 'tables'],
  additionalProperties: false,
  properties: fields,
} as const;

/** PATCH /webhooks/{id}: any of the fields, at least one. */
export const patchWebhookSchema = {
  type: 'object',
  minProperties: 1,
  additionalProperties: false,
  properties: fields,
} as const;

const id = { type: 'string', minLength: 1, maxLength: 128 } as const;

export const webhookParams = {
  type: 'object',
  required: ['id'],
  additionalProperties: false,
  properties: { id },
} as const;

export const deliveryParams = {
  type: 'object',
  required: ['id', 'event_id'],
  additionalProperties: false,
  properties: { id, event_id: id },
} as const;

/** Delivery records per page of GET /webhooks/{id}/deliveries. */
export const DELIVERIES_LIMIT_DEFAULT = 100;
export const DELIVERIES_LIMIT_MAX = 1000;

export const deliveriesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    status: { type: 'string', enum: ['delivered', 'dead_lettered', 'pending'] },
    limit: { type: 'integer', minimum: 1, maximum: DELIVERIES_LIMIT_MAX, default: DELIVERIES_LIMIT_DEFAULT },
  },
} as const;
