import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../bin/app.js';
import type { ServeHandle } from '../../bin/app-types.js';
import { tempDir } from '../helpers/stack.js';
import { getJson, testConfig } from '../protocols/helpers.js';

const KEY = 'test-key-123';

describe('POST /api/v1/query over a real server', () => {
  let server: ServeHandle;
  let remove: () => Promise<void>;
  const post = (body: unknown, headers: Record<string, string> = { authorization: `Bearer ${KEY}` }) =>
    getJson(`${server.httpUrl}/api/v1/query`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  beforeAll(async () => {
    const dir = await tempDir('svcdb-http-sql-');
    remove = dir.remove;
    server = await startServer(testConfig({ data: dir.dir, 'api-key': KEY, 'log-level': 'silent' }), pino({ level: 'silent' }));
  });
  afterAll(async () => {
    await server.close('test');
    await remove();
  });

  it('requires and checks credentials', async () => {
    const none = await post({ sql: 'SELECT 1' }, {});
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('AUTHENTICATION_REQUIRED');
    const wrong = await post({ sql: 'SELECT 1' }, { 'x-api-key': 'nope' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('AUTHENTICATION_FAILED');
    const ok = await post({ sql: 'SELECT 1 AS one' }, { 'x-api-key': KEY });
    expect(ok.body).toEqual({ success: true, data: [{ one: 1 }] });
    const live = await getJson(`${server.httpUrl}/api/v1/live`);
    expect(live.status).toBe(200);
  });

  it('runs statements with params and metadata', async () => {
    const created = await post({ sql: 'CREATE TABLE kv (k TEXT PRIMARY KEY, v BIGINT); INSERT INTO kv VALUES ($1, $2)', params: ['a', '9007199254740993'] });
    expect(created.body).toEqual({ success: true, data: [] });
    const r = await post({ sql: 'SELECT k, v, v * 2 AS w FROM kv WHERE k = $1', params: ['a'], include_metadata: true });
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(1);
    expect(r.body.metadata.columns).toEqual([
      { name: 'k', type: 'TEXT', nullable: false },
      { name: 'v', type: 'BIGINT', nullable: true },
      { name: 'w', type: 'BIGINT', nullable: true },
    ]);
    expect(r.body.metadata.row_count).toBe(1);
    expect(typeof r.body.metadata.query_id).toBe('string');
    expect(typeof r.body.metadata.execution_time_ms).toBe('number');
  });

  it('cuts results at max_rows and says so', async () => {
    const r = await post({ sql: 'SELECT * FROM (VALUES (1), (2), (3)) v(x)', max_rows: 2, include_metadata: true });
    expect(r.body.data).toEqual([{ x: 1 }, { x: 2 }]);
    expect(r.body.metadata.truncated).toBe(true);
  });

  it('maps errors to the envelope', async () => {
    const syntax = await post({ sql: 'SELEC 1' });
    expect(syntax.status).toBe(400);
    expect(syntax.body.error.code).toBe('INVALID_QUERY');
    expect(syntax.body.error.details).toMatchObject({ line: 1 });
    const missing = await post({ sql: 'SELECT * FROM nope' });
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toBe('relation "nope" does not exist');
    const col = await post({ sql: 'SELECT nope FROM kv' });
    expect(col.status).toBe(400);
    expect(col.body.error.code).toBe('COLUMN_NOT_FOUND');
    const dup = await post({ sql: "INSERT INTO kv VALUES ('a', 1)" });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('CONSTRAINT_VIOLATION');
    const type = await post({ sql: "SELECT 'x' + 1" });
    expect(type.status).toBe(422);
    const unknown = await post({ sql: 'SELECT 1', bogus: true });
    expect(unknown.status).toBe(422);
    const timeout = await post({ sql: 'SELECT count(*) FROM (VALUES (1)) a, (VALUES (1)) b', timeout_ms: 1 });
    expect([200, 504]).toContain(timeout.status);
  });
});
