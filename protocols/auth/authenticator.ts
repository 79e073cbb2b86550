import { SvcError } from '../../core/errors.js';
import type { AdminKey } from './admin-key.js';
import type { Authenticator, Credential } from './credential.js';
import type { ApiKeyRegistry } from './key-registry.js';
import { AUTH_LIMITS } from './limits.js';
import { looksLikeJwt, type JwtVerifier } from './jwt.js';

/** The admin key (SVC_API_KEY or the generated one): an unbound admin of the default tenant. */
const ADMIN_CREDENTIAL: Credential = Object.freeze({ kind: 'admin_key', subject: 'admin', role: 'admin', tenant: null, rateLimitRequestsMax: null });

export interface AuthenticatorParts {
  readonly adminKey: AdminKey;
  readonly apiKeys: ApiKeyRegistry;
  readonly jwt: JwtVerifier;
}

/** A verified admin or API key, and the reading of the key file it was verified against. */
interface Remembered {
  readonly credential: Credential;
  readonly generation: number;
}

/**
 * A presented value shaped like a JWT (three base64url parts) is verified as one; anything else
 * is the admin key or an API key, compared by SHA-256 (constant time).
 *
 * A key that verified is remembered by its presented value, so it is hashed once, not on every
 * request. An API key is remembered only while the key file's reading it was verified against is
 * the one in force: the registry still looks at the file as often as before (refresh), and a
 * changed file (a revoked or changed key) forgets them all. The lookup is a Map's (by the string's
 * hash, then equality): a wrong key costs a hash and a miss, whatever it shares with a right one.
 * Failures are not remembered. JWTs are verified every time (their expiry and key sets move).
 */
export function createAuthenticator(parts: AuthenticatorParts): Authenticator {
  const remembered = new Map<string, Remembered>();
  const remember = (presented: string, credential: Credential, generation: number): Credential => {
    if (remembered.size >= AUTH_LIMITS.credentialCacheEntriesMax) remembered.delete(remembered.keys().next().value!);
    remembered.set(presented, { credential, generation });
    return credential;
  };
  return {
    remembered(presented, nowMs) {
      // No JWT shape test here: only what authenticate() verified as a key is remembered (a JWT
      // never is), so a JWT misses the Map as any value not seen before does (a regex less per request).
      if (presented.length > AUTH_LIMITS.credentialCharsMax || parts.apiKeys.due(nowMs)) return undefined;
      const known = remembered.get(presented);
      if (known === undefined || (known.credential !== ADMIN_CREDENTIAL && known.generation !== parts.apiKeys.generation)) return undefined;
      return known.credential;
    },
    async authenticate(presented, nowMs) {
      if (presented.length > AUTH_LIMITS.credentialCharsMax) {
        throw new SvcError('AUTHENTICATION_FAILED', `credential is longer than ${AUTH_LIMITS.credentialCharsMax} characters`, {});
      }
      if (looksLikeJwt(presented)) return parts.jwt.verify(presented);
      const due = parts.apiKeys.refresh(nowMs);
      if (due !== null) await due;
      // From here on synchronous: the generation and the keys it names are read at one moment.
      const generation = parts.apiKeys.generation;
      const known = remembered.get(presented);
      if (known !== undefined) {
        if (known.credential === ADMIN_CREDENTIAL || known.generation === generation) return known.credential;
        remembered.delete(presented);
      }
      if (parts.adminKey.matches(presented)) return remember(presented, ADMIN_CREDENTIAL, generation);
      const record = parts.apiKeys.find(presented);
      if (record === null) throw new SvcError('AUTHENTICATION_FAILED', 'invalid API key', {});
      if (record.revoked_at !== null) throw new SvcError('AUTHENTICATION_FAILED', 'API key was revoked', { key_id: record.id });
      const credential: Credential = {
        kind: 'api_key',
        subject: record.id,
        role: record.role,
        tenant: record.tenant,
        rateLimitRequestsMax: record.rate_limit_max,
      };
      return remember(presented, credential, generation);
    },
  };
}
