import http from 'node:http';
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

/**
 * One request to a test server over `agent` (a keep-alive connection of the test's choosing: the
 * read-after-ack tests write over one connection and read over another), with its admin key as
 * Bearer and as the vector protocol's `api-key`/`x-api-key`: status and parsed JSON body.
 */
export function agentCall(server: TestServer, agent: http.Agent, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      new URL(path, server.baseUrl),
      {
        agent,
        method,
        headers: {
          authorization: `Bearer ${server.apiKey}`,
          'api-key': server.apiKey,
          'x-api-key': server.apiKey,
          ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text) });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** agentCall that must succeed (2xx): its body. */
export async function agentOk(server: TestServer, agent: http.Agent, method: string, path: string, body?: unknown): Promise<any> {
  const reply = await agentCall(server, agent, method, path, body);
  if (reply.status < 200 || reply.status > 299) throw new Error(`${method} ${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body;
}

/**
 * `count` clients inserting rows into `table` (id INT PRIMARY KEY, v INT) over `agent` until the
 * returned stop is awaited: keeps the group commit and the apply busy around what a test checks.
 */
export function busyWriters(server: TestServer, agent: http.Agent, table: string, count: number): () => Promise<void> {
  let writing = true;
  let next = 0;
  const loops = Array.from({ length: count }, async () => {
    while (writing) {
      next += 1;
      await agentOk(server, agent, 'POST', `/api/v1/tables/${table}/rows`, { id: next, v: next });
    }
  });
  return async () => {
    writing = false;
    await Promise.allSettled(loops);
  };
}
