/**
 * Signing a webhook delivery. Two schemes ride on every POST, both over the exact body bytes sent:
 *
 * - svcdb's own (the interface spec): `X-Svc-Signature: sha256=<hex HMAC-SHA256(secret, body)>`,
 *   keyed with the UTF-8 bytes of the secret string exactly as registered (whsec_ prefix included),
 *   so a receiver verifies with `createHmac('sha256', secret).update(rawBody)`.
 * - Standard Webhooks (https://www.standardwebhooks.com): `webhook-id`, `webhook-timestamp` (unix
 *   seconds) and `webhook-signature: v1,<base64 HMAC-SHA256(key, "${id}.${timestamp}.${body}")>`.
 *   The key: a secret of the form `whsec_<base64>` is base64-decoded (what Standard Webhooks
 *   libraries do with such a secret); any other secret is used as its UTF-8 bytes (verifier
 *   libraries take those as a raw key, e.g. `new Webhook(Buffer.from(secret), { format: 'raw' })`).
 *
 * The id of both is the event id (stable across retries and redeliveries, as Standard Webhooks
 * asks); the timestamps are the time of the attempt (a Standard Webhooks verifier refuses one older
 * than 5 minutes, so a retry must not carry the commit time, which is in the body anyway).
 */
import { createHmac } from 'node:crypto';
import { SvcError } from '../../core/errors.js';

export const STANDARD_WEBHOOKS_SECRET_PREFIX = 'whsec_';

/** Bounds of a signing secret (characters of the string as registered). */
export const SECRET_CHARS_MIN = 1;
export const SECRET_CHARS_MAX = 1024;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Refuses a secret that is empty, too long, or a `whsec_` secret whose rest is not base64 (registration calls this). */
export function checkSecret(secret: string): void {
  if (typeof secret !== 'string' || secret.length < SECRET_CHARS_MIN || secret.length > SECRET_CHARS_MAX) {
    throw new SvcError('VALIDATION_ERROR', `a webhook secret is a string of ${SECRET_CHARS_MIN} to ${SECRET_CHARS_MAX} characters`, { field: 'secret' });
  }
  if (secret.startsWith(STANDARD_WEBHOOKS_SECRET_PREFIX)) {
    const rest = secret.slice(STANDARD_WEBHOOKS_SECRET_PREFIX.length);
    if (rest.length === 0 || rest.length % 4 !== 0 || !BASE64.test(rest)) {
      throw new SvcError('VALIDATION_ERROR', 'a secret starting with whsec_ must continue with a non-empty base64 key (Standard Webhooks)', {
        field: 'secret',
      });
    }
  }
}

/** `sha256=<hex HMAC-SHA256 of the exact body bytes>`, keyed with the secret's UTF-8 bytes. */
export function svcSignature(secret: string, body: Uint8Array): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** The Standard Webhooks key of a secret: the base64-decoded rest of `whsec_...`, else the UTF-8 bytes. */
export function standardWebhooksKey(secret: string): Buffer {
  if (secret.startsWith(STANDARD_WEBHOOKS_SECRET_PREFIX)) {
    return Buffer.from(secret.slice(STANDARD_WEBHOOKS_SECRET_PREFIX.length), 'base64');
  }
  return Buffer.from(secret, 'utf8');
}

/** `v1,<base64 HMAC-SHA256 of "${id}.${timestampSecs}.${body}">` (Standard Webhooks). */
export function standardWebhooksSignature(secret: string, id: string, timestampSecs: number, body: Uint8Array): string {
  const mac = createHmac('sha256', standardWebhooksKey(secret));
  mac.update(`${id}.${timestampSecs}.`, 'utf8');
  mac.update(body);
  return `v1,${mac.digest('base64')}`;
}

export interface DeliveryHeaderInput {
  readonly secret: string;
  /** The exact bytes that will be sent. */
  readonly body: Uint8Array;
  readonly eventId: string;
  /** The body's type (a template's content_type, else application/json). */
  readonly contentType: string;
  /** Time of this attempt (the caller's clock). */
  readonly sentAtMs: number;
}

/** The headers of one delivery attempt: the spec's four and the three of Standard Webhooks. */
export function deliveryHeaders(input: DeliveryHeaderInput): Record<string, string> {
  const sentAt = new Date(input.sentAtMs);
  const timestampSecs = Math.floor(input.sentAtMs / 1000);
  return {
    'Content-Type': input.contentType,
    'X-Svc-Signature': svcSignature(input.secret, input.body),
    'X-Svc-Event-ID': input.eventId,
    'X-Svc-Timestamp': sentAt.toISOString(),
    'webhook-id': input.eventId,
    'webhook-timestamp': String(timestampSecs),
    'webhook-signature': standardWebhooksSignature(input.secret, input.eventId, timestampSecs, input.body),
  };
}
