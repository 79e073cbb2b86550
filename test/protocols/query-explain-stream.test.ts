import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../bin/app.js';
import type { ServeHandle } from '../../bin/app-types.js';
import { tempDir } from '../helpers/stack.js';
import { captureLogger, getJson, testConfig, type LogLine } from './helpers.js';

const KEY = 'stream-key';
const BIG_ROWS = 120_000;
const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };

/** POST /query/explain and POST /query/stream over a real server and LevelDB. */
describe('POST /query/explain and /query/stream', () => {
  let server: ServeHandle;
  let remove: () => Promise<void>;
  let lines: LogLine[];
  const post = (path: string, body: unknown, init: RequestInit = {}) =>
    fetch(`${server.httpUrl}/api/v1${path}`, { method: 'POST', headers: auth, body: typeof body === 'string' ? body : JSON.stringify(body), ...init });
  const postJson = (path: string, body: unknown) =>
    getJson(`${server.httpUrl}/api/v1${path}`, { method: 'POST', headers: auth, body: typeof body === 'string' ? body : JSON.stringify(body) });

  beforeAll(async () => {
    const dir = await tempDir('svcdb-stream-');
    remove = dir.remove;
    const capture = captureLogger('debug');
    lines = capture.lines;
    server = await startServer(testConfig({ data: dir.dir, 'api-key': KEY, 'log-level': 'debug' }), capture.logger);
    expect((await postJson('/query', { sql: 'CREATE TABLE big (i INTEGER PRIMARY KEY, t TEXT)' })).status).toBe(200);
    expect((await postJson('/query', { sql: `INSERT INTO big SELECT g, 'row ' || g FROM generate_series(1, ${BIG_ROWS}) g` })).status).toBe(200);
  });
  afterAll(async () => {
    await server.close('test');
    await remove();
  });

  describe('explain', () => {
    it('answers the plan object and planning_time_ms, actual values null without analyze', async () => {
      const r = await postJson('/query/explain', { sql: 'SELECT t FROM big WHERE i = $1', params: [5] });
      expect(r.status).toBe(200);
      expect(typeof r.body.planning_time_ms).toBe('number');
      expect(r.body.plan).toMatchObject({ node_type: 'Index Scan', relation: 'big', actual_rows: null, actual_time_ms: null });
      expect(typeof r.body.plan.index_name).toBe('string');
      expect(typeof r.body.plan.index_cond).toBe('string');
      expect(typeof r.body.plan.estimated_rows).toBe('number');
      expect(typeof r.body.plan.estimated_cost).toBe('number');
      expect(r.body.execution_time_ms).toBeUndefined();
    });

    it('with analyze runs the query and fills the actual values', async () => {
      const r = await postJson('/query/explain', { sql: 'SELECT count(*) FROM big WHERE i <= 10', analyze: true });
      expect(r.status).toBe(200);
      expect(typeof r.body.execution_time_ms).toBe('number');
      expect(r.body.plan.actual_rows).toBe(1);
      expect(typeof r.body.plan.actual_time_ms).toBe('number');
    });

    it('answers text and yaml as one string in plan', async () => {
      const text = await postJson('/query/explain', { sql: 'SELECT * FROM big ORDER BY t LIMIT 3', format: 'text' });
      expect(text.status).toBe(200);
      expect(typeof text.body.plan).toBe('string');
      expect(text.body.plan).toMatch(/^Limit/);
      const yaml = await postJson('/query/explain', { sql: 'SELECT * FROM big', format: 'yaml' });
      expect(yaml.status).toBe(200);
      expect(yaml.body.plan).toMatch(/^node_type: Seq Scan$/m);
    });

    it('refuses what is not one SELECT, bad SQL and bad bodies with the envelope', async () => {
      const insert = await postJson('/query/explain', { sql: 'INSERT INTO big VALUES (0, null)' });
      expect(insert.status).toBe(400);
      expect(insert.body.error.code).toBe('INVALID_QUERY');
      expect(typeof insert.body.error.request_id).toBe('string');
      expect((await postJson('/query/explain', { sql: 'SELECT 1; SELECT 2' })).body.error.code).toBe('INVALID_QUERY');
      expect((await postJson('/query/explain', { sql: 'SELECT * FROM nope' })).status).toBe(404);
      expect((await postJson('/query/explain', { sql: 'SELECT nope FROM big' })).body.error.code).toBe('COLUMN_NOT_FOUND');
      const format = await postJson('/query/explain', { sql: 'SELECT 1', format: 'xml' });
      expect(format.status).toBe(422);
      expect(format.body.error.details).toMatchObject({ reason: 'schema_validation', field: 'format' });
      const type = await postJson('/query/explain', { sql: 'SELECT 1', analyze: 'yes' });
      expect(type.body.error.details.field).toBe('analyze');
      const unknown = await postJson('/query/explain', { sql: 'SELECT 1', verbose: true });
      expect(unknown.status).toBe(422);
      expect(unknown.body.error.details.reason).toBe('schema_validation');
      const malformed = await postJson('/query/explain', '{"sql": ');
      expect(malformed.body.error.details.reason).toBe('malformed_json');
      const none = await getJson(`${server.httpUrl}/api/v1/query/explain`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"sql":"SELECT 1"}',
      });
      expect(none.body.error.code).toBe('AUTHENTICATION_REQUIRED');
    });

    it('stops an analyze past its timeout_ms with QUERY_TIMEOUT', async () => {
      const r = await postJson('/query/explain', { sql: 'SELECT count(*) FROM big a, big b', analyze: true, timeout_ms: 100 });
      expect(r.status).toBe(504);
      expect(r.body.error.code).toBe('QUERY_TIMEOUT');
    });
  });

  describe('stream', () => {
    it(`streams ${BIG_ROWS} rows as NDJSON, one row object per line, in order`, async () => {
      const response = await post(
        '/query/stream',
        { sql: 'SELECT i, t FROM big ORDER BY i', batch_size: 5000 },
        { headers: { ...auth, accept: 'application/x-ndjson' } },
      );
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
      expect(response.headers.get('x-request-id')).toBeTruthy();
      let count = 0;
      let expected = 1;
      let rest = '';
      const decoder = new TextDecoder();
      for await (const chunk of response.body!) {
        const text = rest + decoder.decode(chunk, { stream: true });
        const parts = text.split('\n');
        rest = parts.pop()!;
        for (const line of parts) {
          const row = JSON.parse(line) as { i: number; t: string };
          expect(row.i).toBe(expected);
          expected++;
          count++;
        }
      }
      expect(rest).toBe('');
      expect(count).toBe(BIG_ROWS);
    });

    it('answers an empty body for no rows, and streams with the default batch_size and params', async () => {
      const none = await post('/query/stream', { sql: 'SELECT i FROM big WHERE i < 0' });
      expect(none.status).toBe(200);
      expect(none.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
      expect(await none.text()).toBe('');
      const some = await post('/query/stream', { sql: 'SELECT i FROM big WHERE i <= $1 ORDER BY i', params: [2500] });
      const text = await some.text();
      const rows = text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(rows).toHaveLength(2500);
      expect(rows[2499]).toEqual({ i: 2500 });
    });

    it('answers errors before the first row with the envelope and status', async () => {
      const missing = await postJson('/query/stream', { sql: 'SELECT * FROM nope' });
      expect(missing.status).toBe(404);
      expect(missing.body.error.code).toBe('TABLE_NOT_FOUND');
      const syntax = await postJson('/query/stream', { sql: 'SELEC 1' });
      expect(syntax.status).toBe(400);
      expect((await postJson('/query/stream', { sql: 'SELECT 1', batch_size: 0 })).body.error.details.field).toBe('batch_size');
      expect((await postJson('/query/stream', { sql: 'SELECT 1', batch_size: 'ten' })).status).toBe(422);
      expect((await postJson('/query/stream', { sql: 'SELECT 1', max_rows: 5 })).body.error.details.reason).toBe('schema_validation');
      expect((await postJson('/query/stream', '[')).body.error.details.reason).toBe('malformed_json');
      expect((await postJson('/query/stream', { params: [] })).body.error.details.field).toBe('sql');
      const early = await postJson('/query/stream', { sql: 'SELECT count(*) FROM big a, big b', timeout_ms: 100 });
      expect(early.status).toBe(504);
      expect(early.body.error.code).toBe('QUERY_TIMEOUT');
    });

    it('ends with one error line when the query fails after rows were sent', async () => {
      const response = await post('/query/stream', { sql: 'SELECT 10 / (50000 - i) AS x FROM big', batch_size: 100 });
      expect(response.status).toBe(200);
      const out = (await response.text()).trimEnd().split('\n');
      expect(out.length).toBeGreaterThan(100);
      const last = JSON.parse(out.at(-1)!);
      expect(Object.keys(last)).toEqual(['error']);
      expect(last.error.code).toBeTruthy();
      expect(last.error.message).toMatch(/division by zero/);
      expect(last.error.request_id).toBe(response.headers.get('x-request-id'));
      expect(JSON.parse(out.at(-2)!)).toHaveProperty('x');
    });

    it('ends with an error line when timeout_ms passes mid-stream', async () => {
      // The client does not read for a while: the server waits for the socket to drain, and the
      // deadline ends that wait as it ends a running operator.
      const response = await post('/query/stream', { sql: 'SELECT a.i FROM big a, big b', batch_size: 1000, timeout_ms: 2000 });
      expect(response.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 2500));
      const out = (await response.text()).trimEnd().split('\n');
      expect(JSON.parse(out.at(-1)!).error.code).toBe('QUERY_TIMEOUT');
    });

    it('stops the query when the client goes away, and keeps serving', async () => {
      // node:http, so "goes away" is exactly a closed TCP connection.
      const requestId = 'stream-disconnect-1';
      await new Promise<void>((resolve, reject) => {
        const req = request(`${server.httpUrl}/api/v1/query/stream`, { method: 'POST', headers: { ...auth, 'x-request-id': requestId } }, (res) => {
          expect(res.statusCode).toBe(200);
          let bytes = 0;
          res.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
            if (bytes > 100_000 && !req.destroyed) {
              req.destroy();
              resolve();
            }
          });
        });
        req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
        req.end(JSON.stringify({ sql: 'SELECT a.i, b.t FROM big a, big b', batch_size: 100, timeout_ms: 600_000 }));
      });
      const deadline = Date.now() + 10_000;
      const stopped = () => lines.find((l) => l.msg === 'query stream stopped' && l['request_id'] === requestId);
      while (!stopped() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(stopped()).toMatchObject({ reason: 'client_closed' });
      const after = await postJson('/query', { sql: 'SELECT count(*) AS n FROM big' });
      expect(after.body.data).toEqual([{ n: BIG_ROWS }]);
    });
  });
});
