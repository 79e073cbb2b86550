import { createPublicKey, createSecretKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { SvcError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { credentialOf, type ClaimNames } from './claims.js';
import type { Credential } from './credential.js';
import { openJwks, type JwksSource } from './jwks.js';
import { AUTH_LIMITS } from './limits.js';

/** The JWT settings of core/settings.ts. */
export interface JwtSettings extends ClaimNames {
  readonly jwtSecret: string | undefined;
  readonly jwtPublicKey: string | undefined;
  readonly jwtIssuer: string | undefined;
  readonly jwtAudience: string | undefined;
  readonly jwtJwksUrl: string | undefined;
  readonly jwtJwksCooldownMs: number;
  readonly jwtJwksAgeMsMax: number;
}

/** What an OpenID provider's key set may verify: asymmetric algorithms only (HS* would make a public key a secret). */
export const JWKS_ALGORITHMS: readonly string[] = Object.freeze(['RS256', 'ES256', 'EdDSA']);

/** PostgREST refuses a shorter jwt-secret too: HS256 with a short secret can be brute-forced offline. */
export const JWT_SECRET_CHARS_MIN = 32;

/** Three base64url parts: a JWS in compact form. Anything else presented is an API key. */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export const looksLikeJwt = (presented: string): boolean => JWT_SHAPE.test(presented);

/** Bearer JWTs, verified with jose (this file is the only one that imports it). */
export interface JwtVerifier {
  verify(token: string): Promise<Credential>;
}

/** The verifier for the configured keys; with none configured every JWT is refused. */
export async function createJwtVerifier(settings: JwtSettings, logger: Logger): Promise<JwtVerifier> {
  const keys = await staticKeys(settings);
  const jwks = settings.jwtJwksUrl === undefined ? null : jwksKeys(settings, logger);
  const accepted = [...keys.keys(), ...(jwks === null ? [] : JWKS_ALGORITHMS)];
  const options = {
    clockTolerance: AUTH_LIMITS.jwtClockToleranceSeconds,
    ...(settings.jwtIssuer === undefined ? {} : { issuer: settings.jwtIssuer }),
    ...(settings.jwtAudience === undefined ? {} : { audience: settings.jwtAudience }),
  };
  return {
    async verify(token) {
      const alg = headerAlgorithm(token);
      const key = keys.get(alg) ?? (jwks !== null && JWKS_ALGORITHMS.includes(alg) ? jwks : undefined);
      if (key === undefined) {
        const list = accepted.length === 0 ? 'none: JWT authentication is not configured' : accepted.join(', ');
        throw failed(`token algorithm ${printable(alg)} is not accepted (accepted: ${list})`);
      }
      let payload: JWTPayload;
      try {
        const only = { ...options, algorithms: [alg] };
        ({ payload } = await (typeof key === 'function' ? jwtVerify(token, key, only) : jwtVerify(token, key, only)));
      } catch (error) {
        throw fromJoseError(error);
      }
      return credentialOf(payload, settings);
    },
  };
}

/** The shared secret (HS256) and the public key (RS256, ES256, ES384), by algorithm. */
async function staticKeys(settings: JwtSettings): Promise<Map<string, KeyObject>> {
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
  return keys;
}

/**
 * The key resolver of SVC_JWT_JWKS_URL. A JWKS verifies tokens of whoever the provider issues them
 * to, so issuer and audience are required (an Azure AD or Auth0 key set signs other apps' tokens
 * too); a public key beside it would make the alg header choose between two trust anchors.
 */
function jwksKeys(settings: JwtSettings, logger: Logger): JWTVerifyGetKey {
  const config = (message: string): SvcError => new SvcError('CONFIG_INVALID', message, { setting: 'jwtJwksUrl' });
  let url: URL;
  try {
    url = new URL(settings.jwtJwksUrl!);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error; // new URL() throws a TypeError only for a malformed URL
    throw config(`SVC_JWT_JWKS_URL is not a URL: ${printable(settings.jwtJwksUrl!)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw config('SVC_JWT_JWKS_URL must be an https:// (or http://) URL');
  if (settings.jwtPublicKey !== undefined) throw config('set SVC_JWT_JWKS_URL or SVC_JWT_PUBLIC_KEY, not both');
  if (settings.jwtIssuer === undefined || settings.jwtAudience === undefined) {
    throw config('SVC_JWT_JWKS_URL needs SVC_JWT_ISSUER and SVC_JWT_AUDIENCE: without them any token the provider signs for any application would be accepted');
  }
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname)) {
    logger.warn({ jwks_url: url.href }, 'SVC_JWT_JWKS_URL is plain http: whoever can tamper with that connection can mint tokens');
  }
  const source = openJwks({
    url,
    cooldownMs: settings.jwtJwksCooldownMs,
    maxAgeMs: settings.jwtJwksAgeMsMax,
    timeoutMs: AUTH_LIMITS.jwksFetchTimeoutMs,
    bytesMax: AUTH_LIMITS.jwksBytesMax,
    compile: compileKeySet,
    logger,
  });
  return keyFromSet(source);
}

const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

type LocalKeys = ReturnType<typeof createLocalJWKSet>;

/** jose's key selection (kty, kid, alg, use, key_ops) over a fetched set of at most jwksKeysMax keys. */
function compileKeySet(json: unknown): LocalKeys {
  const keys = (json as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new Error('the key set has no keys array');
  if (keys.length > AUTH_LIMITS.jwksKeysMax) throw new Error(`the key set holds ${keys.length} keys, more than ${AUTH_LIMITS.jwksKeysMax}`);
  return createLocalJWKSet(json as Parameters<typeof createLocalJWKSet>[0]);
}

/** The token's key from the set held; a kid the set lacks fetches it again (within the cooldown: refused). */
function keyFromSet(source: JwksSource<LocalKeys>): JWTVerifyGetKey {
  return async (header, token) => {
    const held = await source.current();
    try {
      return await held(header, token);
    } catch (error) {
      if ((error as { code?: string }).code !== 'ERR_JWKS_NO_MATCHING_KEY') throw keySetError(error, header.kid);
    }
    const fresh = await source.refreshed();
    if (fresh !== null) {
      try {
        return await fresh(header, token);
      } catch (error) {
        throw keySetError(error, header.kid);
      }
    }
    throw keySetError({ code: 'ERR_JWKS_NO_MATCHING_KEY' }, header.kid);
  };
}

function keySetError(error: unknown, kid: unknown): SvcError {
  const named = typeof kid === 'string' ? `kid ${printable(kid)}` : 'no kid';
  switch ((error as { code?: string }).code) {
    case 'ERR_JWKS_NO_MATCHING_KEY':
      return new SvcError('AUTHENTICATION_FAILED', `no key of the identity provider's key set matches the token (${named})`, { reason: 'unknown_key' }, error);
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return new SvcError('AUTHENTICATION_FAILED', 'the token has no kid and several keys of the key set could verify it', { reason: 'unknown_key' }, error);
    default:
      return new SvcError(
        'AUTHENTICATION_FAILED',
        `the token's key cannot be used (${named}): ${(error as Error).message ?? 'invalid key'}`,
        { reason: 'bad_key' },
        error,
      );
  }
}

/** SVC_JWT_PUBLIC_KEY is PEM text when it starts with -----BEGIN, else the path of a PEM file. */
async function loadPublicKey(setting: string): Promise<KeyObject> {
  let pem = setting;
  if (!setting.trimStart().startsWith('-----BEGIN')) {
    try {
      pem = await readFile(setting, 'utf8');
    } catch (error) {
      throw new SvcError(
        'CONFIG_INVALID',
        `SVC_JWT_PUBLIC_KEY names file ${setting}, which cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
        { setting: 'jwtPublicKey' },
        error,
      );
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
  throw new SvcError('CONFIG_INVALID', `SVC_JWT_PUBLIC_KEY must be an RSA or EC P-256/P-384 key, got ${type ?? 'unknown'}${curve ? ` ${curve}` : ''}`, {
    setting: 'jwtPublicKey',
  });
}

function headerAlgorithm(token: string): string {
  try {
    const alg = decodeProtectedHeader(token).alg;
    if (typeof alg === 'string') return alg;
  } catch (error) {
    // jose reports a malformed header as a TypeError; reported just below.
    if (!(error instanceof TypeError)) throw error;
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
