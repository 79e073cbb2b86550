import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Projections } from '../../projections/index.js';
import { apiCall, apiSql } from '../helpers/api-calls.js';
import { holdApply, within } from '../helpers/hold-apply.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

/**
 * GET /tables/{t}/rows/{id} reads by key without SQL (query/point-read.ts) and, like every read,
 * waits at the read barrier while a write answered before it is not applied. Its route gives that
 * wait no deadline; it now ends at the default statement timeout (30 s, or SVC_QUERY_TIMEOUT_MS_MAX
 * when lower: what the route's SQL path runs with; here the maximum is set to 3 s) with the error a
 * SELECT timing out there gets: 504 QUERY_TIMEOUT in the usual envelope,
 * while the server goes on answering other requests. Before, the GET waited for as long as the
 * apply was held. A real server; the tables projection's apply held (test/helpers/hold-apply.ts).
 */
/** SVC_QUERY_TIMEOUT_MS_MAX of this server: the default timeout of a statement (and of GET row's wait) is at most this. */
const TIMEOUT_MS_MAX = 3_000;

describe('GET row behind a held tables apply: the default statement timeout', () => {
  let server: TestServer;
  let projections: Projections;

  beforeAll(async () => {
    server = await startTestServer({ env: { SVC_QUERY_TIMEOUT_MS_MAX: String(TIMEOUT_MS_MAX) } });
    // The server's projections, to hold their apply (the engine keeps them in its deps).
    projections = (server.sql as unknown as { deps: { projections: Projections } }).deps.projections;
    await apiSql(server, 'CREATE TABLE r (id INT PRIMARY KEY, v INT NOT NULL)');
    await apiSql(server, 'CREATE TABLE other (id INT PRIMARY KEY)');
    await apiSql(server, 'INSERT INTO r VALUES (1, 10)');
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers 504 QUERY_TIMEOUT after the timeout, serves other requests meanwhile, and the row once applied', async () => {
    // Read (and cached) before the write: a GET that did not wait would answer the old row.
    expect((await apiCall(server, 'GET', '/tables/r/rows/1')).body.data).toEqual({ id: 1, v: 10 });
    const release = holdApply(projections, 'tables');
    try {
      // Answered once durable: the apply is held, so the read barrier is behind.
      expect((await apiCall(server, 'PATCH', '/tables/r/rows/1', { updates: { v: 11 } })).status).toBe(200);
      expect(projections.readBarrier.tablesBehind).toBe(true);
      const started = Date.now();
      const get = apiCall(server, 'GET', '/tables/r/rows/1');
      expect(await within(get, 1000)).toBe('pending');
      // The server keeps serving: writes are answered (they do not wait at the barrier), and so is its health.
      for (let id = 1; id <= 5; id++) expect((await apiCall(server, 'POST', '/tables/other/rows', { id })).status).toBeLessThan(300);
      expect((await apiCall(server, 'GET', '/health')).status).toBe(200);
      expect(await within(get, 0)).toBe('pending');

      const answer = await get;
      const elapsedMs = Date.now() - started;
      expect(answer.status).toBe(504);
      // The error envelope every route answers (docs/errors.md), as a SELECT timing out at the barrier gets it.
      expect(answer.body).toMatchObject({
        error: { code: 'QUERY_TIMEOUT', message: 'canceling statement due to statement timeout', details: { reason: 'timeout' } },
      });
      expect(elapsedMs).toBeGreaterThanOrEqual(TIMEOUT_MS_MAX);
      expect(elapsedMs).toBeLessThan(TIMEOUT_MS_MAX + 10_000);
      expect(projections.tablesApplied.waiting).toBe(0);
    } finally {
      release();
    }
    expect((await apiCall(server, 'GET', '/tables/r/rows/1')).body.data).toEqual({ id: 1, v: 11 });
    expect((await apiSql(server, 'SELECT count(*)::int AS n FROM other'))[0]).toEqual({ n: 5 });
  }, 60_000);
});
