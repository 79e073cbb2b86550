import { createHash, timingSafeEqual } from 'node:crypto';
import type { onRequestAsyncHookHandler } from 'fastify';
import { SvcError } from '../../core/errors.js';
import type { AuthGate } from '../auth/authenticate.js';
import { principalFor, type Credential } from '../auth/credential.js';
import { addressBucket, rateLimitExceeded, setRateLimitHeaders } from '../auth/rate-limit.js';
import { requestTenant } from '../auth/tenancy.js';

/** The vector protocol key (SVC_VECTOR_API_KEY): an unbound admin, like the admin key. */
const VECTOR_KEY_CREDENTIAL: Credential = Object.freeze({ kind: 'admin_key', subject: 'vector', role: 'admin', tenant: null, rateLimitRequestsMax: null });

const sha256 = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/** The key a vector client presents: Pinecone's `Api-Key` header (or `Authorization: Bearer`, as on /api/v1). */
function presented(headers: Record<string, string | string[] | undefined>): string | null {
  const apiKey = headers['api-key'];
  if (typeof apiKey === 'string' && apiKey.trim() !== '') return apiKey.trim();
  const auth = headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(.+)$/i.exec(auth.trim());
    if (m) return m[1]!.trim();
  }
  return null;
}

/**
 * onRequest hook of the vector protocol: the Api-Key is SVC_VECTOR_API_KEY (compared by SHA-256 in
 * constant time) or any credential /api/v1 accepts (admin key, svcdb API keys, JWTs). Rate limits,
 * X-Tenant-ID and the principal work as on /api/v1.
 */
export function vectorAuth(gate: AuthGate, vectorApiKey: string | undefined): onRequestAsyncHookHandler {
  const vectorKeyHash = vectorApiKey === undefined ? null : sha256(vectorApiKey);
  const verify = async (key: string, nowMs: number): Promise<Credential> => {
    if (vectorKeyHash !== null && timingSafeEqual(sha256(key), vectorKeyHash)) return VECTOR_KEY_CREDENTIAL;
    return gate.authenticator.authenticate(key, nowMs);
  };
  return async (request, reply) => {
    const nowMs = Date.now();
    const key = presented(request.headers);
    let credential: Credential | null = null;
    let failure: { error: unknown } | null = null; // boxed: a caught value may be anything
    if (key !== null) {
      try {
        credential = await verify(key, nowMs);
      } catch (error) {
        failure = { error };
      }
    }
    const bucket = credential === null ? addressBucket(request.ip) : `${credential.kind}:${credential.subject}`;
    const decision = gate.limiter.hit(bucket, credential?.rateLimitRequestsMax ?? gate.rateLimitRequestsMax, nowMs);
    setRateLimitHeaders(reply, decision, nowMs);
    if (!decision.allowed) throw rateLimitExceeded(reply, decision, nowMs, gate.rateLimitWindowMs);
    if (credential === null)
      throw failure !== null ? failure.error : new SvcError('AUTHENTICATION_REQUIRED', 'authentication required: send Api-Key: <key>', {});
    // As on /api/v1: add the caller to the request's own logger rather than nest a child per request.
    (request.log as unknown as { setBindings(bindings: Record<string, unknown>): void }).setBindings({ subject: credential.subject });
    request.principal = principalFor(credential, requestTenant(request, credential));
  };
}
