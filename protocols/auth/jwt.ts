import { createPublicKey, createSecretKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { SvcError } from '../../core/errors.js';
import type { Credential } from './credential.js';
import { AUTH_LIMITS } from './limits.js';
import { ROLES, type Role } from './principal.js';
import { isTenantId, TENANT_ID_PATTERN } from './tenancy.js';

/** The JWT settings of core/settings.ts. */
export interface JwtSettings {
  readonly jwtSecret: string | undefined;
  readonly jwtPublicKey: string | undefined;
  readonly jwtIssuer: string | undefined;
  readonly jwtAudience: string | undefined;
}

/** PostgREST refuses a shorter jwt-secret too: HS256 with a short secret can be brute-forced offline. */
export const JWT_SECRET_CHARS_MIN = 32;

/** Three base64url parts: a JWS in compact form. Anything else presented is an API key. */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export const looksLikeJwt = (presented: string): boolean => JWT_SHAPE.test(presented);

/** Bearer JWTs, verified with jose (the only file that imports it). */
export interface JwtVerifier {
  verify(token: string): Promise<Credential>;
}

/** The verifier for the configured keys; with none configured every JWT is refused. */
export async function createJwtVerifier(settings: JwtSettings): Promise<JwtVerifier> {
  const keys = new Map<string, KeyObject>();
  if (settings.jwtSecret !== undefined) {
    if (settings.jwtSecret.length < JWT_SECRET_CHARS_MIN) {
      throw new SvcError('CONFIG_INVALID', `SVC_JWT_SECRET must be at least ${JWT_SECRET_CHARS_MIN} characters`, { setting: 'jwtSecret' });
    }
    keys.set('HS256', createSecretKey(Buffer.from(settings.jwtSecret, 'utf8')));
  }
  if (settings.jwtPublicKey !== undefined) {
    const key = await loadPublicKey(settings.jwtPublicKey);
    keys.set(algorithmOf(key), key);
  }
  const options = {
    clockTolerance: AUTH_LIMITS.jwtClockToleranceSeconds,
    ...(settings.jwtIssuer === undefined ? {} : { issuer: settings.jwtIssuer }),
    ...(settings.jwtAudience === undefined ? {} : { audience: settings.jwtAudience }),
  };
  return {
    async verify(token) {
      const alg = headerAlgorithm(token);
      const key = keys.get(alg);
      if (key === undefined) {
        const accepted = keys.size === 0 ? 'none: JWT authentication is not configured' : [...keys.keys()].join(', ');
        throw failed(`token algorithm ${printable(alg)} is not accepted (accepted: ${accepted})`);
      }
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, key, { ...options, algorithms: [alg] }));
      } catch (error) {
        throw fromJoseError(error);
      }
      return credentialOf(payload);
    },
  };
}

/** SVC_JWT_PUBLIC_KEY is PEM text when it starts with -----BEGIN, else the path of a PEM file. */
async function loadPublicKey(setting: string): Promise<KeyObject> {
  let pem = setting;
  if (!setting.trimStart().startsWith('-----BEGIN')) {
    try {
      pem = await readFile(setting, 'utf8');
    } catch (error) {
      throw new SvcError('CONFIG_INVALID', `SVC_JWT_PUBLIC_KEY names file ${setting}, which cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`, { setting: 'jwtPublicKey' }, error);
    }
  }
  try {
    return createPublicKey(pem);
  } catch (error) {
    throw new SvcError('CONFIG_INVALID', `SVC_JWT_PUBLIC_KEY is not a PEM public key (${(error as Error).message})`, { setting: 'jwtPublicKey' }, error);
  }
}

/** The one algorithm a public key verifies: RS256 for RSA, ES256 for EC P-256, ES384 for P-384. */
function algorithmOf(key: KeyObject): string {
  const type = key.asymmetricKeyType;
  const curve = key.asymmetricKeyDetails?.namedCurve;
  if (type === 'rsa') return 'RS256';
  if (type === 'ec' && curve === 'prime256v1') return 'ES256';
  if (type === 'ec' && curve === 'secp384r1') return 'ES384';
  throw new SvcError('CONFIG_INVALID', `SVC_JWT_PUBLIC_KEY must be an RSA or EC P-256/P-384 key, got ${type ?? 'unknown'}${curve ? ` ${curve}` : ''}`, { setting: 'jwtPublicKey' });
}

function headerAlgorithm(token: string): string {
  try {
    const alg = decodeProtectedHeader(token).alg;
    if (typeof alg === 'string') return alg;
  } catch {
    // reported just below
  }
  throw failed('malformed token: its header is not a JWS header with an alg');
}

/** Part of a token echoed in a message: at most 32 visible ASCII characters (an alg name is short). */
const printable = (text: string): string => text.replace(/[^\x21-\x7e]/g, '?').slice(0, 32);

const failed = (message: string, details: Record<string, unknown> = {}): SvcError => new SvcError('AUTHENTICATION_FAILED', message, details);

/** jose's error, wrapped once here with a message for the client (never the token). */
function fromJoseError(error: unknown): SvcError {
  const jose = error as { code?: string; message?: string; payload?: JWTPayload };
  switch (jose.code) {
    case 'ERR_JWT_EXPIRED': {
      const exp = jose.payload?.exp;
      const at = typeof exp === 'number' ? ` at ${new Date(exp * 1000).toISOString()}` : '';
      return new SvcError('AUTHENTICATION_FAILED', `token expired${at}`, { reason: 'token_expired' }, error);
    }
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return new SvcError('AUTHENTICATION_FAILED', 'invalid token signature', { reason: 'bad_signature' }, error);
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      return new SvcError('AUTHENTICATION_FAILED', `invalid token: ${jose.message ?? 'a claim is invalid'}`, { reason: 'invalid_claim' }, error);
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
    case 'ERR_JOSE_NOT_SUPPORTED':
    case 'ERR_JWS_INVALID':
    case 'ERR_JWT_INVALID':
      return new SvcError('AUTHENTICATION_FAILED', `malformed token: ${jose.message ?? 'invalid'}`, { reason: 'malformed_token' }, error);
    default:
      throw error;
  }
}

/**
 * sub is required (logs and rate limits name the caller by it); role defaults to read_only, the
 * least privilege, as PostgREST falls back to its anonymous role; tenant, when present, binds
 * the token to that tenant. A role we do not know is 403: the token is genuine, the permission not.
 */
function credentialOf(payload: JWTPayload): Credential {
  const { sub, role, tenant } = payload as { sub?: unknown; role?: unknown; tenant?: unknown };
  if (typeof sub !== 'string' || sub === '' || sub.length > AUTH_LIMITS.jwtSubjectCharsMax) {
    throw failed(`token has no sub claim (a string of 1 to ${AUTH_LIMITS.jwtSubjectCharsMax} characters)`, { reason: 'invalid_claim', claim: 'sub' });
  }
  if (role !== undefined && !ROLES.includes(role as Role)) {
    throw new SvcError('AUTHORIZATION_DENIED', `token role ${String(JSON.stringify(role)).slice(0, 80)} is not one of ${ROLES.join(', ')}`, { claim: 'role' });
  }
  if (tenant !== undefined && !isTenantId(tenant)) {
    throw failed(`token tenant claim must match ${TENANT_ID_PATTERN.source}`, { reason: 'invalid_claim', claim: 'tenant' });
  }
  return { kind: 'jwt', subject: sub, role: (role as Role | undefined) ?? 'read_only', tenant: tenant ?? null, rateLimitMax: null };
}
