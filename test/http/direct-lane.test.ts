import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decode } from '@msgpack/msgpack';
import { bearer, newKey, untilStatus } from '../helpers/auth.js';
import { startTestServer, TEST_API_KEY, type TestServer } from '../helpers/sql-server.js';

/**
 * The direct path (protocols/http/direct/direct-lane.ts) answers GET of a row by id and a point
 * SELECT over POST /query in front of fastify. Its answers must be fastify's, byte for byte, and
 * everything it does not answer must reach fastify whole (a body it read included). fastify's own
 * answer of the same request is had by sending X-Tenant-ID (the caller's own tenant), which the
 * direct path leaves to fastify; svc_http_direct_answers_total (/metrics) says which path answered.
 */

interface Raw {
  readonly status: number;
  /** [name, value] in the order sent. */
  readonly headers: [string, string][];
  readonly body: Buffer;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

function send(server: TestServer, method: string, path: string, headers: Record<string, string>, body?: string | Buffer): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${server.baseUrl}${path}`, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const pairs: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!]);
        resolve({ status: res.statusCode!, headers: pairs, body: Buffer.concat(chunks) });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const json = (key = TEST_API_KEY): Record<string, string> => ({ ...bearer(key), 'content-type': 'application/json' });
const viaFastify = (headers: Record<string, string>, tenant = 'default'): Record<string, string> => ({ ...headers, 'x-tenant-id': tenant });

/** An answer's headers with what differs from one request to the next (time, the window's counter) reduced to the name. */
const comparable = (raw: Raw): string[] =>
  raw.headers.map(([name, value]) => (/^(date|x-ratelimit-(remaining|reset|reset-after))$/i.test(name) ? name : `${name}: ${value}`));

async function directAnswers(server: TestServer): Promise<{ row: number; query: number }> {
  const text = await (await fetch(`${server.baseUrl}/api/v1/metrics`, { headers: bearer(TEST_API_KEY) })).text();
  const count = (route: string): number => Number(new RegExp(`^svc_http_direct_answers_total\\{route="${route}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { row: count('row'), query: count('query') };
}

type Declines = Record<'row' | 'query', Record<'refused' | 'error', number>>;

/** svc_http_direct_declines_total by route and reason (NaN where a series is missing). */
async function directDeclines(server: TestServer): Promise<Declines> {
  const text = await (await fetch(`${server.baseUrl}/api/v1/metrics`, { headers: bearer(TEST_API_KEY) })).text();
  const count = (route: string, reason: string): number =>
    Number(new RegExp(`^svc_http_direct_declines_total\\{route="${route}",reason="${reason}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  return {
    row: { refused: count('row', 'refused'), error: count('row', 'error') },
    query: { refused: count('query', 'refused'), error: count('query', 'error') },
  };
}

/** A POST /query's request head (Content-Length of `payload`), `extra` header lines before Authorization. */
const queryHead = (payload: string, extra = ''): string =>
  `POST /api/v1/query HTTP/1.1\r\nHost: x\r\n${extra}Authorization: Bearer ${TEST_API_KEY}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n`;

/** Everything the server sends on a raw connection that `talk` writes to, until the connection closes. */
function exchange(server: TestServer, talk: (socket: net.Socket) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(new URL(server.baseUrl).port), '127.0.0.1', () => talk(socket));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
}

/** A server of its own with a one-row table `table` (id 1) and its point SELECT planned: the direct path answers `payload`. */
async function serverWithPointRow(table: string): Promise<{ server: TestServer; payload: string }> {
  const server = await startTestServer();
  const payload = JSON.stringify({ sql: `SELECT id FROM ${table} WHERE id = $1`, params: [1] });
  for (const sql of [`CREATE TABLE ${table} (id INT PRIMARY KEY)`, `INSERT INTO ${table} VALUES (1)`]) {
    await send(server, 'POST', '/api/v1/query', json(), JSON.stringify({ sql }));
  }
  await send(server, 'POST', '/api/v1/query', json(), payload);
  return { server, payload };
}

describe('the direct path of the point reads', () => {
  let server: TestServer;
  const sql = async (text: string, params: unknown[] = [], key = TEST_API_KEY): Promise<any> => {
    const res = await send(
      server,
      'POST',
      '/api/v1/query',
      viaFastify(json(key), key === TEST_API_KEY ? 'default' : 'acme'),
      JSON.stringify({ sql: text, params }),
    );
    const body = JSON.parse(res.body.toString());
    if (res.status !== 200) throw new Error(JSON.stringify(body));
    return body;
  };
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    server = await startTestServer();
    keys.ro = (await newKey(server.dataDir, { role: 'read_only' })).key;
    keys.acme = (await newKey(server.dataDir, { role: 'read_write', tenant: 'acme' })).key;
    keys.limited = (await newKey(server.dataDir, { role: 'read_write', rateLimitRequestsMax: 3 })).key;
    for (const key of Object.values(keys)) await untilStatus(server.baseUrl, key, 200);
    await sql(
      'CREATE TABLE kinds (id INT PRIMARY KEY, t TEXT, n NUMERIC, f DOUBLE PRECISION, b BOOLEAN, j JSONB, ts TIMESTAMPTZ, big BIGINT, arr INT[], nul TEXT)',
    );
    await sql(`INSERT INTO kinds VALUES
      (1, 'plain', 1.50, 0.1, true, '{"a": 1.0, "b": [1, "x"]}', '2026-01-02 03:04:05+00', 9007199254740993, '{1,2}', NULL),
      (2, e'quote " back \\\\ line\\n tab\\t é 😀 \\u2028', -0.000, -1e300, false, 'null', '1999-12-31 23:59:59.999999+00', -5, '{}', NULL),
      (3, '', 12345678901234567890.123, 'NaN', NULL, '[]', NULL, 0, NULL, 'x')`);
    await sql('CREATE TABLE t (id TEXT PRIMARY KEY, v INT)');
    await sql("INSERT INTO t VALUES ('a-1', 1), ('b_2.x~', 2), ('with,comma', 3), ('sp ace', 4)");
  });
  afterAll(async () => {
    agent.destroy();
    await server?.close();
  });

  it('answers a point SELECT and a GET of a row byte for byte as fastify does, and counts them', async () => {
    // A statement's first run plans it (fastify's path); the direct path answers it from then on.
    for (const select of ['SELECT * FROM kinds WHERE id = $1', 'SELECT t, j, n FROM kinds WHERE id = $1']) {
      await send(server, 'POST', '/api/v1/query', json(), JSON.stringify({ sql: select, params: [0] }));
    }
    const before = await directAnswers(server);
    let rows = 0;
    let queries = 0;
    for (const id of [1, 2, 3, 4]) {
      for (const select of ['SELECT * FROM kinds WHERE id = $1', 'SELECT t, j, n FROM kinds WHERE id = $1']) {
        const body = JSON.stringify({ sql: select, params: [id] });
        // Twice each: the first reads the store, the second the point-read cache.
        for (let i = 0; i < 2; i++) {
          const type = i === 0 ? 'application/json' : 'application/json;charset=UTF-8';
          const headers = { ...json(), 'content-type': type, 'x-request-id': `q-${id}-${i}` };
          const direct = await send(server, 'POST', '/api/v1/query', headers, body);
          const routed = await send(server, 'POST', '/api/v1/query', viaFastify(headers), body);
          expect(direct.status).toBe(200);
          expect(comparable(direct)).toEqual(comparable(routed));
          expect(direct.body.toString()).toBe(routed.body.toString());
          queries += 1;
        }
      }
      const headers = { ...bearer(TEST_API_KEY), 'x-request-id': `r-${id}` };
      const direct = await send(server, 'GET', `/api/v1/tables/kinds/rows/${id}`, headers);
      const routed = await send(server, 'GET', `/api/v1/tables/kinds/rows/${id}`, viaFastify(headers));
      expect(direct.status).toBe(id === 4 ? 404 : 200);
      expect(direct.body.toString()).toBe(routed.body.toString());
      if (id !== 4) {
        expect(comparable(direct)).toEqual(comparable(routed));
        rows += 1;
      }
    }
    for (const id of ['a-1', 'b_2.x~']) {
      const direct = await send(server, 'GET', `/api/v1/tables/t/rows/${id}`, bearer(TEST_API_KEY));
      expect(JSON.parse(direct.body.toString())).toEqual({ data: { id, v: id === 'a-1' ? 1 : 2 } });
      rows += 1;
    }
    // All of them, but for a request that comes when the key file is due to be read again (about once a second:
    // Authenticator.remembered answers nothing then, and fastify's hook reads it).
    const after = await directAnswers(server);
    expect(after.row - before.row).toBeLessThanOrEqual(rows);
    expect(after.row - before.row).toBeGreaterThanOrEqual(rows - 3);
    expect(after.query - before.query).toBeLessThanOrEqual(queries);
    expect(after.query - before.query).toBeGreaterThanOrEqual(queries - 3);
    // The rows answered directly count as queries, as the routes count them.
    const metrics = await (await fetch(`${server.baseUrl}/api/v1/metrics`, { headers: bearer(TEST_API_KEY) })).text();
    expect(Number(/^svc_queries_total\{status="success",database="default"\} (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThan(rows + queries);
  });

  it('sends X-RateLimit-* counting every request, direct or not, and leaves the 429 to fastify', async () => {
    const key = keys.limited!;
    const body = JSON.stringify({ sql: 'SELECT * FROM t WHERE id = $1', params: ['a-1'] });
    // Warm the point-read cache through fastify's path (its own credential: not counted against `limited`).
    await send(server, 'POST', '/api/v1/query', json(), body);
    // A fresh one-second window (the key was used by beforeAll's check, maybe in this one).
    await new Promise((resolve) => setTimeout(resolve, 1005 - (Date.now() % 1000)));
    const window = Math.floor(Date.now() / 1000);
    const answers: Raw[] = [];
    for (const via of ['direct', 'fastify', 'direct', 'direct']) {
      answers.push(await send(server, 'POST', '/api/v1/query', via === 'direct' ? json(key) : viaFastify(json(key)), body));
    }
    // The window is a second wide: a test run straddling two windows proves nothing; try once more later.
    if (Math.floor(Date.now() / 1000) !== window) return;
    const remaining = answers.map((a) => a.headers.find(([name]) => name === 'x-ratelimit-remaining')?.[1]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429]);
    expect(remaining).toEqual(['2', '1', '0', '0']);
    expect(JSON.parse(answers[3]!.body.toString()).error.code).toBe('RATE_LIMIT_EXCEEDED');
  });

  it('reads in the home tenant of a tenant-bound key, and keeps a read_only key read-only', async () => {
    await sql('CREATE TABLE t (id TEXT PRIMARY KEY, v INT)', [], keys.acme);
    await sql("INSERT INTO t VALUES ('a-1', 100)", [], keys.acme);
    const before = await directAnswers(server);
    const body = JSON.stringify({ sql: 'SELECT v FROM t WHERE id = $1', params: ['a-1'] });
    for (let i = 0; i < 2; i++) {
      const acme = await send(server, 'POST', '/api/v1/query', json(keys.acme), body);
      expect(JSON.parse(acme.body.toString())).toEqual({ success: true, data: [{ v: 100 }] });
      const row = await send(server, 'GET', '/api/v1/tables/t/rows/a-1', bearer(keys.acme!));
      expect(JSON.parse(row.body.toString())).toEqual({ data: { id: 'a-1', v: 100 } });
      const admin = await send(server, 'POST', '/api/v1/query', json(), body);
      expect(JSON.parse(admin.body.toString())).toEqual({ success: true, data: [{ v: 1 }] });
      const ro = await send(server, 'POST', '/api/v1/query', json(keys.ro), body);
      expect(JSON.parse(ro.body.toString())).toEqual({ success: true, data: [{ v: 1 }] });
    }
    expect((await directAnswers(server)).query).toBeGreaterThan(before.query);
    const write = await send(server, 'POST', '/api/v1/query', json(keys.ro), JSON.stringify({ sql: "INSERT INTO t VALUES ('ro', 1)" }));
    expect(write.status).toBe(403);
    expect(JSON.parse(write.body.toString()).error.code).toBe('AUTHORIZATION_DENIED');
  });

  it('hands fastify whatever it does not answer, with the body it read, answered as before', async () => {
    const point = { sql: 'SELECT * FROM t WHERE id = $1', params: ['a-1'] };
    await send(server, 'POST', '/api/v1/query', json(), JSON.stringify(point));
    const cases: { name: string; method: string; path: string; headers: Record<string, string>; body?: string; check: (raw: Raw) => void }[] = [
      {
        name: 'an INSERT (the prepared insert path)',
        method: 'POST',
        path: '/api/v1/query',
        headers: json(),
        body: JSON.stringify({ sql: 'INSERT INTO t VALUES ($1, $2)', params: ['ins', 9] }),
        check: (raw) => expect(JSON.parse(raw.body.toString())).toEqual({ success: true, data: [] }),
      },
      {
        name: 'include_metadata',
        method: 'POST',
        path: '/api/v1/query',
        headers: json(),
        body: JSON.stringify({ ...point, include_metadata: true }),
        check: (raw) => expect(JSON.parse(raw.body.toString()).metadata.columns.map((c: any) => c.name)).toEqual(['id', 'v']),
      },
      {
        name: 'an unknown field',
        method: 'POST',
        path: '/api/v1/query',
        headers: json(),
        body: JSON.stringify({ ...point, extra: 1 }),
        check: (raw) => expect([raw.status, JSON.parse(raw.body.toString()).error.code]).toEqual([422, 'VALIDATION_ERROR']),
      },
      {
        name: 'a parameter of the wrong type',
        method: 'POST',
        path: '/api/v1/query',
        headers: json(),
        body: JSON.stringify({ sql: 'SELECT * FROM kinds WHERE id = $1', params: ['x'] }),
        check: (raw) => expect([raw.status, JSON.parse(raw.body.toString()).error.details.sqlstate]).toEqual([422, '22P02']),
      },
      {
        name: 'malformed JSON',
        method: 'POST',
        path: '/api/v1/query',
        headers: json(),
        body: '{"sql": "SELECT 1",',
        check: (raw) => expect(raw.status).toBe(400),
      },
      {
        name: 'a __proto__ key',
        method: 'POST',
        path: '/api/v1/query',
        headers: json(),
        body: '{"sql": "SELECT * FROM t WHERE id = $1", "params": ["a-1"], "__proto__": {"x": 1}}',
        check: (raw) => expect(raw.status).toBe(400),
      },
      {
        name: 'a body past the direct path size (fastify reads it from the socket)',
        method: 'POST',
        path: '/api/v1/query',
        headers: json(),
        body: JSON.stringify({ sql: `SELECT * FROM t WHERE id = $1 ${' '.repeat(17_000)}`, params: ['a-1'] }),
        check: (raw) => expect(JSON.parse(raw.body.toString())).toEqual({ success: true, data: [{ id: 'a-1', v: 1 }] }),
      },
      {
        name: 'timeout_ms out of range',
        method: 'POST',
        path: '/api/v1/query',
        headers: json(),
        body: JSON.stringify({ ...point, timeout_ms: 0 }),
        check: (raw) => expect(raw.status).toBe(422),
      },
      {
        name: 'MessagePack asked for',
        method: 'POST',
        path: '/api/v1/query',
        headers: { ...json(), accept: 'application/msgpack' },
        body: JSON.stringify(point),
        check: (raw) => expect(decode(raw.body)).toEqual({ success: true, data: [{ id: 'a-1', v: 1 }] }),
      },
      {
        name: 'a wrong key',
        method: 'POST',
        path: '/api/v1/query',
        headers: json('svc_wrong'),
        body: JSON.stringify(point),
        check: (raw) => expect([raw.status, JSON.parse(raw.body.toString()).error.code]).toEqual([401, 'AUTHENTICATION_FAILED']),
      },
      {
        name: 'a missing row',
        method: 'GET',
        path: '/api/v1/tables/t/rows/nope',
        headers: bearer(TEST_API_KEY),
        check: (raw) => expect([raw.status, JSON.parse(raw.body.toString()).error.code]).toEqual([404, 'NOT_FOUND']),
      },
      {
        name: 'a missing table',
        method: 'GET',
        path: '/api/v1/tables/nope/rows/1',
        headers: bearer(TEST_API_KEY),
        check: (raw) => expect(raw.status).toBe(404),
      },
      {
        name: 'select= in the query string',
        method: 'GET',
        path: '/api/v1/tables/t/rows/a-1?select=v',
        headers: bearer(TEST_API_KEY),
        check: (raw) => expect(JSON.parse(raw.body.toString())).toEqual({ data: { v: 1 } }),
      },
      {
        name: 'a percent-escaped id',
        method: 'GET',
        path: '/api/v1/tables/t/rows/with%2Ccomma',
        headers: bearer(TEST_API_KEY),
        check: (raw) => expect(JSON.parse(raw.body.toString())).toEqual({ data: { id: 'with,comma', v: 3 } }),
      },
      {
        name: 'HEAD of a row',
        method: 'HEAD',
        path: '/api/v1/tables/t/rows/a-1',
        headers: bearer(TEST_API_KEY),
        check: (raw) => expect([raw.status, raw.body.length]).toEqual([200, 0]),
      },
    ];
    for (const c of cases) {
      const before = await directAnswers(server);
      const raw = await send(server, c.method, c.path, c.headers, c.body);
      try {
        c.check(raw);
      } catch (error) {
        throw new Error(`${c.name}: ${(error as Error).message}\n${raw.status} ${raw.body.toString().slice(0, 300)}`);
      }
      expect({ case: c.name, answers: await directAnswers(server) }).toEqual({ case: c.name, answers: before });
    }
    // The INSERT handed over took effect.
    const inserted = await send(server, 'GET', '/api/v1/tables/t/rows/ins', bearer(TEST_API_KEY));
    expect(JSON.parse(inserted.body.toString())).toEqual({ data: { id: 'ins', v: 9 } });
  });

  it('answers pipelined requests in order, direct and handed over alike, a read behind a write seeing it', async () => {
    const body = (value: unknown): string => JSON.stringify(value);
    const post = (payload: string, extra = ''): string =>
      `POST /api/v1/query HTTP/1.1\r\nHost: x\r\n${extra}Authorization: Bearer ${TEST_API_KEY}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`;
    const get = (path: string): string => `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_API_KEY}\r\n\r\n`;
    const requests = [
      post(body({ sql: 'SELECT v FROM t WHERE id = $1', params: ['a-1'] })),
      post(body({ sql: 'INSERT INTO t VALUES ($1, $2)', params: ['pipe', 7] })),
      get('/api/v1/tables/t/rows/b_2.x~'),
      // The row just inserted: a request pipelined behind a write runs once the write is answered (pipelining.ts).
      post(body({ sql: 'SELECT v FROM t WHERE id = $1', params: ['pipe'] })),
      get('/api/v1/tables/t/rows/pipe'),
      post(body({ sql: 'SELECT v FROM t WHERE id = $1', params: ['pipe'] }), 'X-Tenant-ID: default\r\n'),
      get('/api/v1/tables/t/rows/nope'),
      post(body({ sql: 'SELECT v FROM t WHERE id = $1', params: ['b_2.x~'] })),
    ];
    const port = Number(new URL(server.baseUrl).port);
    const text = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(requests.join('')));
      let received = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        received += chunk;
        if ((received.match(/HTTP\/1\.1 /g) ?? []).length === requests.length && /\}$/.test(received)) socket.end();
      });
      socket.on('close', () => resolve(received));
      socket.on('error', reject);
      setTimeout(() => socket.destroy(new Error(`answers so far: ${received}`)), 20_000).unref();
    });
    const bodies = text
      .split(/HTTP\/1\.1 /)
      .slice(1)
      .map((answer) => `${answer.slice(0, 3)} ${answer.slice(answer.indexOf('\r\n\r\n') + 4)}`);
    expect(bodies).toEqual([
      '200 {"success":true,"data":[{"v":1}]}',
      '200 {"success":true,"data":[]}',
      '200 {"data":{"id":"b_2.x~","v":2}}',
      '200 {"success":true,"data":[{"v":7}]}',
      '200 {"data":{"id":"pipe","v":7}}',
      '200 {"success":true,"data":[{"v":7}]}',
      expect.stringMatching(/^404 \{"error":\{"code":"NOT_FOUND"/),
      '200 {"success":true,"data":[{"v":2}]}',
    ]);
  });

  it('keeps serving when a client leaves in the middle of a body, counting it, and takes a body sent in pieces', async () => {
    const port = Number(new URL(server.baseUrl).port);
    const remaining = async (): Promise<number> =>
      Number((await send(server, 'GET', '/api/v1/tables/t/rows/a-1', bearer(TEST_API_KEY))).headers.find(([name]) => name === 'x-ratelimit-remaining')![1]);
    // A fresh one-second window with room for the whole exchange (~200 ms).
    await new Promise((resolve) => setTimeout(resolve, 1005 - (Date.now() % 1000)));
    const window = Math.floor(Date.now() / 1000);
    const before = await remaining();
    await new Promise<void>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.write(
          `POST /api/v1/query HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_API_KEY}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"sql":`,
        );
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 50);
      });
    });
    await new Promise((resolve) => setTimeout(resolve, 100)); // the server sees the connection close
    const after = await remaining();
    // The request whose client left counts against the limit as fastify's path counts it (at its headers).
    if (Math.floor(Date.now() / 1000) === window) expect(before - after).toBe(2);
    const payload = JSON.stringify({ sql: 'SELECT v FROM t WHERE id = $1', params: ['a-1'] });
    const text = await exchange(server, (socket) => {
      socket.write(`${queryHead(payload, 'Connection: close\r\n')}${payload.slice(0, 10)}`);
      setTimeout(() => socket.end(payload.slice(10)), 50);
    });
    expect(text.startsWith('HTTP/1.1 200')).toBe(true);
    expect(text.endsWith('{"success":true,"data":[{"v":1}]}')).toBe(true);
  });

  it("counts what it hands over because its work threw: refused for the client's error, error (none here) for a fault", async () => {
    await sql('CREATE TABLE nopk (v INT)');
    await sql('INSERT INTO nopk VALUES (1)');
    const wrongType = JSON.stringify({ sql: 'SELECT * FROM kinds WHERE id = $1', params: ['x'] });
    // Planned first (fastify's path), so the direct path takes the statement and its binding throws.
    await send(server, 'POST', '/api/v1/query', json(), JSON.stringify({ sql: 'SELECT * FROM kinds WHERE id = $1', params: [1] }));
    const before = await directDeclines(server);
    const SENT = 3;
    for (let i = 0; i < SENT; i++) {
      // A row id of a table without a primary key: the direct path's id parse throws INVALID_QUERY, fastify answers it.
      const row = await send(server, 'GET', '/api/v1/tables/nopk/rows/1', bearer(TEST_API_KEY));
      expect([row.status, JSON.parse(row.body.toString()).error.details.reason]).toEqual([400, 'no_primary_key']);
      const query = await send(server, 'POST', '/api/v1/query', json(), wrongType);
      expect([query.status, JSON.parse(query.body.toString()).error.details.sqlstate]).toEqual([422, '22P02']);
    }
    const after = await directDeclines(server);
    // Each, but for a request that comes when the key file is due to be read again (fastify's hook takes it: see the first test).
    for (const route of ['row', 'query'] as const) {
      expect(after[route].refused - before[route].refused, route).toBeGreaterThanOrEqual(SENT - 1);
      expect(after[route].refused - before[route].refused, route).toBeLessThanOrEqual(SENT);
    }
    // No request of the tests above made the direct path throw anything but the route's own 4xx error.
    expect({ row: after.row.error, query: after.query.error }).toEqual({ row: 0, query: 0 });
  });
});

describe('the direct path and the query metrics', () => {
  it('times a point SELECT from its body, as the route does, not from its headers', async () => {
    const { server, payload } = await serverWithPointRow('d');
    try {
      const sum = async (): Promise<number> => {
        const text = await (await fetch(`${server.baseUrl}/api/v1/metrics`, { headers: bearer(TEST_API_KEY) })).text();
        return Number(/^svc_query_duration_seconds_sum\{database="default"\} (\S+)$/m.exec(text)?.[1]);
      };
      const directBefore = await directAnswers(server);
      const before = await sum();
      const answer = await exchange(server, (socket) => {
        socket.write(queryHead(payload, 'Connection: close\r\n'));
        setTimeout(() => socket.end(payload), 400);
      });
      expect(answer.endsWith('{"success":true,"data":[{"id":1}]}')).toBe(true);
      expect((await directAnswers(server)).query).toBe(directBefore.query + 1);
      // The 400 ms the body took to come are not the statement's (the metrics requests in between are not queries).
      expect((await sum()) - before).toBeLessThan(0.2);
    } finally {
      await server.close();
    }
  });
});

describe('the direct path and the connection limit', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { SVC_MAX_CONNECTIONS: '1' } });
  });
  afterAll(() => server?.close());

  it('leaves a connection past the limit to fastify, which answers TOO_MANY_CONNECTIONS', async () => {
    const port = Number(new URL(server.baseUrl).port);
    const request = `GET /api/v1/tables/t/rows/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_API_KEY}\r\n\r\n`;
    const first = net.connect(port, '127.0.0.1');
    await new Promise((resolve) => first.once('connect', resolve));
    const answer = await exchange(server, (second) => second.write(request));
    first.destroy();
    expect(answer.startsWith('HTTP/1.1 503')).toBe(true);
    expect(answer).toContain('TOO_MANY_CONNECTIONS');
  });
});

describe('the direct path while the server closes', () => {
  it('closes a kept-alive connection once its answer is sent, so close() does not wait for the keep-alive timeout', async () => {
    const { server, payload } = await serverWithPointRow('c');
    try {
      // Two requests begun before close(), their bodies sent after it began: the point SELECT (the
      // direct path takes it) and a write (handed to fastify once its body is read).
      const insert = JSON.stringify({ sql: 'INSERT INTO c VALUES ($1)', params: [2] });
      let sendBodies: () => void = () => undefined;
      const bodiesSent = new Promise<void>((resolve) => (sendBodies = resolve));
      const answers = [payload, insert].map((body) =>
        exchange(server, (socket) => {
          socket.write(queryHead(body));
          void bodiesSent.then(() => socket.write(body));
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      const started = Date.now();
      const closed = server.close();
      await new Promise((resolve) => setTimeout(resolve, 50));
      sendBodies();
      await closed;
      const [received = '', written = ''] = await Promise.all(answers);
      // Taken in before close() began: carried out and answered, not refused SHUTTING_DOWN.
      expect(written.slice(0, 12)).toBe('HTTP/1.1 200');
      expect(written.endsWith('{"success":true,"data":[]}')).toBe(true);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(received.slice(0, 12)).toBe('HTTP/1.1 200');
      expect(received.endsWith('{"success":true,"data":[{"id":1}]}')).toBe(true);
    } finally {
      await server.close();
    }
  });
});
