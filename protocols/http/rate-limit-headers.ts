import type { FastifyInstance } from 'fastify';
import { addressBucket, rateLimitExceeded, setRateLimitHeaders, type RateLimitGate } from '../auth/rate-limit.js';

const LIMIT_HEADER = 'x-ratelimit-limit';

/**
 * The spec's X-RateLimit-* headers on every answer of a listener, not only those of the
 * authenticated routes (whose auth hook counts the request against its credential and sets them):
 *
 * - a path that matches no route is counted against the client's address, like a request without
 *   a valid credential, and refused with 429 past the limit, so probing for paths is limited too;
 * - anything else still without the headers when it is sent (the probes /live, /ready, /health,
 *   SHUTTING_DOWN and TOO_MANY_CONNECTIONS answers, the ops port) shows the address's counter
 *   without counting: a limiter must never take a healthy instance out of a load balancer.
 */
export function installRateLimitHeaders(app: FastifyInstance, gate: RateLimitGate): void {
  // Callback hooks, not async ones: they run on every request and must cost no promise.
  app.addHook('onRequest', (request, reply, done) => {
    if (!request.is404) return done();
    const nowMs = Date.now();
    const decision = gate.limiter.hit(addressBucket(request.ip), gate.rateLimitRequestsMax, nowMs);
    setRateLimitHeaders(reply, decision, nowMs);
    done(decision.allowed ? undefined : rateLimitExceeded(reply, decision, nowMs, gate.rateLimitWindowMs));
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!reply.hasHeader(LIMIT_HEADER)) {
      const nowMs = Date.now();
      setRateLimitHeaders(reply, gate.limiter.peek(addressBucket(request.ip), gate.rateLimitRequestsMax, nowMs), nowMs);
    }
    done(null, payload);
  });
}
