/**
 * CDC streams and webhooks are catalog facts in the log: they survive a restart and `svcdb replay`
 * (which rebuilds every projection from the log), a paused stream stays paused and a disabled
 * webhook disabled, and the sinks' own state (a stream's position) is carried over by the replay.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

let dataDir: string;
let server: TestServer | null = null;

async function call(method: string, route: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server!.baseUrl}/api/v1${route}`, {
    method,
    headers: { authorization: `Bearer ${server!.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

const sql = async (text: string) => {
  const reply = await call('POST', '/query', { sql: text });
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body;
};

afterAll(async () => {
  await server?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('streams and webhooks across restart and replay', () => {
  it('come back as they were, paused and disabled included', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'svcdb-objects-'));
    server = await startTestServer({ dataDir });
    await sql('CREATE TABLE t (id INT PRIMARY KEY)');
    await sql("CREATE CHANGE DATA CAPTURE ON t TO KAFKA '127.0.0.1:1' AS live_stream");
    await sql("CREATE CHANGE DATA CAPTURE ON t TO KAFKA '127.0.0.1:1' TOPIC 'x' AS paused_stream WITH (predicate = 'id > 1')");
    await sql('ALTER CDC STREAM paused_stream PAUSE');
    const hook = await call('POST', '/webhooks', { url: 'http://127.0.0.1:1/hook', secret: 'replay-secret', tables: ['t'] });
    expect(hook.status).toBe(201);
    const off = await call('PATCH', `/webhooks/${hook.body.id}`, { enabled: false });
    expect(off.status).toBe(200);
    await sql('INSERT INTO t VALUES (1), (2)');
    const before = { streams: (await sql('SHOW CDC STREAMS')).data, hooks: (await call('GET', '/webhooks')).body.webhooks };
    await server.close();
    server = null;
    const replayed = await runCli(['replay', '--data', dataDir]);
    expect(replayed.code, replayed.stderr).toBe(0);
    server = await startTestServer({ dataDir });
    const after = { streams: (await sql('SHOW CDC STREAMS')).data, hooks: (await call('GET', '/webhooks')).body.webhooks };
    const shape = (s: { streams: any[]; hooks: any[] }) => ({
      streams: s.streams.map(({ state: _state, ...rest }: { state: string }) => rest),
      hooks: s.hooks.map((h: any) => ({ id: h.id, url: h.url, enabled: h.enabled, tables: h.tables, created_at: h.created_at })),
    });
    expect(shape(after)).toEqual(shape(before));
    expect(after.streams.find((r: { name: string }) => r.name === 'paused_stream').state).toBe('paused');
    expect(after.hooks[0].enabled).toBe(false);
    expect((await sql('SELECT count(*) AS n FROM t')).data[0].n).toBe(2);
  });
});
