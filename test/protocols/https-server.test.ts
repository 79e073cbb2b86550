import { connect as h2connect, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import { Agent, request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { decode } from '@msgpack/msgpack';
import type { FastifyPluginAsync } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../bin/app.js';
import type { ServeHandle } from '../../bin/app-types.js';
import { loadTlsMaterial } from '../../protocols/http/tls.js';
import { untilClientLeaves } from '../../protocols/http/client-abort.js';
import { createHttpServer } from '../../protocols/http/server.js';
import { listen } from '../../protocols/listen.js';
import { needs } from '../helpers/optional-tool.js';
import { tempDir } from '../helpers/stack.js';
import { hasOpenssl, makeTestCert, type TestCert } from '../helpers/tls-cert.js';
import { FakeEngineStatus, captureLogger, getJson, testConfig } from './helpers.js';

const KEY = 'tls-key-123';
const OPENSSL = hasOpenssl();
if (!OPENSSL) console.warn('https-server.test.ts skipped: no `openssl` on PATH to make a test certificate (.ci/run installs it)');

interface H2Response {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

function h2Request(session: ClientHttp2Session, headers: Record<string, string>, body?: string): Promise<H2Response> {
  return new Promise((resolve, reject) => {
    const stream = session.request(headers, { endStream: body === undefined });
    const chunks: Buffer[] = [];
    let responseHeaders: IncomingHttpHeaders = {};
    stream.on('response', (h) => {
      responseHeaders = h;
    });
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve({ status: Number(responseHeaders[':status']), headers: responseHeaders, body: Buffer.concat(chunks) }));
    stream.on('error', reject);
    if (body !== undefined) stream.end(body);
  });
}

function h1Request(url: string, ca: string, path: string): Promise<{ status: number; httpVersion: string; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${url}${path}`, { ca, agent: new Agent({ keepAlive: false }) }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, httpVersion: res.httpVersion, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const openSession = (url: string, ca: string): Promise<ClientHttp2Session> =>
  new Promise((resolve, reject) => {
    const session = h2connect(url, { ca });
    session.once('connect', () => resolve(session));
    session.once('error', reject);
  });

describe.skipIf(!OPENSSL)(`${needs('openssl')} HTTPS listener: HTTP/2 with HTTP/1.1 fallback (SVC_HTTPS_PORT)`, () => {
  let cert: TestCert;
  let server: ServeHandle;
  let remove: () => Promise<void>;
  let session: ClientHttp2Session;
  const auth = { authorization: `Bearer ${KEY}` };

  beforeAll(async () => {
    cert = await makeTestCert();
    const dir = await tempDir('svcdb-https-');
    remove = dir.remove;
    // The certificate as a file path and the key as PEM text: both forms are accepted.
    const config = testConfig({ data: dir.dir, 'api-key': KEY, 'log-level': 'silent', 'https-port': '0', 'tls-cert': cert.certPath, 'tls-key': cert.key });
    server = await startServer(config, pino({ level: 'silent' }));
    session = await openSession(server.httpsUrl!, cert.cert);
  });
  afterAll(async () => {
    session?.close();
    await server?.close('test');
    await remove?.();
    await cert?.remove();
  });

  it('reports an https URL next to the plain one', () => {
    expect(server.httpsUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(server.httpUrl).toMatch(/^http:\/\//);
  });

  it('speaks HTTP/2 to a client offering h2 (ALPN) and serves the admin routes', async () => {
    expect(session.alpnProtocol).toBe('h2');
    const res = await h2Request(session, { ':path': '/api/v1/live', 'x-request-id': 'h2-live-1' });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.toString('utf8'))).toEqual({ alive: true });
    expect(res.headers['x-request-id']).toBe('h2-live-1');
  });

  it('runs queries over HTTP/2, in JSON and in MessagePack, with the same credentials', async () => {
    const sql = JSON.stringify({ sql: 'SELECT 1 AS one' });
    const headers = { ':method': 'POST', ':path': '/api/v1/query', 'content-type': 'application/json', ...auth };
    const json = await h2Request(session, headers, sql);
    expect(json.status).toBe(200);
    expect(JSON.parse(json.body.toString('utf8'))).toEqual({ success: true, data: [{ one: 1 }] });
    const packed = await h2Request(session, { ...headers, accept: 'application/msgpack' }, sql);
    expect(packed.headers['content-type']).toBe('application/msgpack');
    expect(decode(packed.body)).toEqual({ success: true, data: [{ one: 1 }] });
    const denied = await h2Request(session, { ':method': 'POST', ':path': '/api/v1/query', 'content-type': 'application/json' }, sql);
    expect(denied.status).toBe(401);
  });

  it('streams NDJSON over HTTP/2', async () => {
    const res = await h2Request(
      session,
      { ':method': 'POST', ':path': '/api/v1/query/stream', 'content-type': 'application/json', ...auth },
      JSON.stringify({ sql: 'SELECT g FROM generate_series(1, 2500) g', batch_size: 1000 }),
    );
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    const lines = res.body.toString('utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(2500);
    expect(JSON.parse(lines[2499]!)).toEqual({ g: 2500 });
  });

  it('answers HTTP/1.1 to a client without h2', async () => {
    const res = await h1Request(server.httpsUrl!, cert.cert, '/api/v1/health');
    expect(res.status).toBe(200);
    expect(res.httpVersion).toBe('1.1');
    expect(JSON.parse(res.body)).toMatchObject({ status: 'healthy', version: '7.0.0' });
  });

  it('serves the same routes as the plain listener', async () => {
    const [plain, secure] = await Promise.all([getJson(`${server.httpUrl}/api/v1/ready`), h2Request(session, { ':path': '/api/v1/ready' })]);
    expect(plain.status).toBe(200);
    expect(JSON.parse(secure.body.toString('utf8'))).toEqual(plain.body);
  });
});

describe.skipIf(!OPENSSL)(`${needs('openssl')} HTTPS listener: connection limit and close`, () => {
  let cert: TestCert;
  beforeAll(async () => {
    cert = await makeTestCert();
  });
  afterAll(async () => {
    await cert?.remove();
  });

  async function startTls(flags: Record<string, string> = {}) {
    const { logger } = captureLogger();
    const config = testConfig(flags);
    const app = createHttpServer({ config, logger, status: new FakeEngineStatus(), tls: { key: cert.key, cert: cert.cert } });
    const url = await listen(app, { host: '127.0.0.1', port: 0, settingName: 'SVC_HTTPS_PORT' });
    return { app, url };
  }

  it('logs an HTTP/2 request failed after its body as a failure, one whose client reset its stream as a client that left, and cancels its statement', async () => {
    const { lines, logger } = captureLogger();
    let cancelled = 0;
    const routes: FastifyPluginAsync = async (app) => {
      app.post('/late', async () => {
        await new Promise((resolve) => setTimeout(resolve, 10));
        throw new Error('failed late');
      });
      app.post('/cancel', async (_request, reply) =>
        untilClientLeaves(reply, (signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve((cancelled += 1))))),
      );
      app.post('/left', async (request) => {
        await new Promise((resolve) =>
          (request.raw as unknown as { stream: { once(e: string, f: () => void): void } }).stream.once('close', () => resolve(undefined)),
        );
        throw new Error('cancelled because the client left');
      });
    };
    const app = createHttpServer({ config: testConfig(), logger, status: new FakeEngineStatus(), tls: { key: cert.key, cert: cert.cert }, plugins: [routes] });
    const url = await listen(app, { host: '127.0.0.1', port: 0, settingName: 'SVC_HTTPS_PORT' });
    const session = await openSession(url, cert.cert);
    const lineOf = async (id: string, msg: string): Promise<Record<string, unknown> | undefined> => {
      for (let i = 0; i < 250; i++) {
        const line = lines.find((l) => l['request_id'] === id && l.msg === msg);
        if (line !== undefined) return line;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return undefined;
    };
    try {
      const post = { ':method': 'POST', 'content-type': 'application/json' };
      const late = await h2Request(session, { ...post, ':path': '/api/v1/late', 'x-request-id': 'h2-late' }, '{"a":1}');
      expect(late.status).toBe(500);
      expect(await lineOf('h2-late', 'request failed')).toMatchObject({ level: 50, statusCode: 500 });
      const stream = session.request({ ...post, ':path': '/api/v1/left', 'x-request-id': 'h2-left' }, { endStream: false });
      stream.on('error', () => undefined);
      stream.end('{"a":1}');
      await new Promise((resolve) => setTimeout(resolve, 100));
      stream.close();
      expect(await lineOf('h2-left', 'client closed the request')).toMatchObject({ level: 30 });
      // A statement run through untilClientLeaves (POST /query's) is cancelled when its client resets the stream.
      const running = session.request({ ...post, ':path': '/api/v1/cancel' }, { endStream: false });
      running.on('error', () => undefined);
      running.end('{"a":1}');
      await new Promise((resolve) => setTimeout(resolve, 100));
      running.close();
      for (let i = 0; i < 100 && cancelled === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(cancelled).toBe(1);
    } finally {
      session.destroy();
      await app.close();
    }
  });

  it('answers an HTTP/2 session past max_connections with 503 TOO_MANY_CONNECTIONS and a GOAWAY', async () => {
    const { app, url } = await startTls({ 'max-connections': '1' });
    const first = await openSession(url, cert.cert);
    const second = await openSession(url, cert.cert);
    try {
      expect((await h2Request(first, { ':path': '/api/v1/live' })).status).toBe(200);
      const goaway = new Promise<void>((resolve) => second.once('goaway', () => resolve()));
      const refused = await h2Request(second, { ':path': '/api/v1/live', 'x-request-id': 'h2-refused' });
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('1');
      expect(JSON.parse(refused.body.toString('utf8')).error).toMatchObject({ code: 'TOO_MANY_CONNECTIONS', request_id: 'h2-refused' });
      await goaway;
      expect((await h2Request(first, { ':path': '/api/v1/live' })).status).toBe(200);
    } finally {
      first.destroy();
      second.destroy();
      await app.close();
    }
  });

  it('closes promptly with an idle HTTP/2 session and an idle HTTP/1.1 keep-alive connection open', async () => {
    const { app, url } = await startTls();
    const session = await openSession(url, cert.cert);
    expect((await h2Request(session, { ':path': '/api/v1/live' })).status).toBe(200);
    const agent = new Agent({ keepAlive: true, ca: cert.cert });
    const keptAlive = await new Promise<Socket>((resolve, reject) => {
      httpsRequest(`${url}/api/v1/live`, { agent }, (res) => {
        const socket = res.socket; // detached from the response once it ends (back to the agent)
        res.resume();
        res.on('end', () => resolve(socket));
      })
        .on('error', reject)
        .end();
    });
    // The events themselves, not a wall-clock bound: close() ends both idle connections (left to
    // their idle timeouts, 72 s keep-alive, it would not resolve within the test's timeout).
    const h1Closed = new Promise<void>((resolve) => keptAlive.once('close', () => resolve()));
    const h2Closed = new Promise<void>((resolve) => session.once('close', () => resolve()));
    await app.close();
    await Promise.all([h1Closed, h2Closed]);
    session.destroy();
    agent.destroy();
  });
});

describe.skipIf(!OPENSSL)(`${needs('openssl')} TLS settings (SVC_TLS_CERT, SVC_TLS_KEY)`, () => {
  let cert: TestCert;
  let other: TestCert;
  beforeAll(async () => {
    [cert, other] = await Promise.all([makeTestCert(), makeTestCert()]);
  });
  afterAll(async () => {
    await Promise.all([cert?.remove(), other?.remove()]);
  });

  it('reads PEM text or a file path, and is off when neither is set', async () => {
    expect(await loadTlsMaterial({ tlsCert: undefined, tlsKey: undefined })).toBeNull();
    expect(await loadTlsMaterial({ tlsCert: cert.cert, tlsKey: cert.key })).toEqual({ cert: cert.cert, key: cert.key });
    expect(await loadTlsMaterial({ tlsCert: cert.certPath, tlsKey: cert.keyPath })).toEqual({ cert: cert.cert, key: cert.key });
  });

  it('refuses one without the other, an unreadable file and a key that does not fit, as CONFIG_INVALID', async () => {
    await expect(loadTlsMaterial({ tlsCert: cert.cert, tlsKey: undefined })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining('SVC_TLS_KEY'),
    });
    await expect(loadTlsMaterial({ tlsCert: '/nonexistent/cert.pem', tlsKey: cert.key })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining('ENOENT'),
    });
    const mismatch = loadTlsMaterial({ tlsCert: cert.cert, tlsKey: other.key });
    await expect(mismatch).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    await expect(mismatch).rejects.not.toMatchObject({ message: expect.stringContaining('PRIVATE KEY') });
  });
});
