/**
 * Who a WebSocket connection is: the credential of connection_init's payload (`Authorization`,
 * `X-API-Key`, `X-Tenant-ID`, any case, also nested under `headers`), else of the upgrade
 * request's headers, verified as every /api/v1 request is (protocols/auth), and again per operation
 * (a key revoked or a JWT expired since the connection opened stops its next operation).
 */
import type { FastifyRequest } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import { SvcError } from '../../../core/errors.js';
import type { AuthGate } from '../../auth/authenticate.js';
import { principalFor } from '../../auth/credential.js';
import type { Principal } from '../../auth/principal.js';
import { addressBucket, credentialBucket, requestsMaxOf } from '../../auth/rate-limit.js';
import { requestTenant, TENANT_HEADER } from '../../auth/tenancy.js';

/** What a connection presented. */
export interface ConnectionCredentials {
  /** The API key or JWT; null when none. */
  readonly presented: string | null;
  readonly tenant: string | undefined;
  /** The client's address (the rate limit of a connection without a valid credential). */
  readonly ip: string;
}

/** The credentials of connection_init's payload, falling back to the upgrade request's headers. */
export function credentialsOf(payload: unknown, headers: IncomingHttpHeaders, ip: string): ConnectionCredentials {
  const fromPayload = lowerKeys(payload);
  const nested = lowerKeys(fromPayload['headers']);
  const pick = (name: string): string | undefined => {
    for (const source of [fromPayload[name], nested[name], headers[name]]) {
      if (typeof source === 'string' && source.trim() !== '') return source.trim();
    }
    return undefined;
  };
  const authorization = pick('authorization');
  const bearer = authorization === undefined ? undefined : (/^Bearer\s+(.+)$/i.exec(authorization)?.[1]?.trim() ?? authorization);
  return { presented: bearer ?? pick('x-api-key') ?? null, tenant: pick(TENANT_HEADER), ip };
}

function lowerKeys(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.toLowerCase(), v]));
}

/**
 * The principal of the credentials: AUTHENTICATION_REQUIRED / AUTHENTICATION_FAILED,
 * AUTHORIZATION_DENIED (a tenant it may not use) or RATE_LIMIT_EXCEEDED (each call counts as a request).
 */
export async function authenticateWs(gate: AuthGate, credentials: ConnectionCredentials, nowMs: number = Date.now()): Promise<Principal> {
  if (credentials.presented === null) {
    hit(gate, addressBucket(credentials.ip), gate.rateLimitRequestsMax, nowMs);
    throw new SvcError(
      'AUTHENTICATION_REQUIRED',
      "authentication required: send Authorization: Bearer <API key or JWT> or X-API-Key in connection_init's payload or the upgrade request",
      {},
    );
  }
  let credential;
  try {
    credential = await gate.authenticator.authenticate(credentials.presented, nowMs);
  } catch (error) {
    hit(gate, addressBucket(credentials.ip), gate.rateLimitRequestsMax, nowMs);
    throw error;
  }
  hit(gate, credentialBucket(credential), requestsMaxOf(gate, credential.rateLimitRequestsMax), nowMs);
  // requestTenant reads only the request's headers: the tenant rule of every /api/v1 request.
  const headers = credentials.tenant === undefined ? {} : { [TENANT_HEADER]: credentials.tenant };
  const tenant = requestTenant({ headers } as unknown as FastifyRequest, credential);
  return principalFor(credential, tenant);
}

function hit(gate: AuthGate, bucket: string, limit: number, nowMs: number): void {
  const decision = gate.limiter.hit(bucket, limit, nowMs);
  if (decision.allowed) return;
  throw new SvcError('RATE_LIMIT_EXCEEDED', `rate limit of ${decision.limit} requests per window exceeded`, {
    limit: decision.limit,
    remaining: decision.remaining,
    reset_at: new Date(decision.resetAtMs).toISOString(),
  });
}

/** The close code of a failed connection_init (graphql-ws's convention: 4401 Unauthorized, 4403 Forbidden). */
export function closeCodeOf(error: SvcError): number {
  switch (error.code) {
    case 'AUTHENTICATION_REQUIRED':
    case 'AUTHENTICATION_FAILED':
      return 4401;
    case 'RATE_LIMIT_EXCEEDED':
      return 4429;
    case 'SHUTTING_DOWN':
      return 1001;
    default:
      return 4403;
  }
}

/** A close reason: the code and message, cut to the 123 bytes a close frame allows. */
export function closeReasonOf(error: SvcError): string {
  const text = `${error.code}: ${error.message}`;
  let reason = text;
  while (Buffer.byteLength(reason) > 123) reason = reason.slice(0, -1);
  return reason;
}
