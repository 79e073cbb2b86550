import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectionGauge } from '../../protocols/http/connections.js';
import { listen } from '../../protocols/listen.js';
import { ServiceMetrics } from '../../protocols/metrics/service-metrics.js';
import { createOpsServer } from '../../protocols/ops/server.js';
import { captureLogger, getJson, startHttp, testConfig, type Running } from './helpers.js';

describe('ops server', () => {
  let http: Running;
  let opsUrl: string;
  let closeOps: () => Promise<void>;

  beforeEach(async () => {
    http = await startHttp();
    const { logger } = captureLogger();
    const connections = connectionGauge(http.app.server);
    const status = http.status;
    const metrics = new ServiceMetrics({ connections, scanCache: () => ({ hits: 0, fills: 0 }), healthy: () => status.storageHealthy() });
    const ops = createOpsServer({ config: testConfig({ data: process.cwd() }), logger, status, connections, metrics });
    opsUrl = await listen(ops, { host: '127.0.0.1', port: 0, settingName: 'SVC_OPS_PORT / --ops-port' });
    closeOps = () => ops.close();
  });
  afterEach(async () => {
    await closeOps();
    await http.close();
  });

  it('GET /health is 200 healthy, 503 unhealthy', async () => {
    const ok = await getJson(`${opsUrl}/health`);
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe('healthy');
    expect(ok.body.version).toBe('7.0.0');
    http.status.storageOk = false;
    const bad = await getJson(`${opsUrl}/health`);
    expect(bad.status).toBe(503);
    expect(bad.body.status).toBe('unhealthy');
  });

  it('GET /health/ready follows the engine', async () => {
    const ok = await getJson(`${opsUrl}/health/ready`);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ ready: true, checks: { database: true, connections_available: true, replication_synced: true } });
    http.status.ready = false;
    const notReady = await getJson(`${opsUrl}/health/ready`);
    expect(notReady.status).toBe(503);
    expect(notReady.body.ready).toBe(false);
  });

  it('GET /health/detailed has the spec shape with real, plausible metrics', async () => {
    // Hold one connection open to the database port so `connections` counts it.
    const held = await fetch(`${http.url}/api/v1/live`, { keepalive: true });
    await held.text();
    const res = await getJson(`${opsUrl}/health/detailed`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'healthy',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      version: '7.0.0',
      components: { database: 'healthy', replication: 'not_configured', cache: 'healthy', storage: 'healthy' },
      metrics: {
        uptime_seconds: expect.any(Number),
        connections: expect.any(Number),
        memory_usage_pct: expect.any(Number),
        disk_usage_pct: expect.any(Number),
        cpu_usage_pct: expect.any(Number),
      },
    });
    const m = res.body.metrics;
    expect(Number.isInteger(m.uptime_seconds)).toBe(true);
    expect(m.connections).toBeGreaterThanOrEqual(1);
    for (const key of ['memory_usage_pct', 'disk_usage_pct', 'cpu_usage_pct']) {
      expect(m[key], key).toBeGreaterThanOrEqual(0);
      expect(m[key], key).toBeLessThanOrEqual(100);
    }
    expect(m.memory_usage_pct).toBeGreaterThan(0);
    expect(m.disk_usage_pct).toBeGreaterThan(0);
  });

  it('detailed is 503 and says which component failed when storage cannot write', async () => {
    http.status.storageOk = false;
    const res = await getJson(`${opsUrl}/health/detailed`);
    expect(res.status).toBe(503);
    expect(res.body.components.storage).toBe('unhealthy');
    expect(res.body.components.database).toBe('unhealthy');
  });

  it('GET /metrics serves the Prometheus text with svc_up, svc_connections, svc_memory_usage_bytes', async () => {
    const res = await fetch(`${opsUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await res.text();
    expect(text).toMatch(/^svc_up 1$/m);
    expect(text).toMatch(/^svc_connections \d+$/m);
    expect(text).toMatch(/^svc_memory_usage_bytes \d+$/m);
    http.status.storageOk = false;
    expect(await (await fetch(`${opsUrl}/metrics`)).text()).toMatch(/^svc_up 0$/m);
  });

  it('unknown paths are envelope 404s', async () => {
    const res = await getJson(`${opsUrl}/nope`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });
});
