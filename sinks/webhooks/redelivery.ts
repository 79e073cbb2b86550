/**
 * Sending a dead-lettered event again, on request (POST .../deliveries/{event_id}/retry): one
 * attempt, now, outside the retry schedule; the ledger entry says how it went.
 */
import type { WebhookDef } from '../../core/webhook.js';
import { EndpointClient, type PostResult } from './http-client.js';
import type { DeliveryLedger, LedgerEntry } from './ledger.js';
import { attemptTimeoutMs } from './retry.js';
import { deliveryHeaders } from './signature.js';
import { compileTransform, type CompiledTransform } from './transform.js';

/** A keep-alive connection is kept this long idle (a receiver's own Keep-Alive hint may lower it). */
const KEEP_ALIVE_MS = 4000;
/** Bytes of a failed answer's body kept in a delivery's error text. */
const ERROR_TEXT_BYTES_MAX = 512;

/** The server's limits of an endpoint's connections. */
interface EndpointLimits {
  readonly connectionsPerEndpointMax: number;
  readonly connectTimeoutMs: number;
  readonly allowedCidrs: readonly string[];
}

/** The HTTP client of a webhook's endpoint, with the server's limits. */
export function endpointClient(def: WebhookDef, limits: EndpointLimits): EndpointClient {
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

/** What a redelivery uses of its webhook's runner (webhook-runner.ts). */
export interface RedeliveryDeps {
  readonly def: WebhookDef;
  readonly ledger: DeliveryLedger;
  readonly limits: EndpointLimits;
  /**
   * The runner's client and transform while its loop runs, asked for after the ledger read (the loop may
   * stop, and close its client, while that read waits); null: made for this one attempt (the client closed after it).
   */
  readonly client: () => EndpointClient | null;
  readonly transform: () => CompiledTransform | null;
  readonly onAttempt: ((webhookId: string, outcome: 'success' | 'failure', durationMs: number) => void) | undefined;
  readonly now: () => number;
}

/**
 * Sends a dead letter of the webhook again (one attempt, the same signature headers as a delivery)
 * and puts the entry that says how it went; null when there is no such dead letter.
 */
export async function redeliverDeadLetter(deps: RedeliveryDeps, eventId: string): Promise<LedgerEntry | null> {
  const { def, ledger } = deps;
  const entry = await ledger.get(def.id, eventId);
  if (!entry || entry.status !== 'dead_lettered' || !entry.event) return null;
  const runnerClient = deps.client();
  const client = runnerClient ?? endpointClient(def, deps.limits);
  const { body, contentType } = await (deps.transform() ?? compileTransform(def.transform)).render(entry.event);
  const headers = deliveryHeaders({ secret: def.secret, body, eventId: entry.event.event_id, contentType, sentAtMs: deps.now() });
  const result = await client.post(body, headers, attemptTimeoutMs(def.retry));
  if (client !== runnerClient) await client.close();
  deps.onAttempt?.(def.id, result.outcome === 'success' ? 'success' : 'failure', result.durationMs);
  const next = afterRedelivery(entry, result, deps.now());
  await ledger.put(def.id, next);
  return next;
}
