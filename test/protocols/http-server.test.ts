import { connect, type Socket } from 'node:net';
import type { FastifyPluginAsync } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ERROR_CODES, SvcError } from '../../core/errors.js';
import { HTTP_STATUS_BY_CODE } from '../../protocols/errors.js';
import { getJson, startHttp, type Running } from './helpers.js';

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** Routes a resource plugin could have, to reach every error path through real HTTP. */
const testRoutes: FastifyPluginAsync = async (app) => {
  app.post('/echo', async (request) => ({ body: request.body }));
  app.post(
    '/strict',
    {
      schema: {
        body: {
          type: 'object',
          required: ['name'],
          additionalProperties: false,
          properties: { name: { type: 'string' }, size: { type: 'integer' } },
        },
      },
    },
    async () => ({ ok: true }),
  );
  app.get('/boom', async () => {
    throw new Error('secret internal detail /var/lib/svcdb/segment-0001');
  });
  app.get('/svc/:code', async (request) => {
    const { code } = request.params as { code: (typeof ERROR_CODES)[number] };
    throw new SvcError(code, `thrown ${code}`, { field: 'x' });
  });
  app.get('/items/:id', async (request) => ({ id: (request.params as { id: string }).id }));
  app.get('/slow', async () => {
    await new Promise((resolve) => setTimeout(resolve, 300));
    return { slow: true };
  });
  app.get('/slow-abandoned', async () => {
    await new Promise((resolve) => setTimeout(resolve, 300));
    abandonedHandlerDone = true;
    return { slow: true };
  });
};
/** Set when /slow-abandoned's handler returns (its client left long before). */
let abandonedHandlerDone = false;

/** A plain TCP connection to the server (to write HTTP/1.1 by hand), and all it has received so far. */
async function rawConnection(url: string): Promise<{ socket: Socket; received: () => string }> {
  const socket = connect(Number(new URL(url).port), '127.0.0.1');
  let text = '';
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, received: () => text };
}

describe('HTTP server: admin routes', () => {
  let server: Running;
  beforeEach(async () => {
    server = await startHttp({ plugins: [testRoutes], flags: { 'body-limit-bytes': '2048' } });
  });
  afterEach(async () => {
    await server.close();
  });

  it('GET /api/v1/live answers {alive:true}', async () => {
    const res = await getJson(`${server.url}/api/v1/live`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ alive: true });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('GET /api/v1/ready is 200 when ready and 503 with the same shape when not', async () => {
    const ok = await getJson(`${server.url}/api/v1/ready`);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ ready: true, checks: { database: true, connections_available: true, replication_synced: true } });

    server.status.ready = false;
    const starting = await getJson(`${server.url}/api/v1/ready`);
    expect(starting.status).toBe(503);
    expect(starting.body).toEqual({ ready: false, checks: { database: false, connections_available: true, replication_synced: true } });
  });

  it('ready reports connections_available=false when the listener is at its cap (SVC_MAX_CONNECTIONS)', async () => {
    const capped = await startHttp({ flags: { 'max-connections': '1' } });
    try {
      // The probe's own connection is the one allowed: no other can be accepted.
      const res = await getJson(`${capped.url}/api/v1/ready`);
      expect(res.status).toBe(503);
      expect(res.body.checks.connections_available).toBe(false);
    } finally {
      await capped.close();
    }
  });

  it('GET /api/v1/health is healthy with every component, uptime and version', async () => {
    const res = await getJson(`${server.url}/api/v1/health`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'healthy',
      version: '7.0.0',
      uptime_seconds: expect.any(Number),
      components: { storage: 'healthy', query_engine: 'healthy', replication: 'not_configured', cache: 'healthy' },
    });
    expect(Number.isInteger(res.body.uptime_seconds)).toBe(true);
    expect(res.body.uptime_seconds).toBeGreaterThanOrEqual(4);
  });

  it("health stays 200 while the engine starts (readiness is /ready's job)", async () => {
    server.status.ready = false;
    const res = await getJson(`${server.url}/api/v1/health`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('healthy');
    expect(res.body.components.query_engine).toBe('starting');
  });

  it('health is unhealthy with 503 when storage cannot write', async () => {
    server.status.storageOk = false;
    const res = await getJson(`${server.url}/api/v1/health`);
    expect(res.status).toBe(503);
    expect(res.body.status).toBe('unhealthy');
    expect(res.body.components.storage).toBe('unhealthy');
    expect(res.body.components.query_engine).toBe('unhealthy');
  });

  it('admin routes need no credentials and HEAD works', async () => {
    const res = await fetch(`${server.url}/api/v1/live`, { method: 'HEAD' });
    expect(res.status).toBe(200);
  });
});

describe('HTTP server: error envelope', () => {
  let server: Running;
  beforeEach(async () => {
    server = await startHttp({ plugins: [testRoutes], flags: { 'body-limit-bytes': '2048' } });
  });
  afterEach(async () => {
    await server.close();
  });

  it('an unknown route is a 404 NOT_FOUND envelope', async () => {
    const res = await getJson(`${server.url}/api/v1/nope?x=1`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      error: { code: 'NOT_FOUND', message: 'no route for GET /api/v1/nope', details: { method: 'GET' }, request_id: expect.stringMatching(ULID) },
    });
    expect(res.headers.get('x-request-id')).toBe(res.body.error.request_id);
  });

  it('a malformed JSON body is a 400 envelope', async () => {
    const res = await getJson(`${server.url}/api/v1/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a": ',
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'INVALID_QUERY', details: { reason: 'malformed_json' } });
    expect(res.body.error.message).toBe('request body is not valid JSON');
  });

  it('an empty JSON body is no body: 422 where a body is required, accepted where none is; an unsupported content type is a 400 envelope', async () => {
    const empty = await getJson(`${server.url}/api/v1/strict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '' });
    expect(empty.status).toBe(422);
    expect(empty.body.error.details.reason).toBe('schema_validation');
    expect(empty.body.error.message).toMatch(/body must be object/);
    // Clients that send Content-Type: application/json on every request (DELETE, commit) are not refused.
    const bodiless = await getJson(`${server.url}/api/v1/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '' });
    expect(bodiless.status).toBe(200);
    expect(bodiless.body).toEqual({});
    const xml = await getJson(`${server.url}/api/v1/echo`, { method: 'POST', headers: { 'content-type': 'application/xml' }, body: '<a/>' });
    expect(xml.status).toBe(400);
    expect(xml.body.error.details.reason).toBe('unsupported_media_type');
  });

  it('a body over the limit is 413 PAYLOAD_TOO_LARGE naming the limit', async () => {
    const res = await getJson(`${server.url}/api/v1/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pad: 'x'.repeat(4096) }),
    });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(res.body.error.message).toContain('2048 bytes');
    expect(res.body.error.details).toEqual({ limit_bytes: 2048 });
  });

  it('a body failing the route schema is a 422 VALIDATION_ERROR envelope naming the field', async () => {
    const missing = await getJson(`${server.url}/api/v1/strict`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ size: 1 }),
    });
    expect(missing.status).toBe(422);
    expect(missing.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { reason: 'schema_validation', location: 'body', field: 'name' },
    });
    const wrongType = await getJson(`${server.url}/api/v1/strict`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'a', size: 'big' }),
    });
    expect(wrongType.body.error.details.field).toBe('size');
    expect(wrongType.body.error.message).toBe('body.size must be integer');
    const extra = await getJson(`${server.url}/api/v1/strict`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'a', other: 1 }),
    });
    expect(extra.status).toBe(422);
  });

  it('a path parameter that is not valid percent-encoding is a 400 envelope with a request id', async () => {
    const res = await getJson(`${server.url}/api/v1/items/%E0%A4%A`, { headers: { 'x-request-id': 'bad-url-1' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'INVALID_QUERY', details: { reason: 'bad_url' }, request_id: 'bad-url-1' });
    expect(res.headers.get('x-request-id')).toBe('bad-url-1');
  });

  it('every SvcError code is answered with the status of the one table', async () => {
    for (const code of ERROR_CODES) {
      const res = await getJson(`${server.url}/api/v1/svc/${code}`);
      expect(res.status, code).toBe(HTTP_STATUS_BY_CODE[code]);
      expect(res.body.error).toEqual({ code, message: `thrown ${code}`, details: { field: 'x' }, request_id: expect.any(String) });
    }
  });

  it('an unknown error is a 500 INTERNAL_ERROR that leaks nothing and is logged at error level', async () => {
    const res = await getJson(`${server.url}/api/v1/boom`, { headers: { 'x-request-id': 'trace-boom-1' } });
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe('INTERNAL_ERROR');
    expect(JSON.stringify(res.body)).not.toContain('secret');
    expect(res.body.error.request_id).toBe('trace-boom-1');
    const logged = server.lines.find((l) => l.request_id === 'trace-boom-1' && l.level === 50);
    expect(logged?.msg).toBe('request failed');
    expect(JSON.stringify(logged)).toContain('secret internal detail');
  });

  it('4xx are logged at info, once', async () => {
    await getJson(`${server.url}/api/v1/svc/TABLE_NOT_FOUND`, { headers: { 'x-request-id': 'trace-404' } });
    const lines = server.lines.filter((l) => l.request_id === 'trace-404' && l.level >= 30);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 30, msg: 'request rejected', code: 'TABLE_NOT_FOUND', statusCode: 404 });
  });
});

describe('HTTP server: request ids', () => {
  let server: Running;
  beforeEach(async () => {
    server = await startHttp({ plugins: [testRoutes] });
  });
  afterEach(async () => {
    await server.close();
  });

  it('echoes a client X-Request-ID and uses it in logs and errors', async () => {
    const res = await getJson(`${server.url}/api/v1/svc/NOT_FOUND`, { headers: { 'X-Request-ID': 'client-abc-123' } });
    expect(res.headers.get('x-request-id')).toBe('client-abc-123');
    expect(res.body.error.request_id).toBe('client-abc-123');
    const lines = server.lines.filter((l) => l.request_id === 'client-abc-123');
    expect(lines.length).toBeGreaterThan(0);
  });

  it('generates a ULID when there is none, and puts it in every log line of the request', async () => {
    const res = await fetch(`${server.url}/api/v1/live`);
    const id = res.headers.get('x-request-id');
    expect(id).toMatch(ULID);
    const lines = server.lines.filter((l) => l.msg === 'request completed');
    expect(lines.at(-1)?.request_id).toBe(id);
  });

  it("puts the request id in every line logged while serving a request, the error handler's included", async () => {
    const requests: [string, RequestInit][] = [
      ['/api/v1/boom', {}],
      ['/api/v1/svc/TABLE_NOT_FOUND', {}],
      ['/api/v1/nope', {}],
      ['/api/v1/items/%E0%A4%A', {}],
      ['/api/v1/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a": ' }],
      ['/api/v1/live', {}],
    ];
    for (const [index, [path, init]] of requests.entries()) {
      const id = `every-line-${index}`;
      const from = server.lines.length;
      const res = await fetch(`${server.url}${path}`, { ...init, headers: { ...(init.headers as Record<string, string>), 'x-request-id': id } });
      await res.text();
      // The completion line is written once the response has gone.
      await new Promise((resolve) => setTimeout(resolve, 20));
      const logged = server.lines.slice(from);
      expect(logged.length, path).toBeGreaterThan(0);
      for (const line of logged) expect(line.request_id, `${path}: "${line.msg}"`).toBe(id);
    }
  });

  it('replaces an unsafe X-Request-ID instead of echoing it', async () => {
    const res = await fetch(`${server.url}/api/v1/live`, { headers: { 'x-request-id': 'has space' } });
    expect(res.headers.get('x-request-id')).toMatch(ULID);
    const long = await fetch(`${server.url}/api/v1/live`, { headers: { 'x-request-id': 'a'.repeat(129) } });
    expect(long.headers.get('x-request-id')).toMatch(ULID);
  });

  it('close ends a kept-alive connection once the response in flight on it is sent', async () => {
    const { socket, received } = await rawConnection(server.url);
    socket.write('GET /api/v1/slow HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    // A kept-alive connection left open after that response would hold close() for the 72 s keep-alive timeout.
    const closed = await Promise.race([server.app.close().then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 5000))]);
    expect(closed).toBe(true);
    await new Promise<void>((resolve) => (socket.closed ? resolve() : socket.once('close', () => resolve())));
    expect(received()).toContain('HTTP/1.1 200');
    expect(received()).toContain('{"slow":true}');
  });

  it('close waits for a handler whose client left (what stops after it must outlive the handler)', async () => {
    abandonedHandlerDone = false;
    const { socket } = await rawConnection(server.url);
    socket.write('GET /api/v1/slow-abandoned HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await server.app.close();
    expect(abandonedHandlerDone).toBe(true);
  });

  it('requests arriving on a kept-alive connection during close get SHUTTING_DOWN in the envelope', async () => {
    const { socket, received } = await rawConnection(server.url);
    socket.write('GET /api/v1/slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const closing = server.app.close();
    await new Promise((resolve) => setTimeout(resolve, 20));
    socket.write('GET /api/v1/live HTTP/1.1\r\nHost: x\r\nX-Request-ID: late-1\r\n\r\n');
    await closing;
    await new Promise<void>((resolve) => (socket.closed ? resolve() : socket.once('close', () => resolve())));
    expect(received()).toContain('{"slow":true}');
    expect(received()).toContain('HTTP/1.1 503');
    expect(received()).toContain('"code":"SHUTTING_DOWN"');
    expect(received()).toContain('"request_id":"late-1"');
  });
});
