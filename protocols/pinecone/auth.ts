import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { SvcError } from '../../core/errors.js';
import { limit, type AuthGate } from '../auth/authenticate.js';
import { principalFor, type Credential } from '../auth/credential.js';
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
 * X-Tenant-ID and the principal work as on /api/v1. A callback hook, as /api/v1's: a key verified
 * before (the vector key, or one the authenticator remembers) is known at once, with no hash and no
 * promise per request; anything else is verified asynchronously, as before.
 */
export function vectorAuth(gate: AuthGate, vectorApiKey: string | undefined): onRequestHookHandler {
  const vectorKeyHash = vectorApiKey === undefined ? null : sha256(vectorApiKey);
  // The vector key once it verified, looked up as the authenticator looks up remembered keys (a Map: by the string's hash, then equality).
  const verifiedVectorKey = new Map<string, Credential>();
  const verify = async (key: string, nowMs: number): Promise<Credential> => {
    if (vectorKeyHash !== null && timingSafeEqual(sha256(key), vectorKeyHash)) {
      if (verifiedVectorKey.size === 0) verifiedVectorKey.set(key, VECTOR_KEY_CREDENTIAL);
      return VECTOR_KEY_CREDENTIAL;
    }
    return gate.authenticator.authenticate(key, nowMs);
  };
  return (request, reply, done) => {
    const nowMs = Date.now();
    const key = presented(request.headers);
    const known = key === null ? undefined : (verifiedVectorKey.get(key) ?? gate.authenticator.remembered?.(key, nowMs));
    if (key === null || known !== undefined) {
      done(admitted(gate, request, reply, known ?? null, null, nowMs));
      return;
    }
    verify(key, nowMs).then(
      (credential) => done(admitted(gate, request, reply, credential, null, nowMs)),
      (error: unknown) => done(admitted(gate, request, reply, null, { error }, nowMs)),
    );
  };
}

/** Rate limit, then the credential's principal on the request; the error to answer with, or undefined. */
function admitted(
  gate: AuthGate,
  request: FastifyRequest,
  reply: FastifyReply,
  credential: Credential | null,
  failure: { error: unknown } | null, // boxed: a caught value may be anything
  nowMs: number,
): Error | undefined {
  try {
    limit(gate, request, reply, credential, nowMs);
    if (credential === null)
      throw failure !== null ? failure.error : new SvcError('AUTHENTICATION_REQUIRED', 'authentication required: send Api-Key: <key>', {});
    // As on /api/v1: add the caller to the request's own logger rather than nest a child per request.
    (request.log as unknown as { setBindings(bindings: Record<string, unknown>): void }).setBindings({ subject: credential.subject });
    request.principal = principalFor(credential, requestTenant(request, credential));
    return undefined;
  } catch (error) {
    return error as Error;
  }
}
