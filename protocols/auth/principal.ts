import type { FastifyRequest } from 'fastify';
import { DEFAULT_TENANT } from '../../core/catalog.js';
import type { ReadOnlyReason } from '../../query/index.js';

/** What a credential may do: admin (everything), read_write (read and write data), read_only (read). */
export type Role = 'admin' | 'read_write' | 'read_only';

export const ROLES: readonly Role[] = ['admin', 'read_write', 'read_only'];

/** Who is calling, as the auth hook established it; every route reads the tenant and role from here. */
export interface Principal {
  /** Key id or JWT sub: what logs and rate limits name the caller by. */
  readonly subject: string;
  /**
   * The credential, as `kind:subject` (`admin_key:admin`, `api_key:key_…`, `jwt:<sub>`): what
   * owns an async query or a transaction. Never the secret itself.
   */
  readonly credential: string;
  readonly role: Role;
  /** The tenant this request works in (X-Tenant-ID, or the credential's own tenant). */
  readonly tenant: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook of /api/v1 (protocols/auth); undefined on unauthenticated routes. */
    principal?: Principal;
  }
}

/** The admin of the default tenant: what an unauthenticated in-process caller acts as. */
export const DEFAULT_PRINCIPAL: Principal = Object.freeze({ subject: 'admin', credential: 'admin_key:admin', role: 'admin', tenant: DEFAULT_TENANT });

/** The request's principal (the default admin when no auth hook ran, e.g. in-process tests of a plugin). */
export function principalOf(request: FastifyRequest): Principal {
  return request.principal ?? DEFAULT_PRINCIPAL;
}

/**
 * Who is asking about an owned record (an async query, a transaction): its tenant, its credential,
 * and whether it is an admin of that tenant (who may see every record in it).
 */
export function callerOf(request: FastifyRequest): { readonly tenant: string; readonly credential: string; readonly admin: boolean } {
  const principal = principalOf(request);
  return { tenant: principal.tenant, credential: principal.credential, admin: principal.role === 'admin' };
}

/** The engine options that follow from the principal: its tenant, and read-only for read_only. */
export function engineScope(request: FastifyRequest): { tenant: string; readOnly?: ReadOnlyReason } {
  const principal = principalOf(request);
  return principal.role === 'read_only' ? { tenant: principal.tenant, readOnly: 'role' } : { tenant: principal.tenant };
}
