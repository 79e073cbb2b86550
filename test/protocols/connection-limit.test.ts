import { connect, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startHttp, type Running } from './helpers.js';

/** A raw HTTP/1.1 client on one connection: what was received, and whether the server closed it. */
class RawConnection {
  received = '';
  closed: Promise<void>;
  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.received += chunk.toString('utf8');
    });
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
  }

  static async open(url: string): Promise<RawConnection> {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('error', reject);
    });
    return new RawConnection(socket);
  }

  /** Sends a GET and waits until a whole response (headers and Content-Length body) has arrived. */
  async get(path: string, requestId: string): Promise<string> {
    const start = this.received.length;
    this.socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nX-Request-ID: ${requestId}\r\n\r\n`);
    for (let i = 0; i < 200; i++) {
      const text = this.received.slice(start);
      const headerEnd = text.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(text)?.[1];
      if (headerEnd >= 0 && length !== undefined && text.length >= headerEnd + 4 + Number(length)) return text;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`no complete response; received ${JSON.stringify(this.received.slice(start))}`);
  }
}

describe('max_connections (SVC_MAX_CONNECTIONS)', () => {
  let server: Running;
  const open: RawConnection[] = [];
  beforeEach(async () => {
    server = await startHttp({ flags: { 'max-connections': '2' } });
  });
  afterEach(async () => {
    for (const c of open.splice(0)) c.socket.destroy();
    await server.close();
  });
  const connectNew = async (): Promise<RawConnection> => {
    const c = await RawConnection.open(server.url);
    open.push(c);
    return c;
  };

  it('answers a connection past the limit with one 503 TOO_MANY_CONNECTIONS envelope and closes it', async () => {
    const first = await connectNew();
    const second = await connectNew();
    expect(await first.get('/api/v1/live', 'a-1')).toMatch(/^HTTP\/1.1 200/);
    expect(await second.get('/api/v1/live', 'b-1')).toMatch(/^HTTP\/1.1 200/);

    const third = await connectNew();
    const refused = await third.get('/api/v1/live', 'c-1');
    expect(refused).toMatch(/^HTTP\/1.1 503/);
    expect(refused).toMatch(/\r\nconnection: close\r\n/i);
    expect(refused).toMatch(/\r\nretry-after: 1\r\n/i);
    const body = JSON.parse(refused.slice(refused.indexOf('\r\n\r\n') + 4));
    expect(body).toEqual({
      error: { code: 'TOO_MANY_CONNECTIONS', message: expect.stringContaining('SVC_MAX_CONNECTIONS'), details: { limit: 2 }, request_id: 'c-1' },
    });
    await third.closed;

    // The connections within the limit are untouched; once one goes, a new one is served.
    expect(await first.get('/api/v1/live', 'a-2')).toMatch(/^HTTP\/1.1 200/);
    second.socket.destroy();
    await second.closed;
    await new Promise((resolve) => setTimeout(resolve, 20));
    const fourth = await connectNew();
    expect(await fourth.get('/api/v1/live', 'd-1')).toMatch(/^HTTP\/1.1 200/);
  });

  it('logs the refusal under the request id', async () => {
    await connectNew();
    await connectNew();
    const third = await connectNew();
    await third.get('/api/v1/live', 'refused-1');
    const line = server.lines.find((l) => l.request_id === 'refused-1' && l.msg === 'request failed');
    expect(line).toMatchObject({ code: 'TOO_MANY_CONNECTIONS', statusCode: 503 });
  });

  it('/ready says connections_available=false at the limit, true below it', async () => {
    const held = await connectNew();
    await held.get('/api/v1/live', 'held-1');
    const probe = await connectNew();
    const atLimit = await probe.get('/api/v1/ready', 'ready-1');
    expect(atLimit).toMatch(/^HTTP\/1.1 503/);
    expect(atLimit).toContain('"connections_available":false');
    held.socket.destroy();
    await held.closed;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await probe.get('/api/v1/ready', 'ready-2')).toContain('"connections_available":true');
  });
});
