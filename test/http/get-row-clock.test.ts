import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, query } from '../helpers/auth.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

describe('GET row by a clock-dependent id text', () => {
  let server: TestServer;
  let admin: Record<string, string>;
  beforeAll(async () => {
    server = await startTestServer();
    admin = bearer(server.apiKey);
  });
  afterAll(() => server?.close());
  const get = async (id: string) => {
    const r = await fetch(`${server.baseUrl}/api/v1/tables/daily/rows/${id}`, { headers: admin });
    return { status: r.status, text: await r.text() };
  };
  it('GET /tables/daily/rows/today follows the date', async () => {
    expect((await query(server.baseUrl, admin, 'CREATE TABLE daily (d DATE PRIMARY KEY, n INT)')).status).toBe(200);
    expect((await query(server.baseUrl, admin, "INSERT INTO daily VALUES ('2026-01-01', 1), ('2026-01-02', 2)")).status).toBe(200);
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
