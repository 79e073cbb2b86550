import type { IncomingMessage } from 'node:http';
import { newUlid } from '../../core/ids.js';

export const REQUEST_ID_HEADER = 'x-request-id';

/** Visible ASCII, no spaces: safe to echo and to log. Longer or odd ids are replaced, not refused. */
const CLIENT_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** The client's X-Request-ID when it is sane, else a fresh ULID (sortable by time). */
export function requestIdOf(raw: IncomingMessage): string {
  const header = raw.headers[REQUEST_ID_HEADER];
  return typeof header === 'string' && CLIENT_REQUEST_ID.test(header) ? header : newUlid();
}
