import type { FastifyRequest } from 'fastify';
import { SvcError } from '../../core/errors.js';
import { API_PREFIX } from '../http/api-prefix.js';
import { principalOf, type Principal, type Role } from './principal.js';

const RANK: Readonly<Record<Role, number>> = Object.freeze({ read_only: 0, read_write: 1, admin: 2 });

/** For admin-only (or write-only) routes: 403 AUTHORIZATION_DENIED unless the principal has `role` or a higher one. */
export function requireRole(request: FastifyRequest, role: Role): void {
  const principal = principalOf(request);
  if (RANK[principal.role] >= RANK[role]) return;
  throw new SvcError('AUTHORIZATION_DENIED', `this needs the ${role} role; the credential has ${principal.role}`, {
    role: principal.role,
    required_role: role,
  });
}

/** Methods that never change anything. */
const READ_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The routes beyond GET/HEAD/OPTIONS that the read_only role may call: their SQL runs through
 * engineScope(), so the engine itself refuses a write with 403. Anything else is refused here
 * before its handler runs, so a new write route is closed to read_only until it is listed.
 */
export const READ_ONLY_ROUTES: ReadonlySet<string> = new Set(
  [
    'POST /query',
    'POST /query/stream',
    'POST /query/explain',
    'POST /query/async',
    // Cancelling one's own async query changes no data.
    'DELETE /query/:query_id',
    // A read_only credential may read in a transaction; the engine refuses its writes (403).
    'POST /transactions',
    'POST /transactions/:transaction_id/query',
    'POST /transactions/:transaction_id/commit',
    'POST /transactions/:transaction_id/rollback',
    // A vector search is a SELECT.
    'POST /vectors/search',
  ]
    .map((route) => route.replace(' ', ` ${API_PREFIX}`))
    // GraphQL at the root: queries run through engineScope (the engine refuses writes with 403),
    // and its mutations check the role themselves.
    .concat(['POST /graphql']),
);

/** 403 for a read_only principal on a route that may write (see READ_ONLY_ROUTES). */
export function guardReadOnly(request: FastifyRequest, principal: Principal): void {
  if (principal.role !== 'read_only' || READ_METHODS.has(request.method)) return;
  if (READ_ONLY_ROUTES.has(`${request.method} ${request.routeOptions.url ?? ''}`)) return;
  throw new SvcError('AUTHORIZATION_DENIED', `the read_only role may not call ${request.method} ${request.routeOptions.url ?? request.url}`, {
    role: 'read_only',
  });
}
