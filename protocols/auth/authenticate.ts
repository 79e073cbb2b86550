import type { FastifyPluginAsync, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { SvcError } from '../../core/errors.js';
import type { AdminKey } from './admin-key.js';

/** The presented API key: `Authorization: Bearer <key>` or `X-API-Key: <key>`; null when none. */
export function presentedKey(request: FastifyRequest): string | null {
  const auth = request.headers.authorization;
  if (typeof auth === 'string' && auth.trim() !== '') {
    const m = /^Bearer\s+(.+)$/i.exec(auth.trim());
    return m ? m[1]!.trim() : auth.trim();
  }
  const header = request.headers['x-api-key'];
  if (typeof header === 'string' && header.trim() !== '') return header.trim();
  return null;
}

/**
 * onRequest hook of the /api/v1 resource plugins: no credentials -> 401 AUTHENTICATION_REQUIRED,
 * a key that does not match -> 401 AUTHENTICATION_FAILED. (Roles, JWT and tenants: issue 4.)
 */
export function authenticate(adminKey: AdminKey): onRequestAsyncHookHandler {
  return async (request) => {
    const key = presentedKey(request);
    if (key === null) {
      throw new SvcError('AUTHENTICATION_REQUIRED', 'authentication required: send Authorization: Bearer <API key> or X-API-Key: <API key>', {});
    }
    if (!adminKey.matches(key)) throw new SvcError('AUTHENTICATION_FAILED', 'invalid API key', {});
  };
}

/** Wraps a resource plugin so every route in it requires a valid API key. */
export function withAuth(adminKey: AdminKey, plugin: FastifyPluginAsync): FastifyPluginAsync {
  return async (app) => {
    app.addHook('onRequest', authenticate(adminKey));
    await app.register(plugin);
  };
}
