import type { FastifyReply } from 'fastify';
import { assert, SvcError } from '../../core/errors.js';

/** The outcome of counting one request. */
export interface RateLimitDecision {
  readonly allowed: boolean;
  /** Requests allowed in the window. */
  readonly limit: number;
  /** Requests left in the window after this one. */
  readonly remaining: number;
  /** When the window ends (epoch ms). */
  readonly resetAtMs: number;
}

export interface RateLimiterOptions {
  readonly windowMs: number;
  /** Counters held at once; past it the oldest counter of the window is dropped (that caller starts afresh). */
  readonly countersMax: number;
}

/**
 * A fixed-window counter per bucket (a credential, or a client address). Windows are aligned to
 * the epoch and shared by every bucket, so a new window simply clears the map: memory holds only
 * the buckets seen in the current window, at most countersMax of them.
 */
export class FixedWindowRateLimiter {
  private windowStartMs = Number.NaN;
  private readonly counts = new Map<string, number>();

  constructor(private readonly options: RateLimiterOptions) {
    assert(options.windowMs > 0 && options.countersMax > 0, 'rate limiter needs a window and room for counters');
  }

  /** Count one request of `bucket` against `limit` at `nowMs`; a refused request is not counted. */
  hit(bucket: string, limit: number, nowMs: number): RateLimitDecision {
    const { windowMs, countersMax } = this.options;
    const startMs = nowMs - (nowMs % windowMs);
    if (startMs !== this.windowStartMs) {
      this.counts.clear();
      this.windowStartMs = startMs;
    }
    const resetAtMs = startMs + windowMs;
    const used = this.counts.get(bucket) ?? 0;
    if (used >= limit) return { allowed: false, limit, remaining: 0, resetAtMs };
    if (used === 0 && this.counts.size >= countersMax) {
      const oldest = this.counts.keys().next();
      if (oldest.done !== true) this.counts.delete(oldest.value);
    }
    this.counts.set(bucket, used + 1);
    return { allowed: true, limit, remaining: limit - used - 1, resetAtMs };
  }

  /** What `hit` would answer for `bucket` without counting a request (allowed: a request would be). */
  peek(bucket: string, limit: number, nowMs: number): RateLimitDecision {
    const startMs = nowMs - (nowMs % this.options.windowMs);
    const used = startMs === this.windowStartMs ? (this.counts.get(bucket) ?? 0) : 0;
    return { allowed: used < limit, limit, remaining: Math.max(0, limit - used), resetAtMs: startMs + this.options.windowMs };
  }

  /** Counters held now (for tests of the memory bound). */
  get size(): number {
    return this.counts.size;
  }
}

/** The limiter and the default limit every listener's hooks count against (AuthGate is one). */
export interface RateLimitGate {
  readonly limiter: FixedWindowRateLimiter;
  /** Requests per window of a credential without its own limit, and of a client address. */
  readonly rateLimitRequestsMax: number;
  readonly rateLimitWindowMs: number;
}

/** The counter of requests without a valid credential: one per client address. */
export const addressBucket = (ip: string): string => `ip:${ip}`;

/** Whole seconds until the window ends (rounded up, so waiting that long is always enough). */
export const secondsUntil = (resetAtMs: number, nowMs: number): number => Math.max(0, Math.ceil((resetAtMs - nowMs) / 1000));

/** The X-RateLimit-* headers of a decision (lower case, as node sends them). */
export function rateLimitHeaders(decision: RateLimitDecision, nowMs: number): Record<string, string> {
  return {
    'x-ratelimit-limit': String(decision.limit),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': String(Math.ceil(decision.resetAtMs / 1000)),
    'x-ratelimit-reset-after': String(secondsUntil(decision.resetAtMs, nowMs)),
  };
}

/** Put the X-RateLimit-* headers on a reply (they stay on an error answered later). */
export function setRateLimitHeaders(reply: FastifyReply, decision: RateLimitDecision, nowMs: number): void {
  // The same four headers as rateLimitHeaders(), set one by one: no object built per request.
  reply.header('x-ratelimit-limit', String(decision.limit));
  reply.header('x-ratelimit-remaining', String(decision.remaining));
  reply.header('x-ratelimit-reset', String(Math.ceil(decision.resetAtMs / 1000)));
  reply.header('x-ratelimit-reset-after', String(secondsUntil(decision.resetAtMs, nowMs)));
}

/** The 429 of a refused request, with Retry-After set on the reply (at least 1 s). */
export function rateLimitExceeded(reply: FastifyReply, decision: RateLimitDecision, nowMs: number, windowMs: number): SvcError {
  const retryAfterSeconds = Math.max(1, secondsUntil(decision.resetAtMs, nowMs));
  reply.header('retry-after', String(retryAfterSeconds));
  return new SvcError('RATE_LIMIT_EXCEEDED', `rate limit of ${decision.limit} requests per ${windowMs} ms exceeded; retry after ${retryAfterSeconds} s`, {
    limit: decision.limit,
    remaining: 0,
    reset_at: new Date(decision.resetAtMs).toISOString(),
  });
}
