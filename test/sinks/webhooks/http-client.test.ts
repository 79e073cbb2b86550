import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EndpointClient, type EndpointClientOptions } from '../../../sinks/webhooks/http-client.js';
import { hasOpenssl, makeTestCert, type TestCert } from '../../helpers/tls-cert.js';

const OPENSSL = hasOpenssl();
if (!OPENSSL) console.warn('http-client.test.ts: https cases skipped: no `openssl` on PATH to make a test certificate');

interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer;
  readonly peerCn: string | null;
}

/** A receiver on 127.0.0.1 that records requests and counts connections. */
class Receiver {
  readonly received: Received[] = [];
  connections = 0;
  private readonly sockets = new Set<Socket>();

  constructor(
    readonly server: Server,
    private readonly handler: (req: IncomingMessage, res: ServerResponse) => void,
  ) {
    server.on('connection', (s: Socket) => this.track(s));
    server.on('secureConnection', (s: Socket) => this.track(s));
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const peer = (req.socket as TLSSocket).getPeerCertificate?.();
        this.received.push({
          method: req.method!,
          url: req.url!,
          headers: req.headers,
          body: Buffer.concat(chunks),
          peerCn: (peer?.subject?.CN as string | undefined) ?? null,
        });
        this.handler(req, res);
      });
    });
  }

  private track(s: Socket): void {
    if (this.sockets.has(s)) return;
    this.sockets.add(s);
    this.connections++;
    s.on('close', () => this.sockets.delete(s));
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const receivers: Receiver[] = [];
const clients: EndpointClient[] = [];

async function httpReceiver(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ r: Receiver; port: number }> {
  const r = new Receiver(createServer(), handler);
  receivers.push(r);
  return { r, port: await r.listen() };
}

function client(url: string, options: Partial<EndpointClientOptions> = {}): EndpointClient {
  const c = new EndpointClient(url, {
    connectionsMax: 4,
    pipelining: 1,
    connectTimeoutMs: 2000,
    keepAliveTimeoutMs: 4000,
    allowedCidrs: [],
    tls: null,
    errorTextBytesMax: 64,
    ...options,
  });
  clients.push(c);
  return c;
}

const status =
  (code: number, body = '') =>
  (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(code, { 'content-type': 'text/plain' });
    res.end(body);
  };

const BODY = Buffer.from('{"event_id":"E1","value":{"name":"café"}}');
const HEADERS = { 'Content-Type': 'application/json', 'X-Svc-Event-ID': 'E1' };

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.destroy()));
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

describe('EndpointClient over http', () => {
  it('2xx is success; the exact body and headers arrive at the URL path', async () => {
    const { r, port } = await httpReceiver(status(204));
    const res = await client(`http://127.0.0.1:${port}/hooks/in?src=svcdb`).post(BODY, HEADERS, 5000);
    expect(res).toMatchObject({ outcome: 'success', status: 204, error: null, failure: null });
    expect(res.durationMs).toBeGreaterThan(0);
    expect(r.received).toHaveLength(1);
    expect(r.received[0]).toMatchObject({ method: 'POST', url: '/hooks/in?src=svcdb' });
    expect(r.received[0]!.body.equals(BODY)).toBe(true);
    expect(r.received[0]!.headers['x-svc-event-id']).toBe('E1');
    expect(r.received[0]!.headers['content-type']).toBe('application/json');
  });

  it('410 is gone', async () => {
    const { port } = await httpReceiver(status(410, 'unsubscribed'));
    const res = await client(`http://127.0.0.1:${port}/`).post(BODY, HEADERS, 5000);
    expect(res).toMatchObject({ outcome: 'gone', status: 410, failure: 'status', error: 'HTTP 410: unsubscribed' });
  });

  it('500 is retryable, with a short prefix of the body in the error', async () => {
    const { port } = await httpReceiver(status(500, `boom ${'x'.repeat(10_000)}`));
    const res = await client(`http://127.0.0.1:${port}/`).post(BODY, HEADERS, 5000);
    expect(res).toMatchObject({ outcome: 'retryable', status: 500, failure: 'status' });
    expect(res.error!.startsWith('HTTP 500: boom xxx')).toBe(true);
    expect(res.error!.length).toBeLessThanOrEqual(80);
  });

  it('a redirect is not followed: retryable', async () => {
    const { r, port } = await httpReceiver((_req, res) => {
      res.writeHead(307, { location: 'http://127.0.0.1:1/elsewhere' });
      res.end();
    });
    const res = await client(`http://127.0.0.1:${port}/`).post(BODY, HEADERS, 5000);
    expect(res).toMatchObject({ outcome: 'retryable', status: 307 });
    expect(r.received).toHaveLength(1);
  });

  it('no answer within the time limit is a retryable timeout', async () => {
    const { r, port } = await httpReceiver(() => undefined);
    const res = await client(`http://127.0.0.1:${port}/`).post(BODY, HEADERS, 300);
    expect(res).toMatchObject({ outcome: 'retryable', status: null, failure: 'timeout', error: 'no answer within 300 ms' });
    expect(res.durationMs).toBeGreaterThanOrEqual(290);
    expect(res.durationMs).toBeLessThan(2000);
    expect(r.received).toHaveLength(1);
  });

  it('a closed port is a retryable network error', async () => {
    const { r, port } = await httpReceiver(status(200));
    await r.close();
    receivers.splice(receivers.indexOf(r), 1);
    const res = await client(`http://127.0.0.1:${port}/`).post(BODY, HEADERS, 2000);
    expect(res).toMatchObject({ outcome: 'retryable', status: null, failure: 'network' });
    expect(res.error).toMatch(/ECONNREFUSED/);
  });

  it('keeps connections alive and never opens more than connectionsMax', async () => {
    const { r, port } = await httpReceiver((_req, res) => setTimeout(() => status(200)(_req, res), 20));
    const c = client(`http://127.0.0.1:${port}/`, { connectionsMax: 2 });
    const results = await Promise.all(Array.from({ length: 10 }, () => c.post(BODY, HEADERS, 5000)));
    expect(results.every((x) => x.outcome === 'success')).toBe(true);
    for (let i = 0; i < 5; i++) expect((await c.post(BODY, HEADERS, 5000)).outcome).toBe('success');
    expect(r.received).toHaveLength(15);
    expect(r.connections).toBe(2);
  });
});

describe('EndpointClient: allowed address ranges', () => {
  it('an IP outside the ranges is refused without connecting', async () => {
    const { r, port } = await httpReceiver(status(200));
    const res = await client(`http://127.0.0.1:${port}/`, { allowedCidrs: ['10.0.0.0/8'] }).post(BODY, HEADERS, 2000);
    expect(res).toMatchObject({ outcome: 'retryable', status: null, failure: 'address_refused' });
    expect(res.error).toMatch(/127\.0\.0\.1.*outside the allowed/);
    expect(r.connections).toBe(0);
  });

  it('a name resolving outside the ranges (localhost) is refused without connecting', async () => {
    const { r, port } = await httpReceiver(status(200));
    const res = await client(`http://localhost:${port}/`, { allowedCidrs: ['10.0.0.0/8', 'fd00::/8'] }).post(BODY, HEADERS, 2000);
    expect(res).toMatchObject({ outcome: 'retryable', failure: 'address_refused' });
    expect(res.error).toMatch(/localhost/);
    expect(r.connections).toBe(0);
  });

  it('a name whose answer changes is checked at every new connection (DNS cannot bypass the ranges)', async () => {
    const { r, port } = await httpReceiver(status(200));
    let answer = '127.0.0.1';
    const lookup: EndpointClientOptions['lookup'] = (_host, _opts, cb) => cb(null, [{ address: answer, family: 4 }]);
    const c = client(`http://receiver.test:${port}/`, { allowedCidrs: ['127.0.0.0/8'], lookup, keepAliveTimeoutMs: 1 });
    expect((await c.post(BODY, HEADERS, 2000)).outcome).toBe('success');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(c.stats().connected).toBe(0);
    answer = '10.1.2.3';
    expect(await c.post(BODY, HEADERS, 2000)).toMatchObject({ outcome: 'retryable', failure: 'address_refused' });
    expect(r.received).toHaveLength(1);
    expect(r.connections).toBe(1);
  });

  it('inside the ranges (IPv4 and a name) deliveries go through', async () => {
    const { r, port } = await httpReceiver(status(200));
    expect((await client(`http://127.0.0.1:${port}/`, { allowedCidrs: ['127.0.0.0/8'] }).post(BODY, HEADERS, 2000)).outcome).toBe('success');
    expect((await client(`http://localhost:${port}/`, { allowedCidrs: ['127.0.0.1/32', '::1/128'] }).post(BODY, HEADERS, 2000)).outcome).toBe('success');
    expect(r.received).toHaveLength(2);
  });
});

describe.skipIf(!OPENSSL)('EndpointClient over https', () => {
  let serverCert: TestCert;
  let clientCert: TestCert;

  beforeAll(async () => {
    [serverCert, clientCert] = await Promise.all([makeTestCert(), makeTestCert()]);
  });

  afterAll(async () => {
    await Promise.all([serverCert?.remove(), clientCert?.remove()]);
  });

  async function httpsReceiver(mutual: boolean): Promise<{ r: Receiver; port: number }> {
    const server = createHttpsServer({
      cert: serverCert.cert,
      key: serverCert.key,
      ...(mutual ? { requestCert: true, rejectUnauthorized: true, ca: clientCert.cert } : {}),
    });
    const r = new Receiver(server, status(200));
    receivers.push(r);
    return { r, port: await r.listen() };
  }

  it('verifies the certificate by default: a self-signed receiver is refused', async () => {
    const { r, port } = await httpsReceiver(false);
    const res = await client(`https://localhost:${port}/`).post(BODY, HEADERS, 3000);
    expect(res).toMatchObject({ outcome: 'retryable', status: null, failure: 'network' });
    expect(res.error).toMatch(/self[- ]signed|SELF_SIGNED/i);
    expect(r.received).toHaveLength(0);
  });

  it('trusts the webhook CA', async () => {
    const { r, port } = await httpsReceiver(false);
    const res = await client(`https://localhost:${port}/in`, { tls: { ca: serverCert.cert } }).post(BODY, HEADERS, 3000);
    expect(res).toMatchObject({ outcome: 'success', status: 200 });
    expect(r.received[0]!.body.equals(BODY)).toBe(true);
  });

  it('mutual TLS: the client certificate is presented; without it the receiver refuses', async () => {
    const { r, port } = await httpsReceiver(true);
    const url = `https://127.0.0.1:${port}/in`;
    const ok = await client(url, { tls: { ca: serverCert.cert, cert: clientCert.cert, key: clientCert.key } }).post(BODY, HEADERS, 3000);
    expect(ok).toMatchObject({ outcome: 'success', status: 200 });
    expect(r.received[0]!.peerCn).toBe('localhost');
    const without = await client(url, { tls: { ca: serverCert.cert } }).post(BODY, HEADERS, 3000);
    expect(without).toMatchObject({ outcome: 'retryable', status: null, failure: 'network' });
    expect(r.received).toHaveLength(1);
  });

  it('https to a refused range is refused before any TLS handshake', async () => {
    const { r, port } = await httpsReceiver(false);
    const res = await client(`https://localhost:${port}/`, { tls: { ca: serverCert.cert }, allowedCidrs: ['10.0.0.0/8'] }).post(BODY, HEADERS, 3000);
    expect(res).toMatchObject({ outcome: 'retryable', failure: 'address_refused' });
    expect(r.connections).toBe(0);
  });
});
