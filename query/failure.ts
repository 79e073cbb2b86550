import { SvcError, isSvcError } from '../core/errors.js';

/**
 * Any error a query threw, as the operating error a caller may be shown: a SvcError as it is;
 * anything else (a bug, a library's error) becomes a bare INTERNAL_ERROR, because its message may
 * carry internals (paths, SQL, stack) and belongs in the log only. Needs no protocol context,
 * unlike protocols/errors.ts toSvcError, which also maps fastify's own request errors.
 */
export function asSvcError(error: unknown): SvcError {
  if (isSvcError(error)) return error;
  return new SvcError('INTERNAL_ERROR', 'internal error; the server log has the details', {}, error);
}
