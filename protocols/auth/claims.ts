import { SvcError } from '../../core/errors.js';
import type { Credential } from './credential.js';
import { AUTH_LIMITS } from './limits.js';
import { ROLES, type Role } from './principal.js';
import { isTenantId, TENANT_ID_PATTERN } from './tenancy.js';

/** Where a token keeps the svcdb role and tenant (SVC_JWT_ROLE_CLAIM, SVC_JWT_TENANT_CLAIM). */
export interface ClaimNames {
  readonly jwtRoleClaim: string;
  readonly jwtTenantClaim: string;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The claim `name` of a payload: the top-level claim of that exact name when there is one (Auth0's
 * custom claims are URLs, dots included), else the dotted path into nested objects (Keycloak's
 * realm_access.roles, resource_access.<client>.roles).
 */
export function claimAt(payload: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(payload, name)) return payload[name];
  let node: unknown = payload;
  for (const part of name.split('.')) {
    if (!isObject(node) || !Object.hasOwn(node, part)) return undefined;
    node = node[part];
  }
  return node;
}

/**
 * The svcdb role a claim grants: a string must be a role name (else 403: the token is genuine, the
 * permission it asks for does not exist); a list (an identity provider's roles, most of them not
 * svcdb's) grants the highest svcdb role it holds, and ignores the rest; absent, or a list without
 * one, is read_only, the least privilege (PostgREST likewise falls back to its anonymous role).
 */
function roleOf(value: unknown, claim: string): Role {
  if (value === undefined) return 'read_only';
  if (Array.isArray(value)) return ROLES.find((role) => value.includes(role)) ?? 'read_only';
  if (ROLES.includes(value as Role)) return value as Role;
  throw new SvcError('AUTHORIZATION_DENIED', `token role ${String(JSON.stringify(value)).slice(0, 80)} is not one of ${ROLES.join(', ')}`, { claim });
}

const failed = (message: string, details: Record<string, unknown>): SvcError => new SvcError('AUTHENTICATION_FAILED', message, details);

/**
 * sub is required (logs and rate limits name the caller by it); the role claim as roleOf says; the
 * tenant claim, when present, binds the token to that tenant.
 */
export function credentialOf(payload: Record<string, unknown>, names: ClaimNames): Credential {
  const sub = payload['sub'];
  if (typeof sub !== 'string' || sub === '' || sub.length > AUTH_LIMITS.jwtSubjectCharsMax) {
    throw failed(`token has no sub claim (a string of 1 to ${AUTH_LIMITS.jwtSubjectCharsMax} characters)`, { reason: 'invalid_claim', claim: 'sub' });
  }
  const role = roleOf(claimAt(payload, names.jwtRoleClaim), names.jwtRoleClaim);
  const tenant = claimAt(payload, names.jwtTenantClaim);
  if (tenant !== undefined && !isTenantId(tenant)) {
    throw failed(`token ${names.jwtTenantClaim} claim must match ${TENANT_ID_PATTERN.source}`, { reason: 'invalid_claim', claim: names.jwtTenantClaim });
  }
  return { kind: 'jwt', subject: sub, role, tenant: tenant ?? null, rateLimitRequestsMax: null };
}
