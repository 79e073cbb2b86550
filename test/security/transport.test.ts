/**
 * Threat: abuse of the transport. Oversize headers and bodies are refused with the error envelope;
 * a client sending a byte now and then (slowloris), a slow body or nothing at all is cut off by
 * headersTimeoutMs / requestTimeoutMs with 408, and many such clients do not starve others; every
 * answer of every listener carries the spec's X-RateLimit-* headers. Bounded: a few seconds each.
 */
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, bearer } from '../helpers/auth.js';
import { freePort } from '../helpers/cli.js';
import { startTestServer, TEST_API_KEY, type TestServer } from '../helpers/sql-server.js';
import { rawConnection, untilClosed } from './helpers.js';

const HEADERS_TIMEOUT_MS = 1000;
const REQUEST_TIMEOUT_MS = 2000;
const BODY_LIMIT_BYTES = 4096;
const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-ratelimit-reset-after'];

let server: TestServer;
let vectorUrl = '';
let opsUrl = '';

/** Status line and lower-cased headers of a raw HTTP/1.1 answer. */
function parseRaw(text: string): { status: number; headers: Record<string, string>; body: string } {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const at = line.indexOf(':');
    headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

function expectRateHeaders(headers: Headers | Record<string, string>, where: string): void {
  for (const name of RATE_HEADERS) {
    const value = headers instanceof Headers ? headers.get(name) : headers[name];
    expect(value, `${name} on ${where}`).toMatch(/^\d+$/);
  }
}

/** Sends `text` one byte every `everyMs` until the server closes the connection. */
function dribble(socket: Socket, text: string, everyMs: number): void {
  let i = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || i >= text.length) return clearInterval(timer);
    socket.write(text[i++]!);
  }, everyMs);
  socket.once('close', () => clearInterval(timer));
}

beforeAll(async () => {
  const vectorPort = await freePort();
  const opsPort = await freePort();
  server = await startTestServer({
    env: {
      SVC_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      SVC_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      SVC_BODY_LIMIT_BYTES: String(BODY_LIMIT_BYTES),
      SVC_VECTOR_PORT: String(vectorPort),
      SVC_OPS_PORT: String(opsPort),
    },
  });
  vectorUrl = `http://127.0.0.1:${vectorPort}`;
  opsUrl = `http://127.0.0.1:${opsPort}`;
});
afterAll(() => server?.close());

describe('oversize requests', () => {
  it('headers past 16 KiB get 400 headers_too_large in the envelope, with a request id and the rate-limit headers', async () => {
    const socket = await rawConnection(server.baseUrl);
    const closed = untilClosed(socket, 5000);
    socket.write(`GET /api/v1/live HTTP/1.1\r\nHost: x\r\nX-Padding: ${'p'.repeat(20_000)}\r\n\r\n`);
    const answer = parseRaw((await closed).text);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).error).toMatchObject({ code: 'INVALID_QUERY', details: { reason: 'headers_too_large', limit_bytes: 16_384 } });
    expect(answer.headers['x-request-id']).toMatch(/^[0-9A-Z]{26}$/);
    expectRateHeaders(answer.headers, 'a headers_too_large answer');
  });

  it('a body past the limit is 413 PAYLOAD_TOO_LARGE, declared or chunked, on /api/v1 and the vector protocol', async () => {
    const body = JSON.stringify({ sql: `SELECT '${'b'.repeat(BODY_LIMIT_BYTES)}'` });
    const declared = await api(server.baseUrl, '/query', { headers: bearer(TEST_API_KEY), body: JSON.parse(body) });
    expect(declared.status).toBe(413);
    expect(declared.body.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { limit_bytes: BODY_LIMIT_BYTES } });
    expectRateHeaders(declared.headers, 'a 413');
    // Chunked: no Content-Length for the server to refuse up front.
    const socket = await rawConnection(server.baseUrl);
    const closed = untilClosed(socket, 5000);
    socket.write(
      `POST /api/v1/query HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_API_KEY}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`,
    );
    for (let i = 0; i < 10; i++) socket.write(`400\r\n${'c'.repeat(0x400)}\r\n`);
    socket.write('0\r\n\r\n');
    expect(parseRaw((await closed).text).status).toBe(413);
    const vectors = await fetch(`${vectorUrl}/indexes/x/vectors/upsert`, {
      method: 'POST',
      headers: { 'api-key': TEST_API_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ vectors: [{ id: 'a', values: Array.from({ length: 2000 }, () => 0.5) }] }),
    });
    expect(vectors.status).toBe(413);
  });
});

describe('slow clients', () => {
  it('a connection sending one byte at a time, or nothing, or a slow body, is closed with 408 REQUEST_TIMEOUT', async () => {
    const started = Date.now();
    const slowHeaders = await rawConnection(server.baseUrl);
    const idle = await rawConnection(server.baseUrl);
    const slowBody = await rawConnection(server.baseUrl);
    const closed = [untilClosed(slowHeaders, 8000), untilClosed(idle, 8000), untilClosed(slowBody, 8000)];
    dribble(slowHeaders, `GET /api/v1/live HTTP/1.1\r\nHost: x\r\nX-Slow: ${'s'.repeat(100)}\r\n\r\n`, 200);
    slowBody.write(
      `POST /api/v1/query HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_API_KEY}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`,
    );
    dribble(slowBody, ' '.repeat(999), 200);
    const [headersAnswer, idleAnswer, bodyAnswer] = await Promise.all(closed);
    for (const [answer, limitMs] of [
      [headersAnswer!, HEADERS_TIMEOUT_MS],
      [idleAnswer!, HEADERS_TIMEOUT_MS],
      [bodyAnswer!, REQUEST_TIMEOUT_MS],
    ] as const) {
      const parsed = parseRaw(answer.text);
      expect(parsed.status).toBe(408);
      expect(JSON.parse(parsed.body).error.code).toBe('REQUEST_TIMEOUT');
      expectRateHeaders(parsed.headers, 'a 408');
      // node checks the deadlines every quarter of the headers timeout (at most each second).
      expect(answer.afterMs).toBeGreaterThanOrEqual(limitMs - 100);
      expect(answer.afterMs).toBeLessThan(limitMs + 1500);
    }
    expect(Date.now() - started).toBeLessThan(6000);
  });

  it('many slow clients do not starve the others, and all of them are cut off', async () => {
    const slow = await Promise.all(Array.from({ length: 100 }, () => rawConnection(server.baseUrl)));
    const closed = slow.map((socket) => untilClosed(socket, 8000));
    for (const socket of slow) dribble(socket, 'GET /api/v1/live HTTP/1.1\r\nHost: x\r\n\r\n', 300);
    const latencies: number[] = [];
    for (let i = 0; i < 20; i++) {
      const started = Date.now();
      const answer = await api(server.baseUrl, '/query', { headers: bearer(TEST_API_KEY), body: { sql: 'SELECT 1 AS one' } });
      expect(answer.status).toBe(200);
      latencies.push(Date.now() - started);
    }
    expect(Math.max(...latencies)).toBeLessThan(1000);
    const answers = await Promise.all(closed);
    expect(answers.every((a) => parseRaw(a.text).status === 408)).toBe(true);
    expect(Math.max(...answers.map((a) => a.afterMs))).toBeLessThan(HEADERS_TIMEOUT_MS + 2000);
  });
});

describe('X-RateLimit-* on every answer', () => {
  it('of the API listener: probes, unmatched paths, errors before and after auth, HEAD', async () => {
    const cases: [string, RequestInit][] = [
      ['/api/v1/live', {}],
      ['/api/v1/ready', {}],
      ['/api/v1/health', {}],
      ['/api/v1/live', { method: 'HEAD' }],
      ['/', {}],
      ['/nothing/here', {}],
      ['/api/v1/nothing', { method: 'DELETE' }],
      ['/api/v1/query', {}],
      ['/api/v1/query', { method: 'POST', headers: { authorization: 'Bearer wrong' } }],
      ['/api/v1/query', { method: 'POST', headers: { authorization: `Bearer ${TEST_API_KEY}`, 'content-type': 'application/json' }, body: '{bad json' }],
      ['/api/v1/tables/none', { headers: { authorization: `Bearer ${TEST_API_KEY}` } }],
      ['/api/v1/info', { headers: { authorization: `Bearer ${TEST_API_KEY}` } }],
    ];
    for (const [path, init] of cases) {
      const response = await fetch(`${server.baseUrl}${path}`, init);
      await response.arrayBuffer();
      expectRateHeaders(response.headers, `${init.method ?? 'GET'} ${path} (${response.status})`);
    }
  });

  it('of the vector protocol on its own port, and of the ops port', async () => {
    const cases: [string, RequestInit][] = [
      [`${vectorUrl}/indexes`, { headers: { 'api-key': TEST_API_KEY } }],
      [`${vectorUrl}/indexes`, { headers: { 'api-key': 'wrong' } }],
      [`${vectorUrl}/indexes`, {}],
      [
        `${vectorUrl}/indexes/missing/query`,
        { method: 'POST', headers: { 'api-key': TEST_API_KEY, 'content-type': 'application/json' }, body: '{"vector":[1],"topK":1}' },
      ],
      [`${vectorUrl}/unmatched`, {}],
      [`${opsUrl}/health`, {}],
      [`${opsUrl}/health/ready`, {}],
      [`${opsUrl}/health/detailed`, {}],
      [`${opsUrl}/metrics`, {}],
      [`${opsUrl}/unmatched`, {}],
    ];
    for (const [url, init] of cases) {
      const response = await fetch(url, init);
      await response.arrayBuffer();
      expectRateHeaders(response.headers, `${init.method ?? 'GET'} ${url} (${response.status})`);
    }
  });
});
