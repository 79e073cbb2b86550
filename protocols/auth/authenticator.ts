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

/**
 * A presented value shaped like a JWT (three base64url parts) is verified as one; anything else
 * is the admin key or an API key, compared by SHA-256 (constant time).
 */
export function createAuthenticator(parts: AuthenticatorParts): Authenticator {
  return {
    async authenticate(presented, nowMs) {
      if (presented.length > AUTH_LIMITS.credentialCharsMax) {
        throw new SvcError('AUTHENTICATION_FAILED', `credential is longer than ${AUTH_LIMITS.credentialCharsMax} characters`, {});
      }
      if (looksLikeJwt(presented)) return parts.jwt.verify(presented);
      if (parts.adminKey.matches(presented)) return ADMIN_CREDENTIAL;
      const record = await parts.apiKeys.lookup(presented, nowMs);
      if (record === null) throw new SvcError('AUTHENTICATION_FAILED', 'invalid API key', {});
      if (record.revoked_at !== null) throw new SvcError('AUTHENTICATION_FAILED', 'API key was revoked', { key_id: record.id });
      return { kind: 'api_key', subject: record.id, role: record.role, tenant: record.tenant, rateLimitRequestsMax: record.rate_limit_max };
    },
  };
}
