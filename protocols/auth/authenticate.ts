import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest, onRequestAsyncHookHandler, onRequestHookHandler } from 'fastify';
import { DEFAULT_TENANT } from '../../core/catalog.js';
import { SvcError } from '../../core/errors.js';
import { principalFor, type Authenticator, type Credential } from './credential.js';
import type { Principal } from './principal.js';
import { addressBucket, credentialBucket, rateLimitExceeded, requestsMaxOf, setRateLimitHeaders, type RateLimitGate } from './rate-limit.js';
import { guardReadOnly } from './roles.js';
import { requestTenant } from './tenancy.js';

/** The presented credential: `Authorization: Bearer <key|JWT>` or `X-API-Key: <key>`; null when none. */
export function presentedKey(request: { readonly headers: IncomingHttpHeaders }): string | null {
  const auth = request.headers.authorization;
  // The common form, `Bearer <token>` with one space and no space around the token: what the
  // regex and trims below give, without them (a header value is latin1: no other JS white space).
  if (typeof auth === 'string' && auth.length > 7 && auth.startsWith('Bearer ') && !isSpace(auth.charCodeAt(7)) && !isSpace(auth.charCodeAt(auth.length - 1))) {
    return auth.slice(7);
  }
  if (typeof auth === 'string' && auth.trim() !== '') {
    const m = /^Bearer\s+(.+)$/i.exec(auth.trim());
    return m ? m[1]!.trim() : auth.trim();
  }
  const header = request.headers['x-api-key'];
  if (typeof header === 'string' && header.trim() !== '') return header.trim();
  return null;
}

/** White space as String.prototype.trim and the regex's \s see it, within latin1. */
const isSpace = (code: number): boolean => code === 32 || (code >= 9 && code <= 13) || code === 160;

/** What the hook of every /api/v1 resource plugin shares: one authenticator, one rate limiter. */
export interface AuthGate extends RateLimitGate {
  readonly authenticator: Authenticator;
}

type Verified = { readonly credential: Credential } | { readonly credential: null; readonly failure: unknown };

async function verify(gate: AuthGate, request: FastifyRequest, nowMs: number): Promise<Verified> {
  const presented = presentedKey(request);
  if (presented === null) {
    const failure = new SvcError('AUTHENTICATION_REQUIRED', 'authentication required: send Authorization: Bearer <API key or JWT> or X-API-Key: <API key>', {});
    return { credential: null, failure };
  }
  try {
    return { credential: await gate.authenticator.authenticate(presented, nowMs) };
  } catch (failure) {
    return { credential: null, failure };
  }
}

/** What every request of one credential shares: its rate-limit bucket and its principal in its home tenant. */
export interface CredentialMemo {
  readonly bucket: string;
  /** Its own requests per window (Credential.rateLimitRequestsMax); null: the gate's. */
  readonly requestsMax: number | null;
  readonly home: Principal;
  /** The request logger's bindings naming the caller (frozen: shared by every request of the credential). */
  readonly logBindings: Readonly<Record<string, unknown>>;
}

/**
 * Made once per credential object, not per request: the authenticator hands out the same object
 * for a remembered key (a JWT's credential is new each time, and so is its memo). Dropped with it.
 */
const memos = new WeakMap<Credential, CredentialMemo>();

function memoOf(credential: Credential): CredentialMemo {
  let memo = memos.get(credential);
  if (memo === undefined) {
    memo = {
      bucket: credentialBucket(credential),
      requestsMax: credential.rateLimitRequestsMax,
      home: Object.freeze(principalFor(credential, credential.tenant ?? DEFAULT_TENANT)),
      logBindings: Object.freeze({ subject: credential.subject }),
    };
    memos.set(credential, memo);
  }
  return memo;
}

/**
 * The caller of a request whose credential was verified before (Authenticator.remembered), as the
 * hook would establish it in the credential's home tenant (the caller of a request without
 * X-Tenant-ID); undefined for anything else: no credential, a JWT, a key not remembered (the hook
 * verifies those). For the direct path (protocols/http/direct/direct-lane.ts), which answers
 * without the hook and counts the request against `bucket` itself.
 */
export function rememberedCaller(gate: AuthGate, headers: IncomingHttpHeaders, nowMs: number): CredentialMemo | undefined {
  const presented = presentedKey({ headers });
  const known = presented === null ? undefined : gate.authenticator.remembered?.(presented, nowMs);
  return known === undefined ? undefined : memoOf(known);
}

/**
 * Count the request against its credential's limit (or its client address when it has no valid
 * credential) and put the X-RateLimit-* headers on the reply, so every answer carries them; throws
 * the 429 past the limit. /api/v1's hook and the vector protocol's (protocols/pinecone/auth.ts) count alike.
 */
export function limit(gate: AuthGate, request: FastifyRequest, reply: FastifyReply, credential: Credential | null, nowMs: number): void {
  const bucket = credential === null ? addressBucket(request.ip) : memoOf(credential).bucket;
  // (The direct path counts the same way: the memo's bucket against requestsMaxOf its requestsMax.)
  const decision = gate.limiter.hit(bucket, requestsMaxOf(gate, credential?.rateLimitRequestsMax), nowMs);
  setRateLimitHeaders(reply, decision, nowMs);
  if (!decision.allowed) throw rateLimitExceeded(reply, decision, nowMs, gate.rateLimitWindowMs);
}

/**
 * onRequest hook of the /api/v1 resource plugins: authenticate (401 AUTHENTICATION_REQUIRED /
 * AUTHENTICATION_FAILED), rate-limit (429), pick the tenant (X-Tenant-ID; 400 / 403), refuse a
 * read_only credential a route that may write (403), and set request.principal.
 */
export function authenticate(gate: AuthGate): onRequestAsyncHookHandler {
  const hook = authenticateHook(gate);
  return function (this: unknown, request, reply) {
    return new Promise<void>((resolve, reject) => hook.call(this as never, request, reply, (error?: Error) => (error ? reject(error) : resolve())));
  };
}

/** authenticate() as a callback hook (what withAuth installs). */
export function authenticateHook(gate: AuthGate): onRequestHookHandler {
  // A callback hook: a key verified before is known at once (Authenticator.remembered), so the
  // common request costs no promise; anything else is verified asynchronously, as before.
  return (request, reply, done) => {
    const nowMs = Date.now();
    const presented = presentedKey(request);
    const known = presented === null ? undefined : gate.authenticator.remembered?.(presented, nowMs);
    if (known !== undefined) {
      done(admitted(gate, request, reply, { credential: known }, nowMs));
      return;
    }
    verify(gate, request, nowMs).then(
      (verified) => done(admitted(gate, request, reply, verified, nowMs)),
      (error: Error) => done(error),
    );
  };
}

/** The hook's checks after verification: rate limit, tenant, role; the error to answer with, or undefined (request.principal set). */
function admitted(gate: AuthGate, request: FastifyRequest, reply: FastifyReply, verified: Verified, nowMs: number): Error | undefined {
  try {
    limit(gate, request, reply, verified.credential, nowMs);
    if (verified.credential === null) throw verified.failure;
    const credential = verified.credential;
    // Every later line of this request names its caller (never the credential itself).
    // (fastify already made this request its own child logger: add to it rather than nest another.)
    const memo = memoOf(credential);
    (request.log as unknown as { setBindings(bindings: Readonly<Record<string, unknown>>): void }).setBindings(memo.logBindings);
    const tenant = requestTenant(request, credential);
    const home = memo.home;
    const principal: Principal = tenant === home.tenant ? home : principalFor(credential, tenant);
    request.principal = principal;
    guardReadOnly(request, principal);
    return undefined;
  } catch (error) {
    return error as Error;
  }
}

/** Wraps a resource plugin so every route in it requires a credential (and counts against its rate limit). */
export function withAuth(gate: AuthGate, plugin: FastifyPluginAsync): FastifyPluginAsync {
  const hook = authenticateHook(gate);
  return async (app) => {
    app.addHook('onRequest', hook);
    await app.register(plugin);
  };
}
