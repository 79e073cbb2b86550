import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, query } from '../helpers/auth.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

/**
 * fast-point.ts hands the name remembered for a raw parameter to getRowSync (1a375ef). A parameter
 * whose key depends on the clock ('today') keeps yesterday's name: the cache entry of one key then
 * holds another key's row, and an ordinary parameter naming that key reads the wrong row.
 */
describe('remembered key names and clock-dependent parameters', () => {
  let server: TestServer;
  let admin: Record<string, string>;
  beforeAll(async () => {
    server = await startTestServer();
    admin = bearer(server.apiKey);
  });
  afterAll(() => server?.close());
  const post = async (sql: string, params: unknown[], metadata = false) => {
    const r = await fetch(`${server.baseUrl}/api/v1/query`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ sql, params, ...(metadata ? { include_metadata: true } : {}) }),
    });
    return JSON.parse(await r.text()).data as unknown[];
  };

  it("a row read for 'today' after midnight is not cached under yesterday's key", async () => {
    expect((await query(server.baseUrl, admin, 'CREATE TABLE daily (d DATE PRIMARY KEY, n INT)')).status).toBe(200);
    expect((await query(server.baseUrl, admin, "INSERT INTO daily VALUES ('2026-01-01', 1), ('2026-01-02', 2)")).status).toBe(200);
    const sql = 'SELECT n FROM daily WHERE d = $1';
    const realNow = Date.now;
    const day1 = Date.UTC(2026, 0, 1, 12);
    try {
      Date.now = () => day1;
      expect(await post(sql, ['today'])).toEqual([{ n: 1 }]);
      // A write to day 1's row drops its cache entry.
      expect((await query(server.baseUrl, admin, "UPDATE daily SET n = 10 WHERE d = '2026-01-01'")).status).toBe(200);
      Date.now = () => day1 + 86_400_000;
      // Day 2: 'today' is 2026-01-02.
      expect(await post(sql, ['today'], true)).toEqual([{ n: 2 }]);
    } finally {
      Date.now = realNow;
    }
    // An ordinary parameter naming day 1.
    expect(await post(sql, ['2026-01-01'])).toEqual([{ n: 10 }]);
    expect(await post(sql + ' LIMIT 1000', ['2026-01-01'])).toEqual([{ n: 10 }]);
  });
});
