import net from 'node:net';
import { decode } from '@msgpack/msgpack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../helpers/auth.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

/**
 * What every request goes through (protocols/http/fastify-base.ts): one onRequest and one onSend
 * hook of the listener's own, GET row and POST /query's point SELECT answered before their handler
 * returns, @fastify/websocket's hooks only on /graphql's routes. Each answer keeps every header and
 * status it had when each concern was a hook of its own and the handlers were async.
 */
describe('the request path of point reads', () => {
  let server: TestServer;
  let auth: Record<string, string>;

  beforeAll(async () => {
    server = await startTestServer();
    auth = bearer(server.apiKey);
    const sql = async (text: string): Promise<void> => {
      const response = await fetch(`${server.baseUrl}/api/v1/query`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ sql: text }),
      });
      expect(response.status).toBe(200);
    };
    await sql('CREATE TABLE p (id BIGINT PRIMARY KEY, name TEXT)');
    await sql("INSERT INTO p VALUES (1, 'one'), (2, 'two')");
  }, 60_000);

  afterAll(async () => {
    await server?.close();
  });

  const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
    fetch(`${server.baseUrl}/api/v1${path}`, { method, headers: { ...auth, ...headers } });
  const select = (id: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.baseUrl}/api/v1/query`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ sql: 'SELECT * FROM p WHERE id = $1', params: [id] }),
    });

  it('a GET row and a point SELECT, first read and cached, carry the request id, X-RateLimit-*, Vary and the JSON type', async () => {
    for (const round of [1, 2, 3]) {
      let remaining: number | null = null;
      for (const response of [await get('/tables/p/rows/1', { 'x-request-id': `get-${round}` }), await select(1, { 'x-request-id': `select-${round}` })]) {
        expect(response.status).toBe(200);
        expect(response.headers.get('x-request-id')).toMatch(/^(get|select)-\d$/);
        expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(response.headers.get('vary')).toBe('Accept');
        expect(response.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
        expect(response.headers.get('x-ratelimit-reset')).toMatch(/^\d+$/);
        expect(response.headers.get('x-ratelimit-reset-after')).toMatch(/^\d+$/);
        const left = Number(response.headers.get('x-ratelimit-remaining'));
        // Each request counts once against the credential (a new window may start between two).
        if (remaining !== null && left < remaining) expect(left).toBe(remaining - 1);
        remaining = left;
      }
      expect(await (await get('/tables/p/rows/1')).text()).toBe('{"data":{"id":1,"name":"one"}}');
      expect(await (await select(1)).text()).toBe('{"success":true,"data":[{"id":1,"name":"one"}]}');
    }
  });

  it('a cached read answers HEAD, MessagePack and metadata as the SQL path did; a missing row is a 404 envelope', async () => {
    await get('/tables/p/rows/2');
    const head = await get('/tables/p/rows/2', {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String('{"data":{"id":2,"name":"two"}}'.length));
    expect(await head.text()).toBe('');
    const packed = await get('/tables/p/rows/2', { accept: 'application/msgpack' });
    expect(packed.headers.get('content-type')).toBe('application/msgpack');
    expect(decode(new Uint8Array(await packed.arrayBuffer()))).toEqual({ data: { id: 2, name: 'two' } });
    const withMetadata = await fetch(`${server.baseUrl}/api/v1/query`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ sql: 'SELECT * FROM p WHERE id = $1', params: [2], include_metadata: true }),
    });
    const body = (await withMetadata.json()) as { data: unknown; metadata: { row_count: number } };
    expect(body.data).toEqual([{ id: 2, name: 'two' }]);
    expect(body.metadata.row_count).toBe(1);
    for (const missing of [await get('/tables/p/rows/9', { 'x-request-id': 'missing' }), await get('/tables/p/rows/9', { 'x-request-id': 'missing' })]) {
      expect(missing.status).toBe(404);
      expect(missing.headers.get('x-request-id')).toBe('missing');
      expect(missing.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
      expect(((await missing.json()) as { error: { code: string; request_id: string } }).error).toMatchObject({ code: 'NOT_FOUND', request_id: 'missing' });
    }
    expect(await (await select(9)).text()).toBe('{"success":true,"data":[]}');
  });

  it('answers pipelined reads on one connection in order, cached and not, GET and point SELECT', async () => {
    const port = Number(new URL(server.baseUrl).port);
    const body = (id: number): string => JSON.stringify({ sql: 'SELECT * FROM p WHERE id = $1', params: [id] });
    const requests = [1, 2, 9, 1, 2].flatMap((id) => [
      `GET /api/v1/tables/p/rows/${id} HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth.authorization}\r\n\r\n`,
      `POST /api/v1/query HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth.authorization}\r\nContent-Type: application/json\r\nContent-Length: ${body(id).length}\r\n\r\n${body(id)}`,
    ]);
    const text = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(requests.join('')));
      let received = '';
      socket.on('data', (chunk) => {
        received += chunk.toString('utf8');
        if ((received.match(/HTTP\/1\.1 /g) ?? []).length === requests.length && /\}$/.test(received)) socket.end();
      });
      socket.on('close', () => resolve(received));
      socket.on('error', reject);
      setTimeout(() => socket.destroy(new Error(`answers so far: ${received}`)), 20_000).unref();
    });
    const bodies = [...text.matchAll(/\r\n\r\n(\{[^\r]*?\})(?=HTTP\/1\.1 |$)/g)].map((m) => m[1]);
    const row = (id: number): string => (id === 9 ? '' : `{"id":${id},"name":"${id === 1 ? 'one' : 'two'}"}`);
    expect(bodies.length).toBe(requests.length);
    [1, 2, 9, 1, 2].forEach((id, i) => {
      if (id === 9) expect(bodies[2 * i]).toContain('"NOT_FOUND"');
      else expect(bodies[2 * i]).toBe(`{"data":${row(id)}}`);
      expect(bodies[2 * i + 1]).toBe(`{"success":true,"data":[${row(id)}]}`);
    });
  });

  it('an upgrade request to a path without a WebSocket is answered as the HTTP request it also is, then closed', async () => {
    const port = Number(new URL(server.baseUrl).port);
    const upgrade = (path: string, headers = ''): Promise<{ answer: string; closed: boolean }> =>
      new Promise((resolve) => {
        const socket = net.connect(port, '127.0.0.1');
        let answer = '';
        const timer = setTimeout(() => {
          socket.destroy();
          resolve({ answer, closed: false });
        }, 5_000);
        socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
        socket.on('close', () => {
          clearTimeout(timer);
          resolve({ answer, closed: true });
        });
        socket.write(
          `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n${headers}\r\n`,
        );
      });
    const cases: [string, string, RegExp][] = [
      ['/api/v1/health', '', /^HTTP\/1\.1 200 /],
      ['/no/such/path', '', /^HTTP\/1\.1 404 /],
      ['/api/v1/tables/p/rows/1', '', /^HTTP\/1\.1 401 /],
      ['/api/v1/tables/p/rows/1', `Authorization: ${auth.authorization}\r\n`, /^HTTP\/1\.1 200 [^]*\{"data":\{"id":1,"name":"one"\}\}$/],
    ];
    for (const [path, headers, expected] of cases) {
      const { answer, closed } = await upgrade(path, headers);
      expect(answer).toMatch(expected);
      expect(answer).toMatch(/\r\nx-ratelimit-limit: \d+\r\n/i);
      expect(closed).toBe(true);
    }
    // /graphql still upgrades (the GraphQL WebSocket transport answers 101).
    const socket = net.connect(port, '127.0.0.1');
    const answer = await new Promise<string>((resolve) => {
      socket.once('data', (chunk) => resolve(chunk.toString('latin1')));
      socket.write(
        'GET /graphql HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n',
      );
    });
    socket.destroy();
    expect(answer).toMatch(/^HTTP\/1\.1 101 /);
  });
});
