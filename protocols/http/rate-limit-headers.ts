import type { FastifyReply, FastifyRequest } from 'fastify';
import { addressBucket, rateLimitExceeded, setRateLimitHeaders, type RateLimitGate } from '../auth/rate-limit.js';

const LIMIT_HEADER = 'x-ratelimit-limit';

/*
 * The spec's X-RateLimit-* headers on every answer of a listener, not only those of the
 * authenticated routes (whose auth hook counts the request against its credential and sets them):
 *
 * - a path that matches no route is counted against the client's address, like a request without
 *   a valid credential, and refused with 429 past the limit, so probing for paths is limited too;
 * - anything else still without the headers when it is sent (the probes /live, /ready, /health,
 *   SHUTTING_DOWN and TOO_MANY_CONNECTIONS answers, the ops port) shows the address's counter
 *   without counting: a limiter must never take a healthy instance out of a load balancer.
 *
 * Both run inside the listener's own onRequest and onSend hooks (fastify-base.ts): one hook per
 * stage and request, not one per concern.
 */

/** At onRequest: a request for a path no route matches counts against its address; the 429 to answer past the limit, else undefined. */
export function countUnmatched(gate: RateLimitGate, request: FastifyRequest, reply: FastifyReply): Error | undefined {
  const nowMs = Date.now();
  const decision = gate.limiter.hit(addressBucket(request.ip), gate.rateLimitRequestsMax, nowMs);
  setRateLimitHeaders(reply, decision, nowMs);
  return decision.allowed ? undefined : rateLimitExceeded(reply, decision, nowMs, gate.rateLimitWindowMs);
}

/** At onSend: an answer still without X-RateLimit-* shows its address's counter, without counting. */
export function showLimit(gate: RateLimitGate, request: FastifyRequest, reply: FastifyReply): void {
  if (reply.hasHeader(LIMIT_HEADER)) return;
  const nowMs = Date.now();
  setRateLimitHeaders(reply, gate.limiter.peek(addressBucket(request.ip), gate.rateLimitRequestsMax, nowMs), nowMs);
}
