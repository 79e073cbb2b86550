import { describe, expect, it } from 'vitest';
import { DATABASE_LABELS_MAX, OTHER_DATABASE, ServiceMetrics } from '../../protocols/metrics/service-metrics.js';
import { measured } from '../../protocols/metrics/query-metrics.js';

function metricsWith(scan: { hits: number; fills: number }) {
  return new ServiceMetrics({ connections: { count: async () => 3, max: () => 10 }, scanCache: () => scan, healthy: () => true });
}

const lines = (text: string, prefix: string) => text.split('\n').filter((l) => l.startsWith(prefix));

describe('ServiceMetrics', () => {
  it('starts with zeroed query series for the default database and a 0 cache ratio', async () => {
    const { body } = await metricsWith({ hits: 0, fills: 0 }).render();
    expect(body).toContain('svc_queries_total{status="success",database="default"} 0');
    expect(body).toContain('svc_queries_total{status="error",database="default"} 0');
    expect(body).toContain('svc_query_duration_seconds_count{database="default"} 0');
    expect(body).toMatch(/^svc_cache_hit_ratio 0$/m);
    expect(body).toMatch(/^svc_connections_active 3$/m);
  });

  it('the cache ratio is hits / (hits + fills)', async () => {
    const { body } = await metricsWith({ hits: 3, fills: 1 }).render();
    expect(body).toMatch(/^svc_cache_hit_ratio 0.75$/m);
  });

  it(`keeps at most ${DATABASE_LABELS_MAX} database labels; later tenants count as ${OTHER_DATABASE}`, async () => {
    const metrics = metricsWith({ hits: 0, fills: 0 });
    for (let i = 0; i < DATABASE_LABELS_MAX + 50; i++) metrics.observe({ database: `tenant${i}`, durationSeconds: 0.002, ok: true });
    const { body } = await metrics.render();
    const series = lines(body, 'svc_queries_total{status="success"');
    expect(series).toHaveLength(DATABASE_LABELS_MAX + 1);
    // "default" took one of the places, so tenant99..tenant149 share the overflow label.
    expect(series).toContain(`svc_queries_total{status="success",database="${OTHER_DATABASE}"} 51`);
  });

  it('measured() reports success, error (rethrown) and the duration', async () => {
    const metrics = metricsWith({ hits: 0, fills: 0 });
    expect(await measured(metrics, 'acme', async () => 42)).toBe(42);
    await expect(measured(metrics, 'acme', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    const { body } = await metrics.render();
    expect(body).toContain('svc_queries_total{status="success",database="acme"} 1');
    expect(body).toContain('svc_queries_total{status="error",database="acme"} 1');
    expect(body).toContain('svc_query_duration_seconds_count{database="acme"} 2');
  });
});
