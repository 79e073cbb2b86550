/**
 * The retry schedule of a webhook delivery (the spec's retry settings, per webhook).
 *
 * Attempt 0 is immediate. After a failed attempt, retry n (n = 1 .. max_retries) waits
 *   base(n) = min(max_retry_delay_ms, initial_retry_delay_ms × multiplier^(n−1))
 * so the defaults give about 100, 200, 400 ms; when max_retries retries have failed too, the event
 * is dead-lettered.
 *
 * Jitter (when `jitter` is on): the wait is drawn uniformly from base ± 20 %, then capped at
 * max_retry_delay_ms and rounded to a whole millisecond. A bounded spread around the schedule
 * (rather than AWS's "full jitter", uniform in [0, base]) keeps the spec's "about 100, 200, 400 ms"
 * true while still spreading the retries of many events that failed together. The random source
 * is passed in (uniform in [0, 1)), so tests use a seeded one.
 */
import { SvcError, assert } from '../../core/errors.js';
import type { WebhookRetry } from '../../core/webhook.js';
import { MS_PER_SEC, WEBHOOK_LIMITS, checkBounded } from './limits.js';

/** The jitter's half-width, as a fraction of the base delay. */
export const JITTER_RATIO = 0.2;

export type Random = () => number;

export type RetryDecision =
  | { readonly kind: 'retry'; /** 1-based number of the retry. */ readonly retry: number; readonly delayMs: number }
  | { readonly kind: 'dead_letter'; readonly attempts: number };

/** Refuses (VALIDATION_ERROR) retry settings out of bounds (registration calls this). */
export function checkRetryConfig(def: WebhookRetry): void {
  const delayMax = WEBHOOK_LIMITS.retryDelayMsMax;
  checkBounded('retry.max_retries', def.max_retries, 0, WEBHOOK_LIMITS.retriesMax, true);
  checkBounded('retry.initial_retry_delay_ms', def.initial_retry_delay_ms, 0, delayMax, true);
  checkBounded('retry.max_retry_delay_ms', def.max_retry_delay_ms, 0, delayMax, true);
  checkBounded('retry.multiplier', def.multiplier, 1, WEBHOOK_LIMITS.retryMultiplierMax, false);
  checkBounded('retry.timeout_secs', def.timeout_secs, 0.001, WEBHOOK_LIMITS.attemptTimeoutSecsMax, false);
  if (typeof def.jitter !== 'boolean') {
    throw new SvcError('VALIDATION_ERROR', 'retry.jitter must be true or false', { field: 'retry.jitter', value: def.jitter });
  }
  if (def.max_retry_delay_ms < def.initial_retry_delay_ms) {
    throw new SvcError('VALIDATION_ERROR', 'retry.max_retry_delay_ms must not be below retry.initial_retry_delay_ms', {
      field: 'retry.max_retry_delay_ms',
      value: def.max_retry_delay_ms,
    });
  }
}

/** The wait before retry `retry` (1-based) without jitter. */
export function baseDelayMs(def: WebhookRetry, retry: number): number {
  assert(Number.isInteger(retry) && retry >= 1, `retry numbers start at 1, got ${retry}`);
  // The exponent is bounded by max_retries (≤ 100) and the cap applies before any overflow matters.
  return Math.min(def.max_retry_delay_ms, def.initial_retry_delay_ms * def.multiplier ** (retry - 1));
}

/** The wait before retry `retry` (1-based): the base, with ±20 % jitter when on, capped at max_retry_delay_ms. */
export function retryDelayMs(def: WebhookRetry, retry: number, random: Random = Math.random): number {
  const base = baseDelayMs(def, retry);
  if (!def.jitter) return Math.round(base);
  const factor = 1 - JITTER_RATIO + 2 * JITTER_RATIO * random();
  return Math.round(Math.min(def.max_retry_delay_ms, base * factor));
}

/** What to do after `attemptsMade` failed attempts (the first included): retry after a wait, or dead-letter. */
export function afterFailure(def: WebhookRetry, attemptsMade: number, random: Random = Math.random): RetryDecision {
  assert(Number.isInteger(attemptsMade) && attemptsMade >= 1, `attempts made start at 1, got ${attemptsMade}`);
  if (attemptsMade > def.max_retries) return { kind: 'dead_letter', attempts: attemptsMade };
  return { kind: 'retry', retry: attemptsMade, delayMs: retryDelayMs(def, attemptsMade, random) };
}

/** The time limit of one attempt. */
export function attemptTimeoutMs(def: WebhookRetry): number {
  return Math.round(def.timeout_secs * MS_PER_SEC);
}
