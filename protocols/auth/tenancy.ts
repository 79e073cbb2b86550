import type { FastifyRequest } from 'fastify';
import { DEFAULT_TENANT } from '../../core/catalog.js';
import { SvcError } from '../../core/errors.js';
import { MALFORMED_REQUEST_CODE } from '../errors.js';
import type { Role } from './principal.js';

export const TENANT_HEADER = 'x-tenant-id';

/** What a tenant id may look like: safe in a log line, a URL and a file name. */
export const TENANT_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export const isTenantId = (value: unknown): value is string => typeof value === 'string' && TENANT_ID_PATTERN.test(value);

/** The part of a credential that decides which tenants it may use. */
export interface TenantGrant {
  readonly role: Role;
  /** The tenant the credential is bound to; null: unbound. */
  readonly tenant: string | null;
}

/**
 * The tenant a request works in. A credential's home is its bound tenant, or `default` when it
 * is unbound. X-Tenant-ID may name the home, or any tenant when the credential is an unbound
 * admin; naming another is 403 AUTHORIZATION_DENIED, a malformed one 400.
 */
export function requestTenant(request: FastifyRequest, grant: TenantGrant): string {
  const home = grant.tenant ?? DEFAULT_TENANT;
  const header = request.headers[TENANT_HEADER];
  if (header === undefined) return home;
  if (!isTenantId(header)) {
    throw new SvcError(MALFORMED_REQUEST_CODE, `X-Tenant-ID must match ${TENANT_ID_PATTERN.source}`, {
      reason: 'schema_validation',
      location: 'headers',
      field: TENANT_HEADER,
    });
  }
  if (header === home || (grant.tenant === null && grant.role === 'admin')) return header;
  const why = grant.tenant === null ? 'only an unbound admin credential may choose another tenant' : `the credential is bound to tenant ${grant.tenant}`;
  throw new SvcError('AUTHORIZATION_DENIED', `this credential may not use tenant ${header}: ${why}`, { tenant: header });
}
