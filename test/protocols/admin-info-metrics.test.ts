import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../bin/app.js';
import type { ServeHandle } from '../../bin/app-types.js';
import { hasTool, needs } from '../helpers/optional-tool.js';
import { tempDir } from '../helpers/stack.js';
import { getJson, testConfig } from './helpers.js';

const KEY = 'admin-key-123';
const auth = { authorization: `Bearer ${KEY}` };

const PROMTOOL = hasTool('promtool');
if (!PROMTOOL) console.warn('admin-info-metrics.test.ts: promtool checks skipped: no `promtool` on PATH (Debian package prometheus; .ci/run installs it)');

/** `promtool check metrics` of a /metrics body: its exit status and what it printed. */
function promtoolCheck(body: string): { status: number | null; output: string } {
  const run = spawnSync('promtool', ['check', 'metrics'], { input: body, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** The value of one sample line, e.g. sample(text, 'svc_queries_total{status="success",database="default"}'). */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** A port free right now (the ops port's 0 means "off", so the test picks one). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe('GET /api/v1/info, /api/v1/metrics and the ops port /metrics (real server)', () => {
  let server: ServeHandle;
  let remove: () => Promise<void>;
  const api = (path: string) => `${server.httpUrl}/api/v1${path}`;
  const query = (body: unknown) =>
    getJson(api('/query'), { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const metricsText = async (url: string, headers: Record<string, string> = auth) => {
    const res = await fetch(url, { headers });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    return res.text();
  };

  beforeAll(async () => {
    const dir = await tempDir('svcdb-admin-');
    remove = dir.remove;
    server = await startServer(
      testConfig({ data: dir.dir, 'api-key': KEY, 'log-level': 'silent', 'max-connections': '500', 'ops-port': String(await freePort()) }),
      pino({ level: 'silent' }),
    );
  });
  afterAll(async () => {
    await server.close('test');
    await remove();
  });

  it('/info and /metrics need the API key; /live, /ready, /health do not', async () => {
    for (const path of ['/info', '/metrics']) {
      const res = await getJson(api(path));
      expect(res.status, path).toBe(401);
      expect(res.body.error.code).toBe('AUTHENTICATION_REQUIRED');
    }
    for (const path of ['/live', '/ready', '/health']) expect((await fetch(api(path))).status, path).toBe(200);
  });

  it('/info reports version, build, api_version, what this build serves, and the configured limits', async () => {
    const res = await getJson(api('/info'), { headers: auth });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      version: '7.0.0',
      build: `7.0.0+node.${process.versions.node}`,
      api_version: 'v1',
      features: { vector_search: true, graph_queries: false, time_series: false, multi_tenancy: true, streaming: true },
      protocols: ['http'],
      limits: { max_query_size_bytes: 1_048_576, max_result_rows: 100_000, max_connections: 500 },
    });
  });

  it('/metrics counts queries by status and database, with durations, connections and the cache ratio', async () => {
    const before = await metricsText(api('/metrics'));
    const success = (text: string) => sample(text, 'svc_queries_total{status="success",database="default"}') ?? 0;
    const error = (text: string) => sample(text, 'svc_queries_total{status="error",database="default"}') ?? 0;
    const observed = (text: string) => sample(text, 'svc_query_duration_seconds_count{database="default"}') ?? 0;

    expect((await query({ sql: 'CREATE TABLE m (id INTEGER PRIMARY KEY)' })).status).toBe(200);
    expect((await query({ sql: 'SELECT * FROM m' })).status).toBe(200);
    expect((await query({ sql: 'SELECT * FROM m' })).status).toBe(200);
    expect((await query({ sql: 'SELECT * FROM nope' })).status).toBe(404);
    const explain = await getJson(api('/query/explain'), {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ sql: 'SELECT 1' }),
    });
    expect(explain.status).toBe(200);
    const stream = await fetch(api('/query/stream'), {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ sql: 'SELECT 1 AS x' }),
    });
    expect(await stream.text()).toBe('{"x":1}\n');
    const submitted = await getJson(api('/query/async'), {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ sql: 'SELECT 2' }),
    });
    expect(submitted.status).toBe(202);
    for (let i = 0; i < 100 && (await getJson(api(`/query/${submitted.body.query_id}`), { headers: auth })).body.status !== 'completed'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }

    const after = await metricsText(api('/metrics'));
    // create + 2 selects + explain + stream + async.
    expect(success(after) - success(before)).toBe(6);
    expect(error(after) - error(before)).toBe(1);
    expect(observed(after) - observed(before)).toBe(7);
    expect(after).toMatch(/^# TYPE svc_query_duration_seconds histogram$/m);
    expect(after).toContain('svc_query_duration_seconds_bucket{le="0.001",database="default"}');
    expect(sample(after, 'svc_connections_active')).toBeGreaterThanOrEqual(1);
    // The second full scan of m was served from the scan cache.
    const ratio = sample(after, 'svc_cache_hit_ratio')!;
    expect(ratio).toBeGreaterThan(0);
    expect(ratio).toBeLessThanOrEqual(1);
    expect(sample(after, 'svc_up')).toBe(1);
    expect(sample(after, 'svc_memory_usage_bytes')).toBeGreaterThan(1_000_000);
    // prom-client's default process metrics.
    expect(after).toMatch(/^process_cpu_user_seconds_total /m);
    expect(after).toMatch(/^nodejs_eventloop_lag_seconds /m);
  });

  it('the ops port serves /metrics without credentials, with svc_up, svc_connections and svc_memory_usage_bytes', async () => {
    const text = await metricsText(`${server.opsUrl}/metrics`, {});
    expect(sample(text, 'svc_up')).toBe(1);
    expect(sample(text, 'svc_connections')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'svc_memory_usage_bytes')).toBeGreaterThan(0);
    expect(text).toMatch(/^# TYPE svc_queries_total counter$/m);
  });

  it.skipIf(!PROMTOOL)(`${needs('promtool')} both /metrics bodies pass \`promtool check metrics\``, async () => {
    for (const [name, body] of [
      ['/api/v1/metrics', await metricsText(api('/metrics'))],
      ['ops /metrics', await metricsText(`${server.opsUrl}/metrics`, {})],
    ] as const) {
      const { status, output } = promtoolCheck(body);
      expect(output.trim(), name).toBe('');
      expect(status, name).toBe(0);
    }
  });

  it('POST /query answers MessagePack and NDJSON when asked', async () => {
    await query({ sql: 'INSERT INTO m VALUES (1), (2)' });
    const body = JSON.stringify({ sql: 'SELECT id FROM m ORDER BY id', include_metadata: true });
    const ndjson = await fetch(api('/query'), {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', accept: 'application/x-ndjson' },
      body,
    });
    expect(await ndjson.text()).toBe('{"id":1}\n{"id":2}\n');
    const { decode } = await import('@msgpack/msgpack');
    const packed = await fetch(api('/query'), {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', accept: 'application/msgpack' },
      body,
    });
    const decoded = decode(new Uint8Array(await packed.arrayBuffer())) as { data: unknown; metadata: { row_count: number } };
    expect(decoded.data).toEqual([{ id: 1 }, { id: 2 }]);
    expect(decoded.metadata.row_count).toBe(2);
  });
});
