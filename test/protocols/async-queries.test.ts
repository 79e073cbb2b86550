import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../bin/app.js';
import type { ServeHandle } from '../../bin/app-types.js';
import { isFinished, nextStatus, ASYNC_QUERY_STATUSES } from '../../protocols/http/async/async-state.js';
import { tempDir } from '../helpers/stack.js';
import { getJson, testConfig } from './helpers.js';

const KEY = 'async-key';
const SECRET = 'callback-secret';
const LONG = 'SELECT count(*) FROM big a, big b';
const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };

async function serve(flags: Record<string, string>): Promise<{ server: ServeHandle; remove: () => Promise<void> }> {
  const dir = await tempDir('svcdb-async-');
  const server = await startServer(testConfig({ data: dir.dir, 'api-key': KEY, 'log-level': 'silent', ...flags }), pino({ level: 'silent' }));
  return { server, remove: dir.remove };
}

function client(server: () => ServeHandle) {
  const call = (method: string, path: string, body?: unknown) =>
    getJson(
      `${server().httpUrl}${path.startsWith('/api') ? path : `/api/v1${path}`}`,
      body === undefined
        ? { method, headers: { authorization: auth.authorization } }
        : { method, headers: auth, body: typeof body === 'string' ? body : JSON.stringify(body) },
    );
  const until = async (id: string, done: (record: any) => boolean, timeoutMs = 20_000): Promise<any> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = await call('GET', `/query/${id}`);
      if (done(r.body) || Date.now() > deadline) return r.body;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { call, until };
}

describe('async query state machine', () => {
  it('moves pending -> running -> completed | failed | cancelled, and finished states never move', () => {
    expect(nextStatus('pending', 'start')).toBe('running');
    expect(nextStatus('pending', 'cancel')).toBe('cancelled');
    expect(nextStatus('pending', 'complete')).toBeNull();
    expect(nextStatus('running', 'complete')).toBe('completed');
    expect(nextStatus('running', 'fail')).toBe('failed');
    expect(nextStatus('running', 'cancel')).toBe('cancelled');
    for (const status of ['completed', 'failed', 'cancelled'] as const) {
      expect(isFinished(status)).toBe(true);
      for (const event of ['start', 'complete', 'fail', 'cancel'] as const) expect(nextStatus(status, event)).toBeNull();
    }
    expect(ASYNC_QUERY_STATUSES.filter((s) => !isFinished(s))).toEqual(['pending', 'running']);
  });
});

describe('POST /query/async, GET and DELETE /query/{id}', () => {
  let server: ServeHandle;
  let remove: () => Promise<void>;
  let receiver: Server;
  let receiverUrl = '';
  const received: { headers: IncomingHttpHeaders; body: string; status: number }[] = [];
  let failFirst = 0;
  const { call, until } = client(() => server);

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        const status = failFirst > 0 ? (failFirst--, 500) : 200;
        received.push({ headers: req.headers, body, status });
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    ({ server, remove } = await serve({ 'async-query-concurrency-max': '1', 'async-query-callback-secret': SECRET }));
    expect((await call('POST', '/query', { sql: 'CREATE TABLE big (i INTEGER PRIMARY KEY)' })).status).toBe(200);
    expect((await call('POST', '/query', { sql: 'INSERT INTO big SELECT g FROM generate_series(1, 30000) g' })).status).toBe(200);
  });
  afterAll(async () => {
    await server.close('test');
    await remove();
    await new Promise((resolve) => receiver.close(resolve));
  });

  it("accepts a query (202 pending) and answers its result in POST /query's shape when completed", async () => {
    const created = await call('POST', '/query/async', { sql: 'SELECT i FROM big WHERE i <= $1 ORDER BY i', params: [3] });
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({ status: 'pending', estimated_time_ms: expect.any(Number) });
    expect(created.body.status_url).toBe(`/api/v1/query/${created.body.query_id}`);
    expect(created.headers.get('location')).toBe(created.body.status_url);
    const done = await until(created.body.query_id, (r) => r.status === 'completed');
    expect(done).toMatchObject({ query_id: created.body.query_id, status: 'completed', data: [{ i: 1 }, { i: 2 }, { i: 3 }] });
    expect(done.metadata).toMatchObject({ row_count: 3, columns: [{ name: 'i', type: 'INTEGER', nullable: false }], truncated: false, command: 'SELECT' });
    expect(typeof done.metadata.execution_time_ms).toBe('number');
    for (const field of ['created_at', 'started_at', 'completed_at']) expect(Date.parse(done[field])).not.toBeNaN();
    expect(done.progress).toBeUndefined();
    const viaUrl = await call('GET', done.status_url);
    expect(viaUrl.body.status).toBe('completed');
  });

  it('runs writes too, and cuts a result at max_rows', async () => {
    const write = await call('POST', '/query/async', { sql: 'CREATE TABLE t2 (x INT); INSERT INTO t2 VALUES (1), (2) RETURNING x' });
    const done = await until(write.body.query_id, (r) => r.status !== 'pending' && r.status !== 'running');
    expect(done).toMatchObject({ status: 'completed', data: [{ x: 1 }, { x: 2 }], metadata: { command: 'INSERT', affected_rows: 2 } });
    const cut = await call('POST', '/query/async', { sql: 'SELECT i FROM big', max_rows: 5 });
    const cutDone = await until(cut.body.query_id, (r) => r.status === 'completed');
    expect(cutDone.data).toHaveLength(5);
    expect(cutDone.metadata.truncated).toBe(true);
  });

  it('records an error as failed, and a timeout as failed with QUERY_TIMEOUT', async () => {
    const bad = await call('POST', '/query/async', { sql: 'SELECT * FROM nope' });
    const failed = await until(bad.body.query_id, (r) => r.status === 'failed');
    expect(failed.error).toMatchObject({ code: 'TABLE_NOT_FOUND', message: 'relation "nope" does not exist' });
    expect(Date.parse(failed.failed_at)).not.toBeNaN();
    expect(failed.data).toBeUndefined();
    const slow = await call('POST', '/query/async', { sql: LONG, timeout_ms: 200 });
    const timedOut = await until(slow.body.query_id, (r) => r.status === 'failed');
    expect(timedOut.error.code).toBe('QUERY_TIMEOUT');
  });

  it('cancels a running and a pending query; a finished one answers 409 INVALID_STATE', async () => {
    const running = await call('POST', '/query/async', { sql: LONG, timeout_ms: 600_000 });
    const pending = await call('POST', '/query/async', { sql: 'SELECT 1 AS one' });
    const seen = await until(running.body.query_id, (r) => r.status === 'running');
    expect(seen.progress).toEqual(expect.any(Number));
    expect(Date.parse(seen.started_at)).not.toBeNaN();
    expect((await call('GET', `/query/${pending.body.query_id}`)).body.status).toBe('pending');
    const cancelPending = await call('DELETE', `/query/${pending.body.query_id}`);
    expect(cancelPending.status).toBe(200);
    expect(cancelPending.body).toMatchObject({ query_id: pending.body.query_id, status: 'cancelled' });
    const cancel = await call('DELETE', `/query/${running.body.query_id}`);
    expect(cancel.status).toBe(200);
    expect(Object.keys(cancel.body).sort()).toEqual(['cancelled_at', 'query_id', 'status']);
    expect(cancel.body.status).toBe('cancelled');
    const after = await call('GET', `/query/${running.body.query_id}`);
    expect(after.body).toMatchObject({ status: 'cancelled', cancelled_at: cancel.body.cancelled_at });
    const again = await call('DELETE', `/query/${running.body.query_id}`);
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'INVALID_STATE', details: { status: 'cancelled' } });
    // The slot is free again: the next query runs.
    const next = await call('POST', '/query/async', { sql: 'SELECT 2 AS two' });
    expect((await until(next.body.query_id, (r) => r.status === 'completed')).data).toEqual([{ two: 2 }]);
    const finished = await call('DELETE', `/query/${next.body.query_id}`);
    expect(finished.status).toBe(409);
    expect(finished.body.error.details.status).toBe('completed');
  });

  it('answers 404 NOT_FOUND for an unknown id, and refuses bad bodies with the envelope', async () => {
    const unknown = await call('GET', '/query/01ARZ3NDEKTSV4RRFFQ69G5FAV');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');
    expect((await call('DELETE', '/query/nope')).status).toBe(404);
    const malformed = await call('POST', '/query/async', '{"sql":');
    expect(malformed.body.error.details.reason).toBe('malformed_json');
    const wrongType = await call('POST', '/query/async', { sql: 'SELECT 1', timeout_ms: 'soon' });
    expect(wrongType.status).toBe(422);
    expect(wrongType.body.error.code).toBe('VALIDATION_ERROR');
    expect(wrongType.body.error.details.field).toBe('timeout_ms');
    const extra = await call('POST', '/query/async', { sql: 'SELECT 1', priority: 1 });
    expect(extra.body.error.details.reason).toBe('schema_validation');
    const url = await call('POST', '/query/async', { sql: 'SELECT 1', callback_url: 'ftp://example.com/x' });
    expect(url.body.error.details.field).toBe('callback_url');
    expect((await call('POST', '/query/async', {})).body.error.details.field).toBe('sql');
    const noAuth = await getJson(`${server.httpUrl}/api/v1/query/x`);
    expect(noAuth.body.error.code).toBe('AUTHENTICATION_REQUIRED');
  });

  it('POSTs the final record to callback_url, signed as webhooks are, retrying a failed delivery', async () => {
    received.length = 0;
    failFirst = 1;
    const created = await call('POST', '/query/async', { sql: 'SELECT 7 AS n', callback_url: receiverUrl });
    const deadline = Date.now() + 10_000;
    while (received.filter((r) => r.status === 200).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(received.map((r) => r.status)).toEqual([500, 200]);
    const delivery = received[1]!;
    const record = JSON.parse(delivery.body);
    expect(record).toEqual((await call('GET', `/query/${created.body.query_id}`)).body);
    expect(record).toMatchObject({ status: 'completed', data: [{ n: 7 }] });
    expect(delivery.headers['content-type']).toBe('application/json');
    expect(delivery.headers['x-svc-event-id']).toBe(created.body.query_id);
    expect(Date.parse(delivery.headers['x-svc-timestamp'] as string)).not.toBeNaN();
    expect(delivery.headers['x-svc-signature']).toBe(`sha256=${createHmac('sha256', SECRET).update(delivery.body).digest('hex')}`);
  });
});

describe('async query limits', () => {
  let server: ServeHandle;
  let remove: () => Promise<void>;
  const { call, until } = client(() => server);

  beforeAll(async () => {
    ({ server, remove } = await serve({ 'async-queries-max': '2', 'async-query-concurrency-max': '1', 'async-query-retention-ms': '1000' }));
    await call('POST', '/query', { sql: 'CREATE TABLE big (i INTEGER PRIMARY KEY)' });
    await call('POST', '/query', { sql: 'INSERT INTO big SELECT g FROM generate_series(1, 30000) g' });
  });
  afterAll(async () => {
    await server.close('test');
    await remove();
  });

  it('forgets a finished record after asyncQueryRetentionMs', async () => {
    const created = await call('POST', '/query/async', { sql: 'SELECT 1 AS one' });
    await until(created.body.query_id, (r) => r.status === 'completed');
    await new Promise((resolve) => setTimeout(resolve, 1300));
    expect((await call('GET', `/query/${created.body.query_id}`)).status).toBe(404);
  });

  it('refuses a query with 429 when asyncQueriesMax records are unfinished, evicting finished ones first', async () => {
    const done = await call('POST', '/query/async', { sql: 'SELECT 1 AS one' });
    await until(done.body.query_id, (r) => r.status === 'completed');
    const a = await call('POST', '/query/async', { sql: LONG, timeout_ms: 600_000 });
    const b = await call('POST', '/query/async', { sql: LONG, timeout_ms: 600_000 });
    expect([a.status, b.status]).toEqual([202, 202]);
    expect((await call('GET', `/query/${done.body.query_id}`)).status).toBe(404);
    const full = await call('POST', '/query/async', { sql: 'SELECT 1' });
    expect(full.status).toBe(429);
    expect(full.body.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { limit: 2, remaining: 0 } });
    expect(Date.parse(full.body.error.details.reset_at)).not.toBeNaN();
    expect((await call('DELETE', `/query/${a.body.query_id}`)).status).toBe(200);
    expect((await call('DELETE', `/query/${b.body.query_id}`)).status).toBe(200);
    expect((await call('POST', '/query/async', { sql: 'SELECT 1' })).status).toBe(202);
  });
});
