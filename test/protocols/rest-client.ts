import type { TestServer } from '../helpers/sql-server.js';

/** A tiny JSON client of /api/v1 for the table and row suites (real fetch, the server's admin key). */
export interface RestReply {
  readonly status: number;
  readonly body: any;
}

export function restClient(server: TestServer): (method: string, path: string, body?: unknown) => Promise<RestReply> {
  return async (method, path, body) => {
    const headers: Record<string, string> = { authorization: `Bearer ${server.apiKey}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${server.baseUrl}/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
  };
}

/** `?a=1&b=x` from an object (values percent-encoded). */
export function qs(params: Record<string, string | number | boolean | undefined>): string {
  const parts = Object.entries(params)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`);
  return parts.length === 0 ? '' : `?${parts.join('&')}`;
}
