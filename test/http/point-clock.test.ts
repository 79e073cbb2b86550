import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TENANT } from '../../core/catalog.js';
import { bearer, query } from '../helpers/auth.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

describe('point SELECT with a parameter whose value depends on the clock', () => {
  let server: TestServer;
  let admin: Record<string, string>;
  beforeAll(async () => {
    server = await startTestServer();
    admin = bearer(server.apiKey);
  });
  afterAll(() => server?.close());
  const post = async (sql: string, params: unknown[]) => {
    const r = await fetch(`${server.baseUrl}/api/v1/query`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ sql, params }),
    });
    return JSON.parse(await r.text()).data as unknown[];
  };

  for (const [type, word] of [
    ['DATE', 'today'],
    ['DATE', 'tomorrow'],
    ['TIMESTAMP', 'today'],
  ] as const) {
    it(`${type} key, parameter '${word}', across midnight`, async () => {
      const t = `daily_${type.toLowerCase()}_${word}`;
      expect((await query(server.baseUrl, admin, `CREATE TABLE ${t} (d ${type} PRIMARY KEY, n INT)`)).status).toBe(200);
      expect((await query(server.baseUrl, admin, `INSERT INTO ${t} VALUES ('2026-01-01', 1), ('2026-01-02', 2), ('2026-01-03', 3)`)).status).toBe(200);
      const sql = `SELECT n FROM ${t} WHERE d = $1`;
      const realNow = Date.now;
      const day1 = Date.UTC(2026, 0, 1, 12);
      try {
        Date.now = () => day1;
        const a = await post(sql, [word]);
        const b = await post(sql, [word]);
        const fastDay1 = server.sql.pointSelect(sql, { tenant: DEFAULT_TENANT, params: [word], timeoutMs: 10_000, maxRows: 10 }) !== undefined;
        Date.now = () => day1 + 86_400_000;
        const c = await post(sql, [word]);
        const oracle = await post(sql + ' LIMIT 1000', [word]);
        expect({ fastDay1, a, b }).toEqual({ fastDay1: true, a: b, b });
        expect(c).toEqual(oracle);
      } finally {
        Date.now = realNow;
      }
    });
  }
});
