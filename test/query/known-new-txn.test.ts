import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, bearer, query } from '../helpers/auth.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

describe('insertKnownNew vs an open transaction inserting the same new key', () => {
  let server: TestServer;
  let admin: Record<string, string>;
  beforeAll(async () => {
    server = await startTestServer();
    admin = bearer(server.apiKey);
  });
  afterAll(() => server?.close());

  for (const how of ['sql', 'rows', 'txnfirst-commit-then-outside'] as const) {
    it(`outside insert by ${how}`, async () => {
      const t = `k_${how.replaceAll('-', '_')}`;
      expect((await query(server.baseUrl, admin, `CREATE TABLE ${t} (id BIGINT PRIMARY KEY, v TEXT)`)).status).toBe(200);
      for (let i = 1; i <= 3; i++) expect((await query(server.baseUrl, admin, `INSERT INTO ${t} VALUES (${i}, 'a')`)).status).toBe(200);
      const begun = await api(server.baseUrl, '/transactions', { headers: admin, body: { isolation_level: 'repeatable_read' } });
      const id = begun.body.transaction_id as string;
      const inTxn = async (sql: string, params: unknown[]) => api(server.baseUrl, `/transactions/${id}/query`, { headers: admin, body: { sql, params } });
      expect((await inTxn(`INSERT INTO ${t} VALUES ($1, $2)`, [4, 'txn'])).status).toBe(200);
      let outside: number;
      if (how === 'rows') {
        const r = await fetch(`${server.baseUrl}/api/v1/tables/${t}/rows`, {
          method: 'POST',
          headers: { ...admin, 'content-type': 'application/json' },
          body: JSON.stringify({ id: 4, v: 'out' }),
        });
        outside = r.status;
      } else {
        outside = (await query(server.baseUrl, admin, `INSERT INTO ${t} VALUES (4, 'out')`)).status;
      }
      const commit = await api(server.baseUrl, `/transactions/${id}/commit`, { method: 'POST', headers: admin });
      const rows = (await query(server.baseUrl, admin, `SELECT id, v FROM ${t} WHERE id = 4 LIMIT 10`)).body.data as unknown[];
      // exactly one of them succeeded
      expect(rows.length).toBe(1);
      expect([outside < 300, commit.status < 300].filter(Boolean).length, `outside ${outside} commit ${commit.status} ${JSON.stringify(commit.body)}`).toBe(1);
      // and a later insert above continues fine, a repeat is refused
      expect((await query(server.baseUrl, admin, `INSERT INTO ${t} VALUES (4, 'again')`)).status).toBe(409);
    });
  }
});
