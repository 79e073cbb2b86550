import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

/**
 * POST /query stops a statement when its client leaves (an AbortSignal per request), except a
 * statement that never reads one: a prepared INSERT ... VALUES (SqlEngine.ignoresCancel) runs
 * without a signal, which changes nothing it does.
 */
describe('a client leaving POST /query', () => {
  let server: TestServer;
  const OPTIONS = { timeoutMs: 30_000, maxRows: 100, tenant: 'default' };
  const post = async (sql: string, params: unknown[] = []) => {
    const r = await fetch(`${server.baseUrl}/api/v1/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sql, params }),
    });
    return { status: r.status, text: await r.text() };
  };
  const errorCount = async (): Promise<number> => {
    const text = await (await fetch(`${server.baseUrl}/api/v1/metrics`, { headers: { authorization: `Bearer ${server.apiKey}` } })).text();
    const line = text.split('\n').find((l) => l.startsWith('svc_queries_total{status="error",database="default"}'));
    return Number(line?.split(' ')[1] ?? Number.NaN);
  };
  /** Sends POST /query on a raw connection and closes it once the server has the request. */
  const leave = async (sql: string, params: unknown[] = []): Promise<void> => {
    const body = JSON.stringify({ sql, params, timeout_ms: 600_000 });
    const { port } = new URL(server.baseUrl);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      `POST /api/v1/query HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.apiKey}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.destroy();
  };

  beforeAll(async () => {
    server = await startTestServer();
    expect((await post('CREATE TABLE ca (id BIGINT PRIMARY KEY, v TEXT)')).status).toBe(200);
  });
  afterAll(() => server?.close());

  it('ignoresCancel is true only for a prepared INSERT ... VALUES run before, outside a transaction', async () => {
    const insert = 'INSERT INTO ca (id, v) VALUES ($1, $2)';
    expect(server.sql.ignoresCancel(insert, OPTIONS)).toBe(false);
    expect((await post(insert, [1, 'a'])).status).toBe(200);
    expect(server.sql.ignoresCancel(insert, OPTIONS)).toBe(true);
    expect(server.sql.ignoresCancel(insert, { ...OPTIONS, transaction: { id: 'x' } })).toBe(false);
    const others = [
      'SELECT * FROM ca WHERE id = $1',
      'INSERT INTO ca (id, v) SELECT $1::bigint + 100, $2',
      'INSERT INTO ca (id, v) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING',
      'INSERT INTO ca (id, v) VALUES ($1, (SELECT max(v) FROM ca))',
      `INSERT INTO ca (id, v) VALUES ($1, $2); SELECT 1`,
      'EXPLAIN INSERT INTO ca (id, v) VALUES ($1, $2)',
    ];
    for (const [i, sql] of others.entries()) {
      await post(sql, [10 + i, 'b']);
      await post(sql, [20 + i, 'b']);
      expect(server.sql.ignoresCancel(sql, OPTIONS), sql).toBe(false);
    }
  });

  it('a long SELECT stops when its client leaves', async () => {
    const before = await errorCount();
    const started = Date.now();
    await leave('SELECT count(*) FROM generate_series(1, 500000000) AS s');
    // Cancelled: counted as a failed query long before the whole series (minutes) could finish.
    for (let waited = 0; (await errorCount()) === before && waited < 30_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await errorCount()).toBe(before + 1);
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('a prepared INSERT whose client leaves is still written, as before (a durable write is not cancelled)', async () => {
    const insert = 'INSERT INTO ca (id, v) VALUES ($1, $2)';
    expect(server.sql.ignoresCancel(insert, OPTIONS)).toBe(true);
    await leave(insert, [500, 'left']);
    let rows: unknown[] = [];
    for (let waited = 0; rows.length === 0 && waited < 10_000; waited += 50) {
      rows = (JSON.parse((await post('SELECT v FROM ca WHERE id = $1', [500])).text) as { data: unknown[] }).data;
      if (rows.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(rows).toEqual([{ v: 'left' }]);
  });
});
