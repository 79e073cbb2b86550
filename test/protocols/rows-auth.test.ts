import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, bearer, eventually, newKey } from '../helpers/auth.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

/** Tables and rows under roles and tenants: read_only reads and is refused writes; tenants see their own tables. */
describe('tables and rows: roles and tenants', () => {
  let server: TestServer;
  let reader = '';
  let acme = '';
  let globex = '';
  beforeAll(async () => {
    server = await startTestServer();
    reader = (await newKey(server.dataDir, { role: 'read_only' })).key;
    acme = (await newKey(server.dataDir, { role: 'read_write', tenant: 'acme' })).key;
    globex = (await newKey(server.dataDir, { role: 'read_write', tenant: 'globex' })).key;
    await eventually(async () => (await api(server.baseUrl, '/tables', { headers: bearer(globex) })).status === 200);
  });
  afterAll(() => server?.close());

  const table = {
    name: 'notes',
    columns: [
      { name: 'id', type: 'INTEGER', primary_key: true },
      { name: 'body', type: 'TEXT' },
    ],
  };

  it('read_only lists and reads, and every write is 403', async () => {
    const admin = bearer(server.apiKey);
    expect((await api(server.baseUrl, '/tables', { headers: admin, body: table })).status).toBe(201);
    expect((await api(server.baseUrl, '/tables/notes/rows', { headers: admin, body: { row: { id: 1, body: 'a' } } })).status).toBe(201);
    const ro = bearer(reader);
    expect((await api(server.baseUrl, '/tables/notes/rows', { headers: ro })).body.data).toEqual([{ id: 1, body: 'a' }]);
    expect((await api(server.baseUrl, '/tables/notes/rows/1', { headers: ro })).status).toBe(200);
    expect((await api(server.baseUrl, '/tables/notes', { headers: ro })).status).toBe(200);
    const writes = [
      api(server.baseUrl, '/tables/notes/rows', { headers: ro, body: { row: { id: 2, body: 'b' } } }),
      api(server.baseUrl, '/tables/notes/rows', { method: 'PUT', headers: ro, body: { filter: 'id = 1', updates: { body: 'x' } } }),
      api(server.baseUrl, '/tables/notes/rows', { method: 'DELETE', headers: ro, body: { filter: 'true' } }),
      api(server.baseUrl, '/tables/notes/rows/1', { method: 'PATCH', headers: ro, body: { updates: { body: 'x' } } }),
      api(server.baseUrl, '/tables/notes/rows/1', { method: 'DELETE', headers: ro }),
      api(server.baseUrl, '/tables', { headers: ro, body: { ...table, name: 'other' } }),
      api(server.baseUrl, '/tables/notes', { method: 'PATCH', headers: ro, body: { operations: [{ operation: 'drop_column', column_name: 'body' }] } }),
      api(server.baseUrl, '/tables/notes', { method: 'DELETE', headers: ro }),
    ];
    for (const write of await Promise.all(writes)) {
      expect(write.status).toBe(403);
      expect(write.body.error.code).toBe('AUTHORIZATION_DENIED');
    }
    expect((await api(server.baseUrl, '/tables/notes/rows', { headers: ro })).body.data).toEqual([{ id: 1, body: 'a' }]);
  });

  it('each tenant has its own tables of the same name and rows', async () => {
    for (const [key, body] of [
      [acme, 'from acme'],
      [globex, 'from globex'],
    ] as const) {
      expect((await api(server.baseUrl, '/tables', { headers: bearer(key), body: table })).status).toBe(201);
      expect((await api(server.baseUrl, '/tables/notes/rows', { headers: bearer(key), body: { row: { id: 1, body } } })).status).toBe(201);
    }
    expect((await api(server.baseUrl, '/tables/notes/rows/1', { headers: bearer(acme) })).body.data).toEqual({ id: 1, body: 'from acme' });
    expect((await api(server.baseUrl, '/tables/notes/rows/1', { headers: bearer(globex) })).body.data).toEqual({ id: 1, body: 'from globex' });
    const crossing = await api(server.baseUrl, '/tables/notes/rows', { headers: { ...bearer(acme), 'x-tenant-id': 'globex' } });
    expect(crossing.status).toBe(403);
    // The admin picks a tenant with X-Tenant-ID.
    const viaAdmin = await api(server.baseUrl, '/tables/notes/rows', { headers: { ...bearer(server.apiKey), 'x-tenant-id': 'globex' } });
    expect(viaAdmin.body.data).toEqual([{ id: 1, body: 'from globex' }]);
    expect((await api(server.baseUrl, '/tables', { headers: bearer(acme) })).body.tables.map((t: { name: string }) => t.name)).toEqual(['notes']);
    // Table and row requests count as queries in svc_queries_total, labelled with their tenant.
    const metrics = await (await fetch(`${server.baseUrl}/api/v1/metrics`, { headers: bearer(server.apiKey) })).text();
    const acmeQueries = /svc_queries_total\{status="success",database="acme"\} (\d+)/.exec(metrics);
    expect(Number(acmeQueries?.[1])).toBeGreaterThanOrEqual(4);
    expect(metrics).toMatch(/svc_queries_total\{status="error",database="default"\} [1-9]/); // the read_only refusals
  });
});
