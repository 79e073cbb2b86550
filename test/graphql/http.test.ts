import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newKey } from '../helpers/auth.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { data, gql, sql } from './client.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ env: { SVC_GRAPHQL_DEPTH_MAX: '4', SVC_GRAPHQL_COMPLEXITY_MAX: '500' } });
  await sql(server, 'CREATE TABLE items (id INT PRIMARY KEY, label TEXT, parent_id INT REFERENCES items(id))');
  await sql(server, "INSERT INTO items VALUES (1, 'one', NULL), (2, 'two', 1)");
});

afterAll(async () => {
  await server?.close();
});

const get = async (params: Record<string, string>, headers: Record<string, string> = {}) => {
  const response = await fetch(`${server.baseUrl}/graphql?${new URLSearchParams(params)}`, {
    headers: { authorization: `Bearer ${server.apiKey}`, ...headers },
  });
  return { status: response.status, type: response.headers.get('content-type') ?? '', allow: response.headers.get('allow'), body: await response.json() };
};

describe('GraphQL over HTTP', () => {
  it('runs a batch (a JSON array of operations) in one POST', async () => {
    const reply = await gql(server, [
      { query: '{ items(order_by: {id: asc}) { id } }' },
      { query: 'query($id: Int!) { items_by_pk(id: $id) { label } }', variables: { id: 2 } },
      { query: '{ nope }' },
    ]);
    expect(reply.status).toBe(200);
    expect(reply.body[0]).toEqual({ data: { items: [{ id: 1 }, { id: 2 }] } });
    expect(reply.body[1]).toEqual({ data: { items_by_pk: { label: 'two' } } });
    expect(reply.body[2].errors[0].extensions.code).toBe('TABLE_NOT_FOUND');
  });

  it('answers GET, and refuses a mutation over GET with 405', async () => {
    const ok = await get({ query: 'query($id: Int!) { items_by_pk(id: $id) { label } }', variables: JSON.stringify({ id: 1 }) });
    expect(ok).toMatchObject({ status: 200, body: { data: { items_by_pk: { label: 'one' } } } });
    const mutation = await get({ query: 'mutation { x }' });
    expect(mutation.status).toBe(405);
    expect(mutation.allow).toBe('POST');
  });

  it('accepts application/graphql bodies and refuses unacceptable Accept with 406', async () => {
    const raw = await fetch(`${server.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/graphql', authorization: `Bearer ${server.apiKey}` },
      body: '{ items(limit: 1) { id } }',
    });
    expect(await raw.json()).toEqual({ data: { items: [{ id: 1 }] } });
    const refused = await gql(server, '{ items { id } }', undefined, { accept: 'text/html' });
    expect(refused.status).toBe(406);
  });

  it('codes errors in extensions.code, with GraphQL-over-HTTP statuses', async () => {
    const cases: [string, Record<string, unknown> | undefined, string][] = [
      ['{ items { id ', undefined, 'GRAPHQL_PARSE_FAILED'],
      ['{ items { nope } }', undefined, 'GRAPHQL_VALIDATION_FAILED'],
      ['query($id: Int!) { items_by_pk(id: $id) { id } }', { id: 'abc' }, 'VALIDATION_ERROR'],
      ['{ items(where: {id: {_eq: null}}) { id } }', undefined, 'VALIDATION_ERROR'],
      ['{ dropped_table { id } }', undefined, 'TABLE_NOT_FOUND'],
    ];
    for (const [query, variables, code] of cases) {
      const legacy = await gql(server, query, variables);
      expect(legacy.body.errors[0].extensions.code, query).toBe(code);
      const modern = await gql(server, query, variables, { accept: 'application/graphql-response+json' });
      expect(modern.body.errors[0].extensions.code, query).toBe(code);
      // Request errors (nothing ran) are 400 with the new media type, 200 with application/json.
      const ran = code === 'VALIDATION_ERROR' && query.includes('_eq: null');
      expect(modern.status, query).toBe(ran ? 200 : 400);
      expect(legacy.status, query).toBe(200);
    }
    const missing = await gql(server, { variables: {} });
    expect(missing.status).toBe(400);
    // Still serving after all of it.
    expect(await data(server, '{ items_by_pk(id: 1) { id } }')).toEqual({ items_by_pk: { id: 1 } });
  });

  it('refuses a query deeper than SVC_GRAPHQL_DEPTH_MAX and one costlier than SVC_GRAPHQL_COMPLEXITY_MAX before running it', async () => {
    const deep = await gql(server, '{ items(limit: 1) { items { items { items { items { id } } } } } }');
    expect(deep.body.errors[0].extensions).toMatchObject({ code: 'LIMIT_EXCEEDED', details: { limit: 'depth' } });
    const costly = await gql(server, '{ items { id items_by_parent_id { id } } }');
    expect(costly.body.errors[0].extensions).toMatchObject({ code: 'LIMIT_EXCEEDED', details: { limit: 'complexity' } });
    const cheap = await data(server, '{ items(limit: 2) { id items_by_parent_id(limit: 2) { id } } }');
    expect(cheap.items).toHaveLength(2);
  });

  it('answers 401 with AUTHENTICATION_REQUIRED in extensions.code without credentials', async () => {
    const reply = await gql(server, '{ items { id } }', undefined, { authorization: '' });
    expect(reply.status).toBe(401);
    expect(reply.body.errors[0].extensions.code).toBe('AUTHENTICATION_REQUIRED');
    const bad = await gql(server, '{ items { id } }', undefined, { authorization: 'Bearer wrong' });
    expect(bad.body.errors[0].extensions.code).toBe('AUTHENTICATION_FAILED');
  });

  it('lets a read_only key query but not run a mutation (AUTHORIZATION_DENIED)', async () => {
    const { key } = await newKey(server.dataDir, { role: 'read_only' });
    const headers = { authorization: `Bearer ${key}` };
    await expect.poll(async () => (await gql(server, '{ items(limit: 1) { id } }', undefined, headers)).status, { timeout: 10_000 }).toBe(200);
    const mutation = await gql(server, 'mutation { insert_items_one(object: {id: 9}) { id } }', undefined, headers);
    expect(mutation.status).toBe(403);
    expect(mutation.body.errors[0].extensions.code).toBe('AUTHORIZATION_DENIED');
  });

  it('serves each tenant its own schema (X-Tenant-ID)', async () => {
    await sql(server, 'CREATE TABLE secrets (id INT PRIMARY KEY, s TEXT)', 'acme');
    await sql(server, "INSERT INTO secrets VALUES (1, 'acme only')", 'acme');
    const acme = await data(server, '{ secrets { s } }', undefined, { 'x-tenant-id': 'acme' });
    expect(acme.secrets).toEqual([{ s: 'acme only' }]);
    const other = await gql(server, '{ secrets { s } }');
    expect(other.body.errors[0].extensions.code).toBe('TABLE_NOT_FOUND');
    const acmeItems = await gql(server, '{ items { id } }', undefined, { 'x-tenant-id': 'acme' });
    expect(acmeItems.body.errors[0].extensions.code).toBe('TABLE_NOT_FOUND');
  });

  it('serves GraphiQL at /graphiql', async () => {
    const page = await fetch(`${server.baseUrl}/graphiql`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('GraphiQL');
  });
});

describe('GraphQL settings', () => {
  it('turns GraphiQL and introspection off, and caps rows at SVC_MAX_RESULT_ROWS', async () => {
    const off = await startTestServer({ env: { SVC_GRAPHQL_GRAPHIQL: 'false', SVC_GRAPHQL_INTROSPECTION: 'false', SVC_MAX_RESULT_ROWS: '2' } });
    try {
      await sql(off, 'CREATE TABLE many (id INT PRIMARY KEY)');
      await sql(off, 'INSERT INTO many VALUES (1), (2), (3)');
      // Rows are capped like /query's, and the answer says so.
      const capped = await gql(off, '{ many { id } }');
      expect(capped.body).toEqual({ data: { many: [{ id: 1 }, { id: 2 }] }, extensions: { truncated: true, max_result_rows: 2 } });
      expect((await fetch(`${off.baseUrl}/graphiql`)).status).toBe(404);
      const reply = await gql(off, '{ __schema { types { name } } }');
      expect(reply.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
      const on = await gql(server, '{ __schema { queryType { name } } }');
      expect(on.body.data.__schema.queryType.name).toBe('Query');
    } finally {
      await off.close();
    }
  });
});
