/** A keep-alive connection is kept this long idle (a receiver's own Keep-Alive hint may lower it). */
const KEEP_ALIVE_MS = 4000;
/** Bytes of a failed answer's body kept in a delivery's error text. */
const ERROR_TEXT_BYTES_MAX = 512;

/** The HTTP client of a webhook's endpoint, with the server's limits. */
export function endpointClient(
  def: WebhookDef,
  limits: { readonly connectionsPerEndpointMax: number; readonly connectTimeoutMs: number; readonly allowedCidrs: readonly string[] },
): EndpointClient {
  return new EndpointClient(def.url, {
    connectionsMax: limits.connectionsPerEndpointMax,
    pipelining: 1,
    connectTimeoutMs: limits.connectTimeoutMs,
    keepAliveTimeoutMs: KEEP_ALIVE_MS,
    allowedCidrs: limits.allowedCidrs,
    tls: def.tls,
    errorTextBytesMax: ERROR_TEXT_BYTES_MAX,
  });
}

/**
 * Sending a dead-lettered event again, on request (POST .../deliveries/{event_id}/retry): one
 * attempt, now, outside the retry schedule; the ledger entry says how it went.
 */
import type { WebhookDef } from '../../core/webhook.js';
import { EndpointClient, type PostResult } from './http-client.js';
import type { LedgerEntry } from './ledger.js';

/** The entry after one more attempt: delivered (the event is no longer kept), or dead with the error added. */
export function afterRedelivery(entry: LedgerEntry, result: PostResult, nowMs: number): LedgerEntry {
  const at = new Date(nowMs).toISOString();
  if (result.outcome === 'success') {
    return { ...entry, status: 'delivered', attempts: entry.attempts + 1, last_status: result.status, updated_at: at, written_at_ms: nowMs, event: undefined };
  }
  return {
    ...entry,
    attempts: entry.attempts + 1,
    last_status: result.status,
    updated_at: at,
    errors: [...entry.errors, { at, status: result.status, error: result.error ?? 'failed' }],
  };
}
