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

/**
 * The counter of a credential's requests: one per kind and subject, on every protocol (/api/v1, the
 * vector protocol, GraphQL over WebSocket), so a key's requests count together wherever they come in.
 */
export const credentialBucket = (credential: { readonly kind: string; readonly subject: string }): string => `${credential.kind}:${credential.subject}`;

/** Requests per window of a caller: its credential's own limit (Credential.rateLimitRequestsMax) when it has one, else the gate's. */
export const requestsMaxOf = (gate: RateLimitGate, own: number | null | undefined): number => own ?? gate.rateLimitRequestsMax;

/** Whole seconds until the window ends (rounded up, so waiting that long is always enough). */
export const secondsUntil = (resetAtMs: number, nowMs: number): number => Math.max(0, Math.ceil((resetAtMs - nowMs) / 1000));

/** Entries writeRateLimitHeaders writes: four headers, each a name and a value. */
export const RATE_LIMIT_HEADER_ENTRIES = 8;

/**
 * Writes the X-RateLimit-* headers of a decision into `raw` from index `at` on, as node's raw header
 * list has them (name, value, name, value, …: RATE_LIMIT_HEADER_ENTRIES entries; names in lower
 * case, as node sends them). The one place their names, order and values are made: fastify's
 * replies (setRateLimitHeaders), the answers of bad requests (rateLimitHeaders) and the direct path's
 * writeHead (protocols/http/direct/direct-lane.ts) all take them from here. It writes into the
 * caller's array, so a request's answer builds no object for them.
 */
export function writeRateLimitHeaders(raw: string[], at: number, decision: RateLimitDecision, nowMs: number): void {
  raw[at] = 'x-ratelimit-limit';
  raw[at + 1] = String(decision.limit);
  raw[at + 2] = 'x-ratelimit-remaining';
  raw[at + 3] = String(decision.remaining);
  raw[at + 4] = 'x-ratelimit-reset';
  raw[at + 5] = String(Math.ceil(decision.resetAtMs / 1000));
  raw[at + 6] = 'x-ratelimit-reset-after';
  raw[at + 7] = String(secondsUntil(decision.resetAtMs, nowMs));
}

/** The X-RateLimit-* headers of a decision as an object (lower case, as node sends them). */
export function rateLimitHeaders(decision: RateLimitDecision, nowMs: number): Record<string, string> {
  const raw = new Array<string>(RATE_LIMIT_HEADER_ENTRIES).fill('');
  writeRateLimitHeaders(raw, 0, decision, nowMs);
  const headers: Record<string, string> = {};
  for (let i = 0; i < raw.length; i += 2) headers[raw[i]!] = raw[i + 1]!;
  return headers;
}

/**
 * setRateLimitHeaders' scratch list: written and read in one synchronous call, so one array serves
 * every request (reply.header copies what it is given).
 */
const scratch: string[] = new Array<string>(RATE_LIMIT_HEADER_ENTRIES).fill('');

/** Put the X-RateLimit-* headers on a reply (they stay on an error answered later). */
export function setRateLimitHeaders(reply: FastifyReply, decision: RateLimitDecision, nowMs: number): void {
  writeRateLimitHeaders(scratch, 0, decision, nowMs);
  // Set one by one: no object built per request.
  reply.header(scratch[0]!, scratch[1]!);
  reply.header(scratch[2]!, scratch[3]!);
  reply.header(scratch[4]!, scratch[5]!);
  reply.header(scratch[6]!, scratch[7]!);
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
