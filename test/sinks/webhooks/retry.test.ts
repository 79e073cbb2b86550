import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WEBHOOK_RETRY_DEFAULTS, type WebhookRetry } from '../../../core/webhook.js';
import { JITTER_RATIO, afterFailure, attemptTimeoutMs, baseDelayMs, checkRetryConfig, retryDelayMs } from '../../../sinks/webhooks/retry.js';
import { seededRandom } from '../../helpers/random.js';

const SPEC = WEBHOOK_RETRY_DEFAULTS;

/** The decisions after each failed attempt until the dead letter. */
function schedule(def: WebhookRetry, random: () => number): ReturnType<typeof afterFailure>[] {
  const out: ReturnType<typeof afterFailure>[] = [];
  for (let attempts = 1; ; attempts++) {
    const d = afterFailure(def, attempts, random);
    out.push(d);
    if (d.kind === 'dead_letter') return out;
  }
}

describe('retry schedule', () => {
  it('spec defaults: about 100, 200, 400 ms plus jitter, then the dead letter after 4 attempts', () => {
    const decisions = schedule(SPEC, seededRandom(42));
    expect(decisions.map((d) => d.kind)).toEqual(['retry', 'retry', 'retry', 'dead_letter']);
    expect(decisions[3]).toEqual({ kind: 'dead_letter', attempts: 4 });
    const expected = [100, 200, 400];
    decisions.slice(0, 3).forEach((d, i) => {
      if (d.kind !== 'retry') throw new Error('a retry');
      expect(d.retry).toBe(i + 1);
      expect(d.delayMs).toBeGreaterThanOrEqual(expected[i]! * (1 - JITTER_RATIO));
      expect(d.delayMs).toBeLessThanOrEqual(expected[i]! * (1 + JITTER_RATIO));
      expect(Number.isInteger(d.delayMs)).toBe(true);
    });
  });

  it('the base is min(max_retry_delay_ms, initial × multiplier^(n−1))', () => {
    expect([1, 2, 3, 4, 9, 10, 11].map((n) => baseDelayMs(SPEC, n))).toEqual([100, 200, 400, 800, 25_600, 30_000, 30_000]);
    const def = { ...SPEC, initial_retry_delay_ms: 250, multiplier: 1.5, max_retry_delay_ms: 1000 };
    expect([1, 2, 3, 4, 5].map((n) => baseDelayMs(def, n))).toEqual([250, 375, 562.5, 843.75, 1000]);
  });

  it('jitter spans ±20 % of the base at the ends of the random range', () => {
    expect(retryDelayMs(SPEC, 1, () => 0)).toBe(80);
    expect(retryDelayMs(SPEC, 1, () => 0.5)).toBe(100);
    expect(retryDelayMs(SPEC, 3, () => 0.999999)).toBe(480);
  });

  it('jitter never passes max_retry_delay_ms', () => {
    expect(retryDelayMs(SPEC, 20, () => 0.999999)).toBe(30_000);
    expect(retryDelayMs(SPEC, 20, () => 0)).toBe(24_000);
  });

  it('without jitter the waits are exact', () => {
    const def = { ...SPEC, jitter: false, max_retries: 5 };
    const delays = schedule(def, () => 0.9).flatMap((d) => (d.kind === 'retry' ? [d.delayMs] : []));
    expect(delays).toEqual([100, 200, 400, 800, 1600]);
  });

  it('a seeded random gives the same schedule twice; different seeds spread', () => {
    const a = schedule(SPEC, seededRandom(7));
    expect(schedule(SPEC, seededRandom(7))).toEqual(a);
    const firsts = new Set(Array.from({ length: 20 }, (_, seed) => retryDelayMs(SPEC, 1, seededRandom(seed))));
    expect(firsts.size).toBeGreaterThan(5);
  });

  it('max_retries 0: the first failure is dead-lettered', () => {
    expect(afterFailure({ ...SPEC, max_retries: 0 }, 1)).toEqual({ kind: 'dead_letter', attempts: 1 });
  });

  it('property: every wait lies in [0.8 base, min(1.2 base, max)]', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000 }),
        fc.double({ min: 1, max: 10, noNaN: true }),
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: 0, max: 0x7fffffff }),
        (initial, multiplier, retry, seed) => {
          const def = { ...SPEC, initial_retry_delay_ms: initial, multiplier, max_retries: 100 };
          const base = baseDelayMs(def, retry);
          const d = retryDelayMs(def, retry, seededRandom(seed));
          expect(d).toBeGreaterThanOrEqual(Math.round(base * 0.8) - 0.5);
          expect(d).toBeLessThanOrEqual(Math.min(def.max_retry_delay_ms, Math.round(base * 1.2)) + 0.5);
        },
      ),
    );
  });

  it('timeout_secs → the attempt time limit in ms', () => {
    expect(attemptTimeoutMs(SPEC)).toBe(30_000);
    expect(attemptTimeoutMs({ ...SPEC, timeout_secs: 0.25 })).toBe(250);
  });

  it('retry numbers and attempt counts start at 1 (programmer errors otherwise)', () => {
    expect(() => baseDelayMs(SPEC, 0)).toThrow(/assertion failed/);
    expect(() => afterFailure(SPEC, 0)).toThrow(/assertion failed/);
  });
});

describe('checkRetryConfig', () => {
  it('accepts the spec defaults', () => {
    expect(() => checkRetryConfig(SPEC)).not.toThrow();
  });

  it.each([
    ['max_retries', { max_retries: -1 }],
    ['max_retries', { max_retries: 101 }],
    ['max_retries', { max_retries: 2.5 }],
    ['initial_retry_delay_ms', { initial_retry_delay_ms: -5 }],
    ['max_retry_delay_ms', { max_retry_delay_ms: 3_600_001 }],
    ['max_retry_delay_ms', { max_retry_delay_ms: 50 }],
    ['multiplier', { multiplier: 0.5 }],
    ['multiplier', { multiplier: Number.POSITIVE_INFINITY }],
    ['timeout_secs', { timeout_secs: 0 }],
    ['timeout_secs', { timeout_secs: 301 }],
    ['jitter', { jitter: 'yes' }],
  ])('refuses a bad %s with VALIDATION_ERROR', (field, change) => {
    const def = { ...SPEC, ...change } as WebhookRetry;
    expect(() => checkRetryConfig(def)).toThrow(
      expect.objectContaining({ code: 'VALIDATION_ERROR', details: expect.objectContaining({ field: `retry.${field}` }) }),
    );
  });
});
