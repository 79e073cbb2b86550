/**
 * The /graphql WebSocket transport: credentials in connection_init (either protocol) or the
 * upgrade request, refusals with graphql-ws's close codes; the legacy subscriptions-transport-ws
 * protocol over a raw socket; roles per operation; the limits; and no leak after many
 * subscriptions and disconnects.
 */
import Fastify from 'fastify';
import mercurius from 'mercurius';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphqlWebSocket } from '../../../protocols/graphql/ws/plugin.js';
import { GRAPHQL_WS_DEFAULTS } from '../../../protocols/graphql/ws/limits.js';
import type { Logger } from '../../../core/logger.js';
import { newKey } from '../../helpers/auth.js';
import { revokeApiKey } from '../../../protocols/index.js';
import { ADMIN_KEY, eventually, startHarness, subscribe, WebSocket, type Harness, type WsSocket } from './harness.js';

/** A raw socket and the messages it received (parsed), for the legacy protocol. */
async function rawSocket(url: string, protocol: string | string[], headers: Record<string, string> = {}) {
  const socket = new WebSocket(url, protocol, { headers });
  const messages: any[] = [];
  const state = { closed: null as null | { code: number; reason: string }, status: null as number | null };
  socket.on('message', (data) => messages.push(JSON.parse(String(data))));
  socket.on('close', (code, reason) => (state.closed = { code, reason: String(reason) }));
  socket.on('unexpected-response', (_req, res) => {
    state.status = res.statusCode;
    res.resume();
    state.closed = { code: -1, reason: `HTTP ${res.statusCode}` };
  });
  socket.on('error', () => undefined);
  await eventually(() => socket.readyState === WebSocket.OPEN || state.closed !== null);
  return { socket, messages, state, send: (m: unknown) => socket.send(JSON.stringify(m)) };
}

/** The close event a graphql-ws client reports when the server refuses it. */
async function closeOf(h: Harness, params: Record<string, unknown>): Promise<{ code: number; reason: string }> {
  const client = h.client(params);
  return new Promise((resolve) => {
    client.on('closed', (event) => resolve(event as { code: number; reason: string }));
    client.subscribe({ query: 'subscription { whoami_events { sequence } }' }, { next: () => undefined, error: () => undefined, complete: () => undefined });
  });
}

describe('GraphQL WebSocket transport', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ limits: { graphqlWsSubscriptionsPerConnectionMax: 40 } });
    await h.sql('CREATE TABLE t (id BIGINT PRIMARY KEY, v TEXT)');
  });
  afterAll(async () => {
    await h?.close();
  });

  it('authenticates connection_init: Bearer, X-API-Key, nested headers, the upgrade request; X-Tenant-ID picks the tenant', async () => {
    const whoami = async (params: Record<string, unknown>): Promise<string> => {
      const sub = subscribe(h.client(params), '{ whoami }');
      await sub.until((s) => s.completed);
      return sub.results[0].data.whoami;
    };
    expect(await whoami({ Authorization: `Bearer ${ADMIN_KEY}` })).toBe('admin@default');
    expect(await whoami({ 'X-API-Key': ADMIN_KEY, 'X-Tenant-ID': 'acme' })).toBe('admin@acme');
    expect(await whoami({ headers: { authorization: `Bearer ${ADMIN_KEY}`, 'x-tenant-id': 'beta' } })).toBe('admin@beta');
    const reader = await newKey(h.dataDir, { role: 'read_only' });
    await eventually(async () => (await whoami({ Authorization: `Bearer ${reader.key}` }).catch(() => '')) === 'read_only@default', 5000);
    // Credentials on the upgrade request itself.
    const raw = await rawSocket(h.wsUrl, 'graphql-transport-ws', { authorization: `Bearer ${ADMIN_KEY}` });
    raw.send({ type: 'connection_init' });
    await eventually(() => raw.messages.some((m) => m.type === 'connection_ack'));
    raw.socket.close();
  });

  it('refuses bad credentials with 4401, a tenant the key may not use with 4403', async () => {
    expect(await closeOf(h, { Authorization: 'Bearer wrong' })).toMatchObject({ code: 4401, reason: expect.stringContaining('AUTHENTICATION_FAILED') });
    expect(await closeOf(h, {})).toMatchObject({ code: 4401, reason: expect.stringContaining('AUTHENTICATION_REQUIRED') });
    const bound = await newKey(h.dataDir, { role: 'read_write', tenant: 'acme' });
    await eventually(async () => (await closeOf(h, { Authorization: `Bearer ${bound.key}`, 'X-Tenant-ID': 'other' })).code === 4403, 5000);
  });

  it('checks roles per operation: read_only may subscribe, not mutate', async () => {
    const reader = await newKey(h.dataDir, { role: 'read_only' });
    const params = { Authorization: `Bearer ${reader.key}` };
    await eventually(async () => {
      const probe = subscribe(h.client(params), '{ whoami }');
      await probe.until((s) => s.completed).catch(() => undefined);
      return probe.results[0]?.data?.whoami === 'read_only@default';
    }, 5000);
    const mutation = subscribe(h.client(params), 'mutation { noop }');
    await mutation.until((s) => s.completed);
    expect(mutation.results[0].errors[0].extensions.code).toBe('AUTHORIZATION_DENIED');
    const events = subscribe(h.client(params), 'subscription { t_events(from_sequence: "0") { operation } }');
    await events.until((s) => s.results.length >= 1);
    expect(events.results[0].data.t_events.operation).toBe('SCHEMA_CHANGE');
    events.stop();
  });

  it('checks the credential again per operation: after a revoke, the next one is refused, the running one goes on', async () => {
    const key = await newKey(h.dataDir, { role: 'read_write' });
    const client = h.client({ Authorization: `Bearer ${key.key}` });
    let running = subscribe(client, 'subscription { t(limit: 1) }');
    await eventually(async () => {
      if (running.results.length > 0) return true;
      if (running.completed) running = subscribe(client, 'subscription { t(limit: 1) }');
      return false;
    }, 5000);
    await revokeApiKey(h.dataDir, key.id);
    await eventually(async () => {
      const probe = subscribe(client, '{ whoami }');
      await probe.until((s) => s.completed);
      return probe.results[0]?.errors?.[0]?.extensions?.code === 'AUTHENTICATION_FAILED';
    }, 5000);
    expect(running.completed).toBe(false);
    running.stop();
    await client.dispose();
  });

  it('speaks the legacy subscriptions-transport-ws protocol', async () => {
    const legacy = await rawSocket(h.wsUrl, 'graphql-ws');
    expect(legacy.socket.protocol).toBe('graphql-ws');
    legacy.send({ type: 'connection_init', payload: { Authorization: `Bearer ${ADMIN_KEY}` } });
    await eventually(() => legacy.messages.some((m) => m.type === 'connection_ack'));
    expect(legacy.messages.map((m) => m.type)).toEqual(['connection_ack', 'ka']);
    legacy.send({
      id: '1',
      type: 'start',
      payload: { query: 'subscription($from: BigInt) { t_events(from_sequence: $from) { operation key } }', variables: { from: '0' } },
    });
    await h.sql("INSERT INTO t VALUES (1, 'a')");
    await eventually(() => legacy.messages.filter((m) => m.type === 'data' && m.id === '1').length >= 2);
    const data = legacy.messages.filter((m) => m.type === 'data').map((m) => m.payload.data.t_events);
    expect(data.slice(0, 2)).toEqual([
      { operation: 'SCHEMA_CHANGE', key: null },
      { operation: 'INSERT', key: { id: 1 } },
    ]);
    // A query runs once: data, then complete.
    legacy.send({ id: '2', type: 'start', payload: { query: '{ whoami }' } });
    await eventually(() => legacy.messages.some((m) => m.type === 'complete' && m.id === '2'));
    expect(legacy.messages.find((m) => m.id === '2' && m.type === 'data').payload).toEqual({ data: { whoami: 'admin@default' } });
    // A bad query: data with errors (a code), then complete.
    legacy.send({ id: '3', type: 'start', payload: { query: 'subscription { nope }' } });
    await eventually(() => legacy.messages.some((m) => m.type === 'complete' && m.id === '3'));
    expect(legacy.messages.find((m) => m.id === '3' && m.type === 'data').payload.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    legacy.send({ id: '1', type: 'stop' });
    await eventually(() => legacy.messages.some((m) => m.type === 'complete' && m.id === '1'));
    await eventually(() => h.ws.stats().operations === 0);
    legacy.send({ type: 'connection_terminate' });
    await eventually(() => legacy.state.closed !== null);
  });

  it('legacy: a bad credential gets connection_error, then the close', async () => {
    const legacy = await rawSocket(h.wsUrl, 'graphql-ws');
    legacy.send({ type: 'connection_init', payload: { 'X-API-Key': 'nope' } });
    await eventually(() => legacy.state.closed !== null);
    expect(legacy.messages[0]).toMatchObject({ type: 'connection_error', payload: { extensions: { code: 'AUTHENTICATION_FAILED' } } });
    expect(legacy.state.closed!.code).toBe(4401);
  });

  it('refuses a socket that offers neither subprotocol (4406)', async () => {
    const other = await rawSocket(h.wsUrl, []);
    await eventually(() => other.state.closed !== null);
    expect(other.state.closed!.code).toBe(4406);
  });

  it('many subscriptions, then disconnects: nothing left behind', async () => {
    await eventually(() => h.ws.stats().connections === 0 && h.ws.stats().operations === 0);
    const clients = Array.from({ length: 5 }, () => h.client());
    const subs = clients.flatMap((client) =>
      Array.from({ length: 30 }, (_, i) =>
        subscribe(client, i % 2 === 0 ? 'subscription { t_events(from_sequence: "0") { sequence } }' : 'subscription { t(limit: 5) }'),
      ),
    );
    await Promise.all(subs.map((s) => s.until((x) => x.results.length >= 1)));
    expect(h.ws.stats()).toEqual({ connections: 5, operations: 150 });
    expect(h.feed.openFeeds).toBe(75);
    expect(h.sources.open).toBe(150);
    await h.sql("INSERT INTO t VALUES (2, 'b')");
    await Promise.all(clients.map(async (c) => c.dispose()));
    await eventually(() => h.ws.stats().connections === 0 && h.ws.stats().operations === 0);
    await eventually(() => h.feed.openFeeds === 0 && h.sources.open === 0 && h.watch.waiting === 0);
  });

  it('limits operations per connection (LIMIT_EXCEEDED for the one past it)', async () => {
    const client = h.client();
    const subs = Array.from({ length: 40 }, () => subscribe(client, 'subscription { t_events { sequence } }'));
    const over = subscribe(client, 'subscription { t_events { sequence } }');
    await over.until((s) => s.completed);
    expect(over.results[0].errors[0].extensions.code).toBe('LIMIT_EXCEEDED');
    expect(subs.every((s) => !s.completed)).toBe(true);
    await client.dispose();
    await eventually(() => h.ws.stats().operations === 0 && h.feed.openFeeds === 0);
  });
});

describe('GraphQL WebSocket limits and wiring', () => {
  it('refuses an upgrade past the connection limit (503 TOO_MANY_CONNECTIONS)', async () => {
    const h = await startHarness({ limits: { graphqlWsConnectionsMax: 1 } });
    try {
      const first = await rawSocket(h.wsUrl, 'graphql-transport-ws');
      expect(first.state.closed).toBeNull();
      const second = await rawSocket(h.wsUrl, 'graphql-transport-ws');
      expect(second.state.status).toBe(503);
      first.socket.close();
      await eventually(() => h.ws.stats().connections === 0);
    } finally {
      await h.close();
    }
  });

  it('closes a client that stops reading (send buffer over the limit) instead of buffering', async () => {
    const h = await startHarness({ limits: { graphqlWsSendBufferBytesMax: 64 * 1024, graphqlWsKeepAliveMs: 2000 } });
    try {
      await h.sql('CREATE TABLE big (id BIGINT PRIMARY KEY, v TEXT)');
      const pad = 'x'.repeat(2000);
      for (let i = 0; i < 100; i++) {
        await h.sql(`INSERT INTO big SELECT g, '${pad}' FROM generate_series(${i * 100}, ${i * 100 + 99}) AS g`);
      }
      const slow = await rawSocket(h.wsUrl, 'graphql-transport-ws');
      slow.send({ type: 'connection_init', payload: { Authorization: `Bearer ${ADMIN_KEY}` } });
      await eventually(() => slow.messages.length > 0);
      slow.send({ id: '1', type: 'subscribe', payload: { query: 'subscription { big_events(from_sequence: "0") { value } }' } });
      slow.socket.pause();
      await eventually(() => h.ws.stats().connections === 0, 20_000);
      expect(h.feed.openFeeds).toBe(0);
      slow.socket.terminate();
    } finally {
      await h.close();
    }
  });

  it('attaches to the GET /graphql route mercurius declares (one route: GraphQL over HTTP and over WebSocket)', async () => {
    const h = await startHarness();
    const app = Fastify();
    try {
      const ws = graphqlWebSocket({
        gate: h.gate,
        resolveSchema: async () => {
          throw new Error('not used');
        },
        limits: GRAPHQL_WS_DEFAULTS,
        logger: { error: () => undefined } as unknown as Logger,
        route: 'attach',
      });
      await app.register(ws.plugin);
      await app.register(mercurius, { schema: 'type Query { hi: String }', resolvers: { Query: { hi: async () => 'over http' } } });
      const url = await app.listen({ host: '127.0.0.1', port: 0 });
      expect(await (await fetch(`${url}/graphql?query=${encodeURIComponent('{ hi }')}`)).json()).toEqual({ data: { hi: 'over http' } });
      const raw = await rawSocket(`${url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
      raw.send({ type: 'connection_init', payload: { Authorization: `Bearer ${ADMIN_KEY}` } });
      await eventually(() => raw.messages.some((m) => m.type === 'connection_ack'));
      raw.socket.close();
    } finally {
      await app.close();
      await h.close();
    }
  });

  it('at shutdown closes every connection with 1001 and ends its subscriptions', async () => {
    const h = await startHarness();
    await h.sql('CREATE TABLE s (id BIGINT PRIMARY KEY)');
    const raw = await rawSocket(h.wsUrl, 'graphql-transport-ws');
    raw.send({ type: 'connection_init', payload: { Authorization: `Bearer ${ADMIN_KEY}` } });
    await eventually(() => raw.messages.length > 0);
    raw.send({ id: '1', type: 'subscribe', payload: { query: 'subscription { s_events { sequence } }' } });
    raw.send({ id: '2', type: 'subscribe', payload: { query: 'subscription { s }' } });
    await eventually(() => h.feed.openFeeds === 1 && raw.messages.length >= 2);
    const feed = h.feed;
    const sources = h.sources;
    await h.close();
    expect(raw.state.closed?.code).toBe(1001);
    expect(feed.openFeeds).toBe(0);
    expect(sources.open).toBe(0);
  });
});

export type { WsSocket };
