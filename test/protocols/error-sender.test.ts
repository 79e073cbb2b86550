/**
 * The one error sender, through real HTTP: REST routes, a vector-protocol plugin and a collection
 * plugin (each with its own envelope hook) share the status table, snake_case details, Retry-After on 429, the log level
 * per status and the client-left branch.
 */
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import type { FastifyPluginAsync } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SvcError } from '../../core/errors.js';
import { listen } from '../../protocols/listen.js';
import { createHttpServer } from '../../protocols/http/server.js';
import { installCollectionErrors } from '../../protocols/http/collections/collection-errors.js';
import { installVectorErrors } from '../../protocols/pinecone/errors.js';
import { captureLogger, FakeEngineStatus, getJson, testConfig, type LogLine } from './helpers.js';

/** Errors a route can end with, the same under /api/v1 and under the vector protocol. */
function failingRoutes(prefix: string): FastifyPluginAsync {
  return async (app) => {
    app.get(`${prefix}/camel`, async () => {
      throw new SvcError('LIMIT_EXCEEDED', 'too many', { limit: 'webhooksPerTenantMax', webhooksPerTenantMax: 2, table_id: 7, columns: { myColumn: 1 } });
    });
    app.get(`${prefix}/limited`, async () => {
      // A 429 whose thrower set no Retry-After: the sender adds it from details.reset_at.
      throw new SvcError('RATE_LIMIT_EXCEEDED', 'slow down', { limit: 1, remaining: 0, reset_at: new Date(Date.now() + 2_500).toISOString() });
    });
    app.post(`${prefix}/late`, async () => {
      // A POST (its body read) that fails after a turn of the event loop, its client still waiting.
      await new Promise((resolve) => setTimeout(resolve, 10));
      throw new Error('failed late');
    });
    app.get(`${prefix}/left`, async (request) => {
      // Runs until the client hangs up, then fails as a cancelled query does.
      await new Promise((resolve) => request.raw.socket.once('close', resolve));
      throw new Error('cancelled because the client left');
    });
  };
}

const vectorPlugin: FastifyPluginAsync = async (app) => {
  installVectorErrors(app, { bodyLimitBytes: 1024 });
  await app.register(failingRoutes('/vec'));
};

const collectionPlugin: FastifyPluginAsync = async (app) => {
  const scoped: FastifyPluginAsync = async (scope) => {
    installCollectionErrors(scope, { bodyLimitBytes: 1024 });
    await scope.register(failingRoutes(''));
  };
  await app.register(scoped, { prefix: '/col' });
};

let url: string;
let lines: LogLine[];
let close: () => Promise<void>;

beforeAll(async () => {
  const captured = captureLogger();
  lines = captured.lines;
  const config = testConfig();
  const app = createHttpServer({
    config,
    logger: captured.logger,
    status: new FakeEngineStatus(),
    plugins: [failingRoutes('/rest')],
    rootPlugins: [vectorPlugin, collectionPlugin],
  });
  url = await listen(app, { host: config.host, port: config.httpPort, settingName: 'SVC_HTTP_PORT / --port' });
  close = () => app.close();
});
afterAll(() => close?.());

/** GET that the client abandons once the server has the request. */
async function abandon(path: string, requestId: string): Promise<void> {
  await new Promise<void>((resolve) => {
    const req = httpRequest(`${url}${path}`, { headers: { 'x-request-id': requestId } });
    req.on('error', () => resolve());
    req.end();
    setTimeout(() => {
      req.destroy();
      resolve();
    }, 200);
  });
}

async function lineOf(requestId: string, msg: string): Promise<LogLine | undefined> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const line = lines.find((l) => l['request_id'] === requestId && l.msg === msg);
    if (line !== undefined || Date.now() > deadline) return line;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.each([
  { protocol: 'REST', path: '/api/v1/rest' },
  { protocol: 'vector', path: '/vec' },
  { protocol: 'collections', path: '/col' },
])('the one sender ($protocol)', ({ protocol, path }) => {
  it("sends details keys in snake_case (top level only: values are the client's own names)", async () => {
    const res = await getJson(`${url}${path}/camel`);
    expect(res.status).toBe(400);
    expect((res.body.error ?? res.body).details).toEqual({ limit: 'webhooksPerTenantMax', webhooks_per_tenant_max: 2, table_id: 7, columns: { myColumn: 1 } });
  });

  it("wraps the error in the protocol's envelope", async () => {
    const res = await getJson(`${url}${path}/camel`, { headers: { 'x-request-id': `env-${protocol}` } });
    const error = { code: 'LIMIT_EXCEEDED', message: 'too many', details: expect.any(Object), request_id: `env-${protocol}` };
    const expected = { REST: { error }, vector: { error, status: 400, message: 'too many' }, collections: error };
    expect(res.body).toEqual(expected[protocol as keyof typeof expected]);
  });

  it('answers every 429 with Retry-After, and logs a 4xx once at info', async () => {
    const res = await getJson(`${url}${path}/limited`, { headers: { 'x-request-id': `limited-${protocol}` } });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(3);
    const mine = lines.filter((l) => l['request_id'] === `limited-${protocol}` && l.level >= 30);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ level: 30, msg: 'request rejected', code: 'RATE_LIMIT_EXCEEDED', statusCode: 429, method: 'GET' });
  });

  it('logs a POST that fails after its body was read as a failure, not as a client that left', async () => {
    const requestId = `late-${protocol}`;
    const res = await fetch(`${url}${path}/late`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': requestId },
      body: JSON.stringify({ a: 1 }),
    });
    expect(res.status).toBe(500);
    expect(await lineOf(requestId, 'request failed')).toMatchObject({ level: 50, code: 'INTERNAL_ERROR', statusCode: 500 });
    expect(lines.filter((l) => l['request_id'] === requestId && l.msg === 'client closed the request')).toEqual([]);
  });

  it('logs pipelined requests whose client left at info, the one waiting behind another too', async () => {
    const ids = [`pipe-a-${protocol}`, `pipe-b-${protocol}`];
    await new Promise<void>((resolve) => {
      const socket = connect(Number(new URL(url).port), '127.0.0.1', () => {
        socket.write(ids.map((id) => `GET ${path}/left HTTP/1.1\r\nHost: x\r\nX-Request-ID: ${id}\r\n\r\n`).join(''));
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 200);
      });
      socket.on('error', () => resolve());
    });
    for (const id of ids) expect(await lineOf(id, 'client closed the request'), id).toMatchObject({ level: 30 });
    expect(lines.filter((l) => ids.includes(l['request_id'] as string) && l.level >= 50)).toEqual([]);
  });

  it('logs a request whose client left at info, not as a server failure', async () => {
    const requestId = `left-${protocol}`;
    await abandon(`${path}/left`, requestId);
    expect(await lineOf(requestId, 'client closed the request')).toMatchObject({ level: 30, code: 'INTERNAL_ERROR' });
    expect(lines.filter((l) => l['request_id'] === requestId && l.level >= 50)).toEqual([]);
  });
});
