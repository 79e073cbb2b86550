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
  const post = async (sql: string, params: unknown[], metadata = false) => {
    const r = await fetch(`${server.baseUrl}/api/v1/query`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ sql, params, ...(metadata ? { include_metadata: true } : {}) }),
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

  /**
   * fast-point.ts hands the name remembered for a raw parameter to getRowSync (1a375ef). A parameter
   * whose key depends on the clock ('today') keeps yesterday's name: the cache entry of one key then
   * holds another key's row, and an ordinary parameter naming that key reads the wrong row.
   */
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

  const get = async (id: string) => {
    const r = await fetch(`${server.baseUrl}/api/v1/tables/daily_get/rows/${id}`, { headers: admin });
    return { status: r.status, text: await r.text() };
  };

  it('GET /tables/daily_get/rows/today follows the date', async () => {
    expect((await query(server.baseUrl, admin, 'CREATE TABLE daily_get (d DATE PRIMARY KEY, n INT)')).status).toBe(200);
    expect((await query(server.baseUrl, admin, "INSERT INTO daily_get VALUES ('2026-01-01', 1), ('2026-01-02', 2)")).status).toBe(200);
    const realNow = Date.now;
    const day1 = Date.UTC(2026, 0, 1, 12);
    try {
      Date.now = () => day1;
      const a = await get('today');
      expect(a.text).toContain('"n":1');
      Date.now = () => day1 + 86_400_000;
      const b = await get('today');
      expect(b.text).toContain('"n":2');
    } finally {
      Date.now = realNow;
    }
  });
});
