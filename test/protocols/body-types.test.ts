import type { FastifyPluginAsync } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { getJson, startHttp } from './helpers.js';

/**
 * A JSON body's values keep their JSON types: a wrong type is refused with 422 VALIDATION_ERROR
 * (details.reason schema_validation, details.location body, details.field), never converted. ajv's
 * coercion (which query strings need: `?limit=10` is text) once applied to bodies too, so
 * `{"filter": true}` deleted every row (the filter "true"), `{"params": "x"}` bound ["x"] and
 * `{"sql": 5}` ran "5". One case per route family with a body; each was accepted (converted)
 * before request-validators.ts gave bodies their own ajv without coercion.
 */
const VECTOR_KEY = 'body-types-vector-key';

let server: TestServer;
let transactionId = '';

async function call(method: string, path: string, body: unknown, vector = false): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (vector) headers['api-key'] = VECTOR_KEY;
  else headers['authorization'] = `Bearer ${server.apiKey}`;
  const url = vector ? `${server.baseUrl}${path}` : `${server.baseUrl}/api/v1${path}`;
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

const ok = async (method: string, path: string, body: unknown, vector = false): Promise<Record<string, unknown>> => {
  const answer = await call(method, path, body, vector);
  expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBeLessThan(300);
  return answer.body;
};

const countOf = async (table: string): Promise<number> => {
  const answer = await ok('POST', '/query', { sql: `SELECT count(*)::int AS n FROM ${table}` });
  return (answer['data'] as { n: number }[])[0]!.n;
};

beforeAll(async () => {
  server = await startTestServer({ env: { SVC_VECTOR_API_KEY: VECTOR_KEY } });
  await ok('POST', '/query', { sql: 'CREATE TABLE items (id INT PRIMARY KEY, label TEXT)' });
  await ok('POST', '/query', { sql: "INSERT INTO items VALUES (1, 'one'), (2, 'two'), (3, 'three')" });
  await ok('POST', '/query', { sql: 'CREATE TABLE docs (id TEXT PRIMARY KEY, embedding VECTOR(3), metadata JSONB)' });
  await ok('POST', '/indexes', { name: 'pine', dimension: 3, metric: 'cosine' }, true);
  transactionId = (await ok('POST', '/transactions', {}))['transaction_id'] as string;
});

afterAll(async () => {
  await server?.close();
});

interface Case {
  readonly name: string;
  readonly method: string;
  readonly path: string;
  readonly body: () => unknown;
  /** The field details.field names (its first part). */
  readonly field: string;
  /** On the vector protocol (Pinecone's routes, api-key). */
  readonly vector?: boolean;
}

/** Each a JSON type that ajv's coercion converted. */
const CASES: readonly Case[] = [
  { name: 'query: a number for sql', method: 'POST', path: '/query', body: () => ({ sql: 5 }), field: 'sql' },
  { name: 'query: a string for params', method: 'POST', path: '/query', body: () => ({ sql: 'SELECT $1::text AS v', params: 'bad' }), field: 'params' },
  { name: 'query: a string for timeout_ms', method: 'POST', path: '/query', body: () => ({ sql: 'SELECT 1', timeout_ms: '5000' }), field: 'timeout_ms' },
  {
    name: 'query: a string for include_metadata',
    method: 'POST',
    path: '/query',
    body: () => ({ sql: 'SELECT 1', include_metadata: 'true' }),
    field: 'include_metadata',
  },
  { name: 'stream: a string for params', method: 'POST', path: '/query/stream', body: () => ({ sql: 'SELECT $1::text AS v', params: 'bad' }), field: 'params' },
  { name: 'explain: a string for analyze', method: 'POST', path: '/query/explain', body: () => ({ sql: 'SELECT 1', analyze: 'false' }), field: 'analyze' },
  { name: 'async: a string for max_rows', method: 'POST', path: '/query/async', body: () => ({ sql: 'SELECT 1', max_rows: '10' }), field: 'max_rows' },
  { name: 'begin: a string for read_only', method: 'POST', path: '/transactions', body: () => ({ read_only: 'true' }), field: 'read_only' },
  { name: 'begin: a string for timeout_ms', method: 'POST', path: '/transactions', body: () => ({ timeout_ms: '5000' }), field: 'timeout_ms' },
  {
    name: 'transaction statement: a string for params',
    method: 'POST',
    path: '/transactions/TXN/query',
    body: () => ({ sql: 'SELECT $1::text AS v', params: 'bad' }),
    field: 'params',
  },
  {
    name: 'create table: a number for a name',
    method: 'POST',
    path: '/tables',
    body: () => ({ name: 7, columns: [{ name: 'id', type: 'integer', primary_key: true }] }),
    field: 'name',
  },
  {
    name: 'create table: a string for if_not_exists',
    method: 'POST',
    path: '/tables',
    body: () => ({ name: 't7', columns: [{ name: 'id', type: 'integer' }], if_not_exists: 'true' }),
    field: 'if_not_exists',
  },
  {
    name: 'alter table: a number for a new name',
    method: 'PATCH',
    path: '/tables/items',
    body: () => ({ operations: [{ operation: 'rename_column', old_name: 'label', new_name: 5 }] }),
    field: 'operations',
  },
  {
    name: 'insert rows: a string for returning',
    method: 'POST',
    path: '/tables/items/rows',
    body: () => ({ row: { id: 10, label: 'ten' }, returning: 'id' }),
    field: 'returning',
  },
  {
    name: 'update rows: a boolean for filter',
    method: 'PUT',
    path: '/tables/items/rows',
    body: () => ({ filter: true, updates: { label: 'x' } }),
    field: 'filter',
  },
  { name: 'delete rows: a boolean for filter', method: 'DELETE', path: '/tables/items/rows', body: () => ({ filter: true }), field: 'filter' },
  {
    name: 'patch row: a string for returning',
    method: 'PATCH',
    path: '/tables/items/rows/1',
    body: () => ({ updates: { label: 'uno' }, returning: 'label' }),
    field: 'returning',
  },
  {
    name: 'vector upsert: strings for numbers',
    method: 'POST',
    path: '/vectors/upsert',
    body: () => ({ table: 'docs', vectors: [{ id: 'a', vector: ['1', '0', '0'] }] }),
    field: 'vectors/0/vector/0',
  },
  {
    name: 'vector search: a string for top_k',
    method: 'POST',
    path: '/vectors/search',
    body: () => ({ index: 'docs', vector: [1, 0, 0], top_k: '2' }),
    field: 'top_k',
  },
  { name: 'vector delete: one id for the list', method: 'DELETE', path: '/vectors', body: () => ({ table: 'docs', ids: 'a' }), field: 'ids' },
  {
    name: 'webhook: one table for the list',
    method: 'POST',
    path: '/webhooks',
    body: () => ({ url: 'http://127.0.0.1:9/in', secret: 'a-secret-of-length', tables: 'items' }),
    field: 'tables',
  },
  {
    name: 'webhook patch: a string for enabled',
    method: 'PATCH',
    path: '/webhooks/01ARZ3NDEKTSV4RRFFQ69G5FAV',
    body: () => ({ enabled: 'false' }),
    field: 'enabled',
  },
  {
    name: 'pinecone create: a string for dimension',
    method: 'POST',
    path: '/indexes',
    body: () => ({ name: 'pine2', dimension: '3', metric: 'cosine' }),
    field: 'dimension',
    vector: true,
  },
  {
    name: 'pinecone upsert: strings for values',
    method: 'POST',
    path: '/vectors/upsert',
    body: () => ({ vectors: [{ id: 'p1', values: ['1', '0', '0'] }] }),
    field: 'vectors/0/values/0',
    vector: true,
  },
  { name: 'pinecone query: a string for topK', method: 'POST', path: '/query', body: () => ({ vector: [1, 0, 0], topK: '2' }), field: 'topK', vector: true },
  { name: 'pinecone delete: one id for the list', method: 'POST', path: '/vectors/delete', body: () => ({ ids: 'p1' }), field: 'ids', vector: true },
  {
    name: 'pinecone update: a string for values',
    method: 'POST',
    path: '/vectors/update',
    body: () => ({ id: 'p1', values: '1' }),
    field: 'values',
    vector: true,
  },
];

describe('request bodies are validated without type coercion', () => {
  it.each(CASES)('$name: 422 VALIDATION_ERROR naming the field', async ({ method, path, body, field, vector }) => {
    const answer = await call(method, vectorPath(path.replace('TXN', transactionId), vector), body(), vector);
    expect(answer.status, JSON.stringify(answer.body)).toBe(422);
    const error = answer.body['error'] as { code: string; details: { reason: string; location: string; field?: string } };
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.details).toMatchObject({ reason: 'schema_validation', location: 'body' });
    expect(error.details.field ?? '').toContain(field.split('/')[0]);
  });

  it('changed nothing and keeps serving: every row is there, the transaction is still open', async () => {
    expect(await countOf('items')).toBe(3);
    expect(await countOf('docs')).toBe(0);
    const labels = await ok('POST', '/query', { sql: 'SELECT label FROM items ORDER BY id' });
    expect(labels['data']).toEqual([{ label: 'one' }, { label: 'two' }, { label: 'three' }]);
    expect((await ok('GET', `/transactions/${transactionId}`, undefined))['status']).toBe('open');
    expect((await call('GET', '/indexes/pine2', undefined, true)).status).toBe(404);
    expect((await call('GET', '/tables/t7', undefined)).status).toBe(404);
  });

  it('a vector id is text or a number as its schema says: a number for a TEXT id is its text', async () => {
    expect(await ok('POST', '/vectors/upsert', { table: 'docs', vectors: [{ id: 5, vector: [1, 0, 0] }] })).toMatchObject({ ids: ['5'] });
    expect((await ok('POST', '/query', { sql: 'SELECT id FROM docs' }))['data']).toEqual([{ id: '5' }]);
    expect(await ok('DELETE', '/vectors', { table: 'docs', ids: [5] })).toMatchObject({ deleted_count: 1 });
  });

  it('query strings are still converted: ?limit=2 is a number', async () => {
    const page = await ok('GET', '/tables/items/rows?limit=2', undefined);
    expect((page['data'] as unknown[]).length).toBe(2);
  });

  it('GraphQL variables keep their JSON types: graphql-js refuses "2" for an Int (the GraphQL route has no ajv schema)', async () => {
    await ok('POST', '/query', { sql: 'SELECT 1' });
    const graphql = async (body: unknown): Promise<{ status: number; body: { data?: unknown; errors?: { extensions?: { code?: string } }[] } }> => {
      const response = await fetch(`${server.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${server.apiKey}` },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as { data?: unknown; errors?: { extensions?: { code?: string } }[] } };
    };
    const query = 'query($id: Int!) { items_by_pk(id: $id) { label } }';
    expect((await graphql({ query, variables: { id: 2 } })).body).toEqual({ data: { items_by_pk: { label: 'two' } } });
    const asText = await graphql({ query, variables: { id: '2' } });
    expect(asText.body.data ?? null).toBeNull();
    expect(asText.body.errors?.[0]?.extensions?.code).toBe('VALIDATION_ERROR');
    const numberQuery = await graphql({ query: 5 });
    expect(numberQuery.status).toBe(400);
  });
});

/** The vector protocol's data plane is under /indexes/{name} on the same listener; its control plane at the root. */
function vectorPath(path: string, vector: boolean | undefined): string {
  if (!vector || path === '/indexes') return path;
  return `/indexes/pine${path}`;
}

describe('each part of a request by its own rules (request-validators.ts)', () => {
  const integer = { type: 'integer' } as const;
  const parts: FastifyPluginAsync = async (app) => {
    const schema = {
      querystring: { type: 'object', properties: { n: integer } },
      headers: { type: 'object', properties: { 'x-count': integer } },
      body: { type: 'object', properties: { n: integer } },
    };
    app.post('/parts', { schema }, async (request) => ({ query: request.query, count: request.headers['x-count'], body: request.body }));
  };

  it('converts a query string and a header (they are text), never a body', async () => {
    const running = await startHttp({ plugins: [parts] });
    try {
      const post = (body: unknown) =>
        getJson(`${running.url}/api/v1/parts?n=7`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-count': '5' },
          body: JSON.stringify(body),
        });
      expect(await post({ n: 3 })).toMatchObject({ status: 200, body: { query: { n: 7 }, count: 5, body: { n: 3 } } });
      const refused = await post({ n: '3' });
      expect(refused.status).toBe(422);
      expect(refused.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { reason: 'schema_validation', location: 'body', field: 'n' } });
    } finally {
      await running.close();
    }
  });

  it('refuses, when the route is added, a headers schema naming a header with capitals (fastify lowercases them only for its own compiler)', async () => {
    const upper: FastifyPluginAsync = async (app) => {
      app.get('/upper', { schema: { headers: { type: 'object', properties: { 'X-Count': integer } } } }, async () => ({}));
    };
    await expect(startHttp({ plugins: [upper] })).rejects.toThrow(/"X-Count": name headers in lowercase/);
    // Named only in `required`: every request would be refused for lacking it.
    const required: FastifyPluginAsync = async (app) => {
      app.get('/required', { schema: { headers: { type: 'object', required: ['X-Trace'] } } }, async () => ({}));
    };
    await expect(startHttp({ plugins: [required] })).rejects.toThrow(/"X-Trace": name headers in lowercase/);
  });
});
