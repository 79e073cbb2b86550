import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SvcError } from '../../../core/errors.js';
import { WEBHOOK_BREAKER_DEFAULTS } from '../../../core/webhook.js';
import { BREAKER_GAUGE, CircuitBreaker, checkBreakerConfig, type BreakerPermit } from '../../../sinks/webhooks/circuit-breaker.js';

const T0 = Date.UTC(2026, 0, 1);
const OPEN_MS = WEBHOOK_BREAKER_DEFAULTS.timeout_secs * 1000;

/** A breaker with the spec's defaults (5 failures, 2 successes, 60 s, 3 trials) driven by a fake clock. */
function breaker(): CircuitBreaker {
  return new CircuitBreaker(WEBHOOK_BREAKER_DEFAULTS);
}

function fail(b: CircuitBreaker, times: number, nowMs: number): void {
  for (let i = 0; i < times; i++) b.onFailure(b.tryAcquire(nowMs)!, nowMs);
}

function opened(): CircuitBreaker {
  const b = breaker();
  fail(b, 5, T0);
  return b;
}

function acquire(b: CircuitBreaker, nowMs: number): BreakerPermit {
  const p = b.tryAcquire(nowMs);
  expect(p).not.toBeNull();
  return p!;
}

describe('CircuitBreaker', () => {
  it('starts closed and lets every call through', () => {
    const b = breaker();
    expect(b.status(T0)).toEqual({ state: 'closed', failure_count: 0, opened_at: null, gauge: 0 });
    const permits = Array.from({ length: 50 }, () => acquire(b, T0));
    expect(permits.every((p) => !p.trial)).toBe(true);
    expect(b.nextTrialAtMs()).toBeNull();
  });

  it('closed → open after failure_threshold consecutive failures', () => {
    const b = breaker();
    fail(b, 4, T0);
    expect(b.status(T0)).toMatchObject({ state: 'closed', failure_count: 4 });
    fail(b, 1, T0 + 5);
    expect(b.status(T0 + 5)).toEqual({ state: 'open', failure_count: 5, opened_at: new Date(T0 + 5).toISOString(), gauge: 2 });
  });

  it('a success while closed resets the consecutive count', () => {
    const b = breaker();
    fail(b, 4, T0);
    b.onSuccess(acquire(b, T0), T0);
    fail(b, 4, T0);
    expect(b.status(T0)).toMatchObject({ state: 'closed', failure_count: 4 });
  });

  it('open refuses at once until timeout_secs passed', () => {
    const b = opened();
    expect(b.tryAcquire(T0)).toBeNull();
    expect(b.tryAcquire(T0 + OPEN_MS - 1)).toBeNull();
    expect(b.nextTrialAtMs()).toBe(T0 + OPEN_MS);
    expect(b.status(T0 + OPEN_MS - 1).state).toBe('open');
  });

  it('open → half-open when the timeout passed; at most half_open_max_calls trials in flight', () => {
    const b = opened();
    expect(b.status(T0 + OPEN_MS)).toEqual({ state: 'half_open', failure_count: 5, opened_at: new Date(T0).toISOString(), gauge: 1 });
    const trials = [acquire(b, T0 + OPEN_MS), acquire(b, T0 + OPEN_MS), acquire(b, T0 + OPEN_MS)];
    expect(trials.every((p) => p.trial)).toBe(true);
    expect(b.tryAcquire(T0 + OPEN_MS)).toBeNull();
    b.release(trials[0]!);
    const again = acquire(b, T0 + OPEN_MS + 1);
    expect(b.tryAcquire(T0 + OPEN_MS + 1)).toBeNull();
    expect(again.trial).toBe(true);
    expect(b.nextTrialAtMs()).toBeNull();
  });

  it('half-open → closed after success_threshold successes', () => {
    const b = opened();
    const t = T0 + OPEN_MS;
    const [p1, p2, p3] = [acquire(b, t), acquire(b, t), acquire(b, t)];
    b.onSuccess(p1, t + 1);
    expect(b.status(t + 1).state).toBe('half_open');
    b.onSuccess(p2, t + 2);
    expect(b.status(t + 2)).toEqual({ state: 'closed', failure_count: 0, opened_at: null, gauge: 0 });
    // The third trial's late failure belongs to the half-open epoch: it changes nothing.
    b.onFailure(p3, t + 3);
    expect(b.status(t + 3)).toMatchObject({ state: 'closed', failure_count: 0 });
  });

  it('success_threshold above half_open_max_calls: slots free up as trials finish', () => {
    const b = new CircuitBreaker({ failure_threshold: 1, success_threshold: 3, timeout_secs: 1, half_open_max_calls: 1 });
    fail(b, 1, T0);
    for (let i = 0; i < 2; i++) {
      const p = acquire(b, T0 + 1000);
      expect(b.tryAcquire(T0 + 1000)).toBeNull();
      b.onSuccess(p, T0 + 1000);
    }
    b.onSuccess(acquire(b, T0 + 1000), T0 + 1000);
    expect(b.status(T0 + 1000).state).toBe('closed');
  });

  it('any failure in half-open → open again, and the timer restarts', () => {
    const b = opened();
    const t = T0 + OPEN_MS;
    const [p1, p2] = [acquire(b, t), acquire(b, t)];
    b.onSuccess(p1, t + 10);
    b.onFailure(p2, t + 20);
    expect(b.status(t + 20)).toEqual({ state: 'open', failure_count: 6, opened_at: new Date(t + 20).toISOString(), gauge: 2 });
    expect(b.tryAcquire(t + 20 + OPEN_MS - 1)).toBeNull();
    expect(b.nextTrialAtMs()).toBe(t + 20 + OPEN_MS);
    expect(acquire(b, t + 20 + OPEN_MS).trial).toBe(true);
  });

  it('the full cycle: closed → open → half-open → open → half-open → closed → open', () => {
    const b = breaker();
    const seen: string[] = [];
    const look = (now: number) => seen.push(b.status(now).state);
    fail(b, 5, T0);
    look(T0);
    look(T0 + OPEN_MS);
    b.onFailure(acquire(b, T0 + OPEN_MS), T0 + OPEN_MS);
    look(T0 + OPEN_MS);
    const t = T0 + 2 * OPEN_MS;
    look(t);
    b.onSuccess(acquire(b, t), t);
    b.onSuccess(acquire(b, t), t);
    look(t);
    fail(b, 5, t + 1);
    look(t + 1);
    expect(seen).toEqual(['open', 'half_open', 'open', 'half_open', 'closed', 'open']);
  });

  it('results of calls granted before a transition change nothing', () => {
    const b = breaker();
    const early = Array.from({ length: 10 }, () => acquire(b, T0));
    for (const p of early.slice(0, 5)) b.onFailure(p, T0);
    expect(b.status(T0).state).toBe('open');
    // Late answers of calls made while closed: neither close nor reopen it.
    for (const p of early.slice(5, 8)) b.onSuccess(p, T0 + 1);
    b.onFailure(early[8]!, T0 + 2);
    expect(b.status(T0 + 2)).toMatchObject({ state: 'open', opened_at: new Date(T0).toISOString() });
    const trial = acquire(b, T0 + OPEN_MS);
    b.onFailure(early[9]!, T0 + OPEN_MS);
    expect(b.status(T0 + OPEN_MS).state).toBe('half_open');
    b.onSuccess(trial, T0 + OPEN_MS);
    expect(b.status(T0 + OPEN_MS).state).toBe('half_open');
  });

  it('a released permit counts neither as success nor failure', () => {
    const b = breaker();
    fail(b, 4, T0);
    b.release(acquire(b, T0));
    expect(b.status(T0)).toMatchObject({ state: 'closed', failure_count: 4 });
  });

  it('settling a permit twice is a programmer error', () => {
    const b = breaker();
    const p = acquire(b, T0);
    b.onSuccess(p, T0);
    expect(() => b.onFailure(p, T0)).toThrow(/settled once/);
  });

  it('gauge values: 0 closed, 1 half-open, 2 open', () => {
    expect(BREAKER_GAUGE).toEqual({ closed: 0, half_open: 1, open: 2 });
  });

  it('refuses out-of-bounds settings with VALIDATION_ERROR', () => {
    const bad = [
      { ...WEBHOOK_BREAKER_DEFAULTS, failure_threshold: 0 },
      { ...WEBHOOK_BREAKER_DEFAULTS, success_threshold: 1.5 },
      { ...WEBHOOK_BREAKER_DEFAULTS, half_open_max_calls: 10_001 },
      { ...WEBHOOK_BREAKER_DEFAULTS, timeout_secs: 0 },
      { ...WEBHOOK_BREAKER_DEFAULTS, timeout_secs: Number.NaN },
    ];
    for (const config of bad) {
      expect(() => checkBreakerConfig(config)).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR' }) as SvcError);
      expect(() => new CircuitBreaker(config)).toThrow(SvcError);
    }
    expect(() => new CircuitBreaker({ ...WEBHOOK_BREAKER_DEFAULTS, timeout_secs: 0.05 })).not.toThrow();
  });

  it('property: only the drawn edges are taken, and trials in flight never pass half_open_max_calls', () => {
    const op = fc.oneof(
      fc.constant({ kind: 'acquire' as const }),
      fc.record({ kind: fc.constantFrom('success' as const, 'failure' as const, 'release' as const), which: fc.nat() }),
      fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 2000 }) }),
    );
    const edges = new Set(['closed>closed', 'closed>open', 'open>open', 'open>half_open', 'half_open>half_open', 'half_open>closed', 'half_open>open']);
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const b = new CircuitBreaker({ failure_threshold: 2, success_threshold: 2, timeout_secs: 1, half_open_max_calls: 2 });
        let now = T0;
        let open: BreakerPermit[] = [];
        let before = b.status(now).state as string;
        for (const o of ops) {
          if (o.kind === 'wait') now += o.ms;
          else if (o.kind === 'acquire') {
            const p = b.tryAcquire(now);
            if (p) open.push(p);
          } else if (open.length > 0) {
            const p = open[o.which % open.length]!;
            open = open.filter((q) => q !== p);
            if (o.kind === 'success') b.onSuccess(p, now);
            else if (o.kind === 'failure') b.onFailure(p, now);
            else b.release(p);
          }
          const s = b.status(now);
          expect(edges.has(`${before}>${s.state}`)).toBe(true);
          if (s.state === 'half_open') {
            const epoch = Math.max(...open.map((p) => p.epoch), -1);
            expect(open.filter((p) => p.trial && p.epoch === epoch).length).toBeLessThanOrEqual(2);
          }
          before = s.state;
        }
      }),
      { numRuns: 300 },
    );
  });
});
