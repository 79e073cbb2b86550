import { expect } from 'vitest';
import type { TestServer } from './sql-server.js';

/** One request to a test server with its admin key: `/graphql…` routes as they are, the rest under /api/v1. */
export async function apiCall(server: TestServer, method: string, route: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.baseUrl}${route.startsWith('/graphql') ? '' : '/api/v1'}${route}`, {
    method,
    headers: { authorization: `Bearer ${server.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

/** POST /query that must succeed (200): its rows. */
export async function apiSql(server: TestServer, text: string, params: unknown[] = []): Promise<any[]> {
  const reply = await apiCall(server, 'POST', '/query', { sql: text, params });
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body.data;
}
