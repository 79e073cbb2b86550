import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, eventually, newKey } from '../helpers/auth.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

/**
 * The plan cache's key of a plain SELECT is remembered for the last text and tenant
 * (SqlEngine.plainKey), and a cached plan is checked against the tables it read (PlanCache.get):
 * the same text sent by two tenants in turn, whose tables of the same name differ, must each read
 * their own table, through the point SELECT and the general path, and a plan must follow DDL
 * (DROP + CREATE with other columns) and a table that grew past its planned row count.
 */
describe('POST /query: one SELECT text, two tenants, changing tables', () => {
  let server: TestServer;
  let acme = '';
  const post = async (credential: string, sql: string, params: unknown[] = []) => {
    const r = await fetch(`${server.baseUrl}/api/v1/query`, {
      method: 'POST',
      headers: { ...bearer(credential), 'content-type': 'application/json' },
      body: JSON.stringify({ sql, params }),
    });
    return { status: r.status, body: (await r.json()) as { data?: unknown[]; error?: { code: string } } };
  };

  beforeAll(async () => {
    server = await startTestServer();
    acme = (await newKey(server.dataDir, { role: 'read_write', tenant: 'acme' })).key;
    await eventually(async () => (await post(acme, 'SELECT 1')).status === 200);
    expect((await post(server.apiKey, 'CREATE TABLE t (id BIGINT PRIMARY KEY, v TEXT)')).status).toBe(200);
    expect((await post(server.apiKey, "INSERT INTO t SELECT g, 'default-' || g FROM generate_series(1, 20) g")).status).toBe(200);
    expect((await post(acme, 'CREATE TABLE t (id BIGINT PRIMARY KEY, v TEXT, w INTEGER)')).status).toBe(200);
    expect((await post(acme, "INSERT INTO t SELECT g, 'acme-' || g, g FROM generate_series(1, 10) g")).status).toBe(200);
  });
  afterAll(() => server?.close());

  it('each tenant reads its own table through the same texts, in any order', async () => {
    const texts = ['SELECT * FROM t WHERE id = $1', 'SELECT v FROM t WHERE id = $1', 'SELECT count(*) AS n FROM t WHERE id <= $1'];
    for (let step = 0; step < 120; step++) {
      const tenant = (step * 7) % 3 === 0 ? 'acme' : 'default';
      const sql = texts[(step * 5) % texts.length]!;
      const id = 1 + ((step * 13) % 25);
      const { status, body } = await post(tenant === 'acme' ? acme : server.apiKey, sql, [id]);
      expect(status, `step ${step}`).toBe(200);
      const rows = tenant === 'acme' ? 10 : 20;
      const present = id <= rows;
      const v = `${tenant}-${id}`;
      const expected = sql.startsWith('SELECT count')
        ? [{ n: Math.min(id, rows) }]
        : !present
          ? []
          : sql.startsWith('SELECT v')
            ? [{ v }]
            : [tenant === 'acme' ? { id, v, w: id } : { id, v }];
      expect(body.data, `step ${step}: ${tenant} ${sql} ${id}`).toEqual(expected);
    }
  });

  it('a cached plan follows DROP + CREATE and a table that grew', async () => {
    const sql = 'SELECT * FROM t WHERE id = $1';
    expect((await post(server.apiKey, sql, [3])).body.data).toEqual([{ id: 3, v: 'default-3' }]);
    expect((await post(server.apiKey, 'DROP TABLE t')).status).toBe(200);
    expect((await post(server.apiKey, sql, [3])).body.error?.code).toBe('TABLE_NOT_FOUND');
    expect((await post(server.apiKey, 'CREATE TABLE t (id BIGINT PRIMARY KEY, x BOOLEAN)')).status).toBe(200);
    expect((await post(server.apiKey, sql, [3])).body.data).toEqual([]);
    expect((await post(server.apiKey, 'INSERT INTO t SELECT g, g % 2 = 0 FROM generate_series(1, 500) g')).status).toBe(200);
    expect((await post(server.apiKey, sql, [4])).body.data).toEqual([{ id: 4, x: true }]);
    expect((await post(acme, sql, [4])).body.data).toEqual([{ id: 4, v: 'acme-4', w: 4 }]);
  });
});
