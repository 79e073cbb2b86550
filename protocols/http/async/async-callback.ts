import { createHmac } from 'node:crypto';
import type { Logger } from '../../../core/logger.js';

/** The spec's webhook retry policy: 3 retries after the first attempt, 100 ms doubling, with jitter. */
const RETRIES_MAX = 3;
const RETRY_DELAY_MS_INITIAL = 100;
const RETRY_DELAY_MS_MAX = 30_000;

export interface CallbackOptions {
  readonly timeoutMs: number;
  /** Key of the X-Svc-Signature HMAC; null: not signed. */
  readonly secret: string | null;
  /** Aborted when the server closes: no more attempts. */
  readonly signal: AbortSignal;
  readonly logger: Logger;
}

/** The spec's webhook signature: `sha256=<hex HMAC-SHA256 of the payload>`, keyed with the secret. */
export function signatureOf(secret: string, payload: string): string {
  return `sha256=${createHmac('sha256', secret).update(payload).digest('hex')}`;
}

function headersOf(payload: string, eventId: string, secret: string | null): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-svc-event-id': eventId,
    'x-svc-timestamp': new Date().toISOString(),
  };
  if (secret !== null) headers['x-svc-signature'] = signatureOf(secret, payload);
  return headers;
}

/** One POST; true on a 2xx. Redirects are not followed (the URL was the client's choice, not the redirect's). */
async function attempt(url: string, payload: string, eventId: string, options: CallbackOptions): Promise<boolean> {
  const signal = AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)]);
  const response = await fetch(url, { method: 'POST', body: payload, headers: headersOf(payload, eventId, options.secret), redirect: 'manual', signal });
  await response.body?.cancel();
  return response.status >= 200 && response.status < 300;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * POSTs `body` as JSON to `url`, retrying a failed attempt (network error, timeout, non-2xx) as
 * the spec's webhooks do. Resolves whether it was delivered; never rejects.
 */
export async function deliverCallback(url: string, body: unknown, eventId: string, options: CallbackOptions): Promise<boolean> {
  const payload = JSON.stringify(body);
  let lastError: unknown = null;
  for (let tryNo = 0; tryNo <= RETRIES_MAX && !options.signal.aborted; tryNo++) {
    if (tryNo > 0) {
      const base = Math.min(RETRY_DELAY_MS_INITIAL * 2 ** (tryNo - 1), RETRY_DELAY_MS_MAX);
      await sleep(base + Math.random() * base * 0.2, options.signal);
    }
    try {
      if (await attempt(url, payload, eventId, options)) return true;
    } catch (error) {
      // A network error or timeout: the next attempt, as for a non-2xx answer.
      lastError = error;
    }
  }
  options.logger.info({ eventId, reason: lastError instanceof Error ? lastError.message : 'not a 2xx answer' }, 'async query callback not delivered');
  return false;
}
