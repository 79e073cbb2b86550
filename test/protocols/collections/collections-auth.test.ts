import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, eventually, newKey, query, signJwt, type SigningKey } from '../../helpers/auth.js';
import { startTestServer, type TestServer } from '../../helpers/sql-server.js';
import { expectError, v1 } from './client.js';

const SECRET = 'a-collections-secret-of-32-characters-at-least';
const hs256: SigningKey = { alg: 'HS256', key: new TextEncoder().encode(SECRET) };
const DAY_MS = 86_400_000;

/** The collection interface under the same credentials, roles, tenants and rate limits as /api/v1. */
describe('collections: credentials, roles, tenants, rate limits', () => {
  let server: TestServer;
  let reader = '';
  let acme = '';
  let globex = '';
  let limited = '';
  beforeAll(async () => {
    server = await startTestServer({ env: { SVC_JWT_SECRET: SECRET, SVC_RATE_LIMIT_WINDOW_MS: String(DAY_MS) } });
    reader = (await newKey(server.dataDir, { role: 'read_only' })).key;
    acme = (await newKey(server.dataDir, { role: 'read_write', tenant: 'acme' })).key;
    globex = (await newKey(server.dataDir, { role: 'read_write', tenant: 'globex' })).key;
    limited = (await newKey(server.dataDir, { role: 'read_write', rateLimitRequestsMax: 3 })).key;
    // The server reads new keys from the data dir within about a second.
    await eventually(async () => (await v1(server.baseUrl, '/openapi.json', { key: globex })).status === 200);
  });
  afterAll(() => server?.close());

  it('asks for credentials and takes API keys in X-API-Key or Authorization, and JWTs', async () => {
    expectError(await v1(server.baseUrl, '/api/notes'), 401, 'AUTHENTICATION_REQUIRED');
    expectError(await v1(server.baseUrl, '/api/notes', { key: 'wrong' }), 401, 'AUTHENTICATION_FAILED');
    expectError(await v1(server.baseUrl, '/openapi.json'), 401, 'AUTHENTICATION_REQUIRED');
    expect((await v1(server.baseUrl, '/api/notes', { key: server.apiKey })).status).toBe(200);
    expect((await v1(server.baseUrl, '/api/notes', { headers: bearer(server.apiKey) })).status).toBe(200);
    const token = await signJwt(hs256, { sub: 'user-1', role: 'read_write' }, 600);
    const created = await v1(server.baseUrl, '/api/notes', { headers: bearer(token), body: { name: 'by jwt' } });
    expect(created.status).toBe(201);
    const expired = await signJwt(hs256, { sub: 'user-1', role: 'read_write' }, -3600);
    expectError(await v1(server.baseUrl, '/api/notes', { headers: bearer(expired), body: { name: 'late' } }), 401, 'AUTHENTICATION_FAILED');
  });

  it('a read_only key reads and is refused every write (403), nothing written', async () => {
    const seeded = (await v1(server.baseUrl, '/api/memos', { key: server.apiKey, body: { name: 'seed' } })).body;
    expect((await v1(server.baseUrl, '/api/memos', { key: reader })).body).toEqual([seeded]);
    expect((await v1(server.baseUrl, `/api/memos/${seeded.id}`, { key: reader })).body).toEqual(seeded);
    expect((await v1(server.baseUrl, '/openapi.json', { key: reader })).status).toBe(200);
    const writes = [
      v1(server.baseUrl, '/api/memos', { key: reader, body: { name: 'x' } }),
      v1(server.baseUrl, '/api/brand_new', { key: reader, body: { name: 'x' } }),
      v1(server.baseUrl, `/api/memos/${seeded.id}`, { key: reader, method: 'PUT', body: { name: 'x' } }),
      v1(server.baseUrl, `/api/memos/${seeded.id}`, { key: reader, method: 'PATCH', body: { name: 'x' } }),
      v1(server.baseUrl, `/api/memos/${seeded.id}`, { key: reader, method: 'DELETE' }),
    ];
    for (const write of await Promise.all(writes)) expectError(write, 403, 'AUTHORIZATION_DENIED');
    expect((await v1(server.baseUrl, '/api/memos', { key: server.apiKey })).body).toEqual([seeded]);
    const tables = await query(server.baseUrl, bearer(server.apiKey), `SELECT count(*) AS n FROM memos`);
    expect(tables.body.data).toEqual([{ n: 1 }]);
    expect((await query(server.baseUrl, bearer(server.apiKey), `SELECT * FROM brand_new`)).status).toBe(404);
  });

  it('each tenant has its own collections; X-Tenant-ID picks one for an admin only', async () => {
    const a = (await v1(server.baseUrl, '/api/projects', { key: acme, body: { name: 'acme project' } })).body;
    const g = (await v1(server.baseUrl, '/api/projects', { key: globex, body: { name: 'globex project' } })).body;
    expect((await v1(server.baseUrl, '/api/projects', { key: acme })).body).toEqual([a]);
    expect((await v1(server.baseUrl, '/api/projects', { key: globex })).body).toEqual([g]);
    expectError(await v1(server.baseUrl, `/api/projects/${g.id}`, { key: acme }), 404, 'NOT_FOUND');
    expectError(await v1(server.baseUrl, `/api/projects/${g.id}`, { key: acme, method: 'DELETE' }), 404, 'NOT_FOUND');
    expectError(await v1(server.baseUrl, '/api/projects', { key: acme, headers: { 'x-tenant-id': 'globex' } }), 403, 'AUTHORIZATION_DENIED');
    expect((await v1(server.baseUrl, '/api/projects', { key: server.apiKey, headers: { 'x-tenant-id': 'globex' } })).body).toEqual([g]);
    // The default tenant has no such collection.
    expect((await v1(server.baseUrl, '/api/projects', { key: server.apiKey })).body).toEqual([]);
    const acmeDoc = (await v1(server.baseUrl, '/openapi.json', { key: acme })).body;
    expect(Object.keys(acmeDoc.paths)).toContain('/api/projects');
    expect(Object.keys(acmeDoc.paths)).not.toContain('/api/memos');
  });

  it('counts requests against the credential and answers 429 past its limit', async () => {
    const first = await v1(server.baseUrl, '/api/quota', { key: limited });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).toBe('3');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('2');
    expect((await v1(server.baseUrl, '/api/quota', { key: limited, body: { name: 'q' } })).status).toBe(201);
    expect((await v1(server.baseUrl, '/openapi.json', { key: limited })).status).toBe(200);
    const refused = await v1(server.baseUrl, '/api/quota', { key: limited, body: { name: 'one too many' } });
    expectError(refused, 429, 'RATE_LIMIT_EXCEEDED');
    expect(refused.body.details).toMatchObject({ limit: 3, remaining: 0 });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await v1(server.baseUrl, '/api/quota', { key: server.apiKey })).body.map((r: { name: string }) => r.name)).toEqual(['q']);
  });
});

describe('collections: SVC_COLLECTIONS_AUTO_CREATE=false', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { SVC_COLLECTIONS_AUTO_CREATE: 'false' } });
  });
  afterAll(() => server?.close());

  it('a missing collection is 404 for every method; one made with SQL works', async () => {
    const key = server.apiKey;
    const id = '3f0e7a52-1c84-4f5a-9d0b-6a2f1e9c4b11';
    expectError(await v1(server.baseUrl, '/api/later', { key, body: { name: 'x' } }), 404, 'NOT_FOUND');
    expectError(await v1(server.baseUrl, `/api/later/${id}`, { key, method: 'PUT', body: { name: 'x' } }), 404, 'NOT_FOUND');
    expectError(await v1(server.baseUrl, '/api/later', { key }), 404, 'NOT_FOUND');
    expect((await query(server.baseUrl, bearer(key), 'SELECT * FROM later')).status).toBe(404);
    const made = await query(
      server.baseUrl,
      bearer(key),
      `CREATE TABLE later (id UUID PRIMARY KEY DEFAULT gen_random_uuid(), name TEXT NOT NULL, extra JSONB)`,
    );
    expect(made.status).toBe(200);
    const created = await v1(server.baseUrl, '/api/later', { key, body: { name: 'x', more: true } });
    expect(created.status).toBe(201);
    expect((await v1(server.baseUrl, '/api/later', { key })).body).toEqual([created.body]);
  });
});
