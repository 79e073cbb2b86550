/**
 * Rate limits of /api/v1: the X-RateLimit-* headers on every answer (success and errors), 429
 * RATE_LIMIT_EXCEEDED with details and Retry-After, per-key limits, and the memory bound.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedWindowRateLimiter, rateLimitHeaders, RATE_LIMIT_HEADER_ENTRIES, requestsMaxOf, writeRateLimitHeaders } from '../../protocols/auth/rate-limit.js';
import { api, bearer, newKey, query, untilStatus } from '../helpers/auth.js';
import { startTestServer, TEST_API_KEY, type TestServer } from '../helpers/sql-server.js';

const DAY_MS = 86_400_000;

function limitHeaders(headers: Headers): { limit: number; remaining: number; reset: number; resetAfter: number } {
  const read = (name: string): number => {
    const value = headers.get(name);
    expect(value, name).toMatch(/^\d+$/);
    return Number(value);
  };
  return {
    limit: read('x-ratelimit-limit'),
    remaining: read('x-ratelimit-remaining'),
    reset: read('x-ratelimit-reset'),
    resetAfter: read('x-ratelimit-reset-after'),
  };
}

describe('rate-limit headers with the default limit', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.close());

  it('are on successes and on every kind of error, counting down', async () => {
    const admin = bearer(TEST_API_KEY);
    // Each answer is bracketed by the clock before and after it: its window (1 s) lies between
    // those instants however long a loaded machine takes, so no assertion depends on the pace.
    const timed = async (send: () => Promise<{ status: number; headers: Headers }>) => {
      const beforeMs = Date.now();
      const answer = await send();
      return { answer, beforeMs, afterMs: Date.now() };
    };
    const answers = [
      await timed(() => query(server.baseUrl, admin, 'SELECT 1')),
      await timed(() => query(server.baseUrl, admin, 'SELEC nonsense')),
      await timed(() => query(server.baseUrl, admin, 'SELECT * FROM missing')),
      await timed(() => query(server.baseUrl, { ...admin, 'x-tenant-id': 'bad tenant' }, 'SELECT 1')),
      await timed(() => api(server.baseUrl, '/query/01ARZ3NDEKTSV4RRFFQ69G5FAV', { headers: admin })),
      await timed(() => query(server.baseUrl, {}, 'SELECT 1')),
      await timed(() => query(server.baseUrl, bearer('wrong'), 'SELECT 1')),
    ];
    expect(answers.map((a) => a.answer.status)).toEqual([200, 400, 404, 400, 404, 401, 401]);
    const windowEndS = (ms: number): number => Math.floor(ms / 1000) + 1;
    for (const { answer, beforeMs, afterMs } of answers) {
      const h = limitHeaders(answer.headers);
      expect(h.limit).toBe(100_000);
      expect(h.remaining).toBeLessThan(100_000);
      expect(h.reset).toBeGreaterThanOrEqual(windowEndS(beforeMs));
      expect(h.reset).toBeLessThanOrEqual(windowEndS(afterMs));
      expect(h.resetAfter).toBeLessThanOrEqual(1);
    }
  });

  it('probes carry the headers (the spec: every response) but are not counted', async () => {
    // Compared within one fixed window: a window that ends between the two probes resets the count.
    for (let tries = 0; ; tries++) {
      const first = await api(server.baseUrl, '/live');
      const second = await api(server.baseUrl, '/health');
      expect([first.status, second.status]).toEqual([200, 200]);
      expect(limitHeaders(first.headers).limit).toBe(100_000);
      if (limitHeaders(first.headers).reset !== limitHeaders(second.headers).reset && tries < 5) continue;
      expect(limitHeaders(second.headers).remaining).toBe(limitHeaders(first.headers).remaining);
      break;
    }
  });

  it('a path that matches no route carries them and counts against the client address', async () => {
    const first = await fetch(`${server.baseUrl}/no/such/path`);
    const second = await fetch(`${server.baseUrl}/api/v1/no-such-resource`);
    expect([first.status, second.status]).toEqual([404, 404]);
    expect(limitHeaders(second.headers).remaining).toBe(limitHeaders(first.headers).remaining - 1);
  });
});

describe('over the limit', () => {
  let server: TestServer;
  // A window of a day: the test cannot straddle two windows (short of midnight UTC).
  beforeAll(async () => {
    server = await startTestServer({ env: { SVC_RATE_LIMIT_MAX: '3', SVC_RATE_LIMIT_WINDOW_MS: String(DAY_MS) } });
  });
  afterAll(() => server?.close());

  it('the request past the limit is 429 RATE_LIMIT_EXCEEDED with limit, remaining, reset_at and Retry-After', async () => {
    const admin = bearer(TEST_API_KEY);
    const remaining: number[] = [];
    for (let i = 0; i < 3; i++) {
      const ok = await query(server.baseUrl, admin, 'SELECT 1');
      expect(ok.status).toBe(200);
      remaining.push(limitHeaders(ok.headers).remaining);
    }
    expect(remaining).toEqual([2, 1, 0]);
    const refused = await query(server.baseUrl, admin, 'SELECT 1');
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
    const windowEndMs = (Math.floor(Date.now() / DAY_MS) + 1) * DAY_MS;
    expect(refused.body.error.details).toEqual({ limit: 3, remaining: 0, reset_at: new Date(windowEndMs).toISOString() });
    const h = limitHeaders(refused.headers);
    expect(h).toMatchObject({ limit: 3, remaining: 0, reset: windowEndMs / 1000 });
    expect(Number(refused.headers.get('retry-after'))).toBe(h.resetAfter);
    expect(h.resetAfter).toBeGreaterThan(0);
    expect(typeof refused.body.error.request_id).toBe('string');
  });

  it('without a valid credential, requests count per client address', async () => {
    const statuses = [];
    for (const headers of [{}, bearer('wrong'), {}, { 'x-api-key': 'wrong' }]) statuses.push((await query(server.baseUrl, headers, 'SELECT 1')).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    // The admin key has its own counter, spent by the test above.
    expect((await query(server.baseUrl, bearer(TEST_API_KEY), 'SELECT 1')).status).toBe(429);
    // Probes still answer (a limiter must not take a healthy instance out of its load balancer).
    const live = await api(server.baseUrl, '/live');
    expect(live.status).toBe(200);
    expect(limitHeaders(live.headers)).toMatchObject({ limit: 3, remaining: 0 });
    // Unmatched paths count against the address like requests without a credential.
    const unmatched = await fetch(`${server.baseUrl}/no/such/path`);
    expect(unmatched.status).toBe(429);
    expect(((await unmatched.json()) as { error: { code: string } }).error.code).toBe('RATE_LIMIT_EXCEEDED');
  });
});

describe('per-key limits', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { SVC_RATE_LIMIT_MAX: '1000', SVC_RATE_LIMIT_WINDOW_MS: String(DAY_MS) } });
  });
  afterAll(() => server?.close());

  it('a key may carry its own limit; each credential is counted apart', async () => {
    const own = await newKey(server.dataDir, { role: 'read_only', rateLimitRequestsMax: 2 });
    const other = await newKey(server.dataDir, { role: 'read_only' });
    await untilStatus(server.baseUrl, own.key, 200);
    const second = await query(server.baseUrl, bearer(own.key), 'SELECT 1');
    expect(second.status).toBe(200);
    expect(limitHeaders(second.headers)).toMatchObject({ limit: 2, remaining: 0 });
    const refused = await query(server.baseUrl, bearer(own.key), 'SELECT 1');
    expect(refused.status).toBe(429);
    expect(refused.body.error.details).toMatchObject({ limit: 2, remaining: 0 });
    const fresh = await query(server.baseUrl, bearer(other.key), 'SELECT 1');
    expect(fresh.status).toBe(200);
    expect(limitHeaders(fresh.headers)).toMatchObject({ limit: 1000, remaining: 999 });
  });
});

describe('FixedWindowRateLimiter', () => {
  it('resets at the window boundary and refuses without counting', () => {
    const limiter = new FixedWindowRateLimiter({ windowMs: 1000, countersMax: 10 });
    expect(limiter.hit('a', 2, 5_000)).toEqual({ allowed: true, limit: 2, remaining: 1, resetAtMs: 6_000 });
    expect(limiter.hit('a', 2, 5_500).remaining).toBe(0);
    expect(limiter.hit('a', 2, 5_999)).toEqual({ allowed: false, limit: 2, remaining: 0, resetAtMs: 6_000 });
    expect(limiter.hit('b', 2, 5_999).allowed).toBe(true);
    expect(limiter.hit('a', 2, 6_000)).toEqual({ allowed: true, limit: 2, remaining: 1, resetAtMs: 7_000 });
  });

  it('holds at most countersMax counters, and only those of the current window', () => {
    const limiter = new FixedWindowRateLimiter({ windowMs: 1000, countersMax: 100 });
    for (let i = 0; i < 1000; i++) limiter.hit(`subject-${i}`, 5, 10_000);
    expect(limiter.size).toBe(100);
    limiter.hit('late', 5, 11_000);
    expect(limiter.size).toBe(1);
  });
});

describe('the X-RateLimit-* headers of a decision', () => {
  it('are made in one place: the same names, order and values as a raw header list and as an object', () => {
    // The window ends at 6.001 s: reset is its whole second rounded up, reset-after the seconds to wait (never 0 too early, never negative).
    const decision = { allowed: true, limit: 5, remaining: 2, resetAtMs: 6_001 };
    const raw = ['before', 'b', ...new Array<string>(RATE_LIMIT_HEADER_ENTRIES).fill(''), 'after', 'a'];
    writeRateLimitHeaders(raw, 2, decision, 5_000);
    expect(raw).toEqual([
      'before',
      'b',
      'x-ratelimit-limit',
      '5',
      'x-ratelimit-remaining',
      '2',
      'x-ratelimit-reset',
      '7',
      'x-ratelimit-reset-after',
      '2',
      'after',
      'a',
    ]);
    expect(Object.entries(rateLimitHeaders(decision, 5_000)).flat()).toEqual(raw.slice(2, 2 + RATE_LIMIT_HEADER_ENTRIES));
    expect(rateLimitHeaders(decision, 9_000)['x-ratelimit-reset-after']).toBe('0');
  });

  it("count against a credential's own limit, else the gate's", () => {
    const gate = { limiter: new FixedWindowRateLimiter({ windowMs: 1000, countersMax: 10 }), rateLimitRequestsMax: 100, rateLimitWindowMs: 1000 };
    expect([requestsMaxOf(gate, 3), requestsMaxOf(gate, null), requestsMaxOf(gate, undefined)]).toEqual([3, 100, 100]);
  });
});
