import fc from 'fast-check';
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { QUERY_DURATION_BUCKETS_SECONDS, ServiceMetrics } from '../../protocols/metrics/service-metrics.js';

const COUNT_HELP = 'Queries run (POST /query, /query/stream, /query/explain, async), by outcome and database (tenant)';
const DURATION_HELP = 'Time from the start of a query to its result or error, by database (tenant)';

/** The query series as ServiceMetrics made them with prom-client's Counter and Histogram (before query-series.ts). */
function promClientSeries() {
  const registry = new Registry();
  const queries = new Counter({ name: 'svc_queries_total', help: COUNT_HELP, labelNames: ['status', 'database'], registers: [registry] });
  const duration = new Histogram({
    name: 'svc_query_duration_seconds',
    help: DURATION_HELP,
    labelNames: ['database'],
    buckets: QUERY_DURATION_BUCKETS_SECONDS,
    registers: [registry],
  });
  for (const status of ['success', 'error']) queries.inc({ status, database: 'default' }, 0);
  duration.zero({ database: 'default' });
  return {
    observe(sample: { database: string; durationSeconds: number; ok: boolean }) {
      queries.inc({ status: sample.ok ? 'success' : 'error', database: sample.database });
      duration.observe({ database: sample.database }, sample.durationSeconds);
    },
    text: () => registry.metrics(),
  };
}

/** The two query families in a /metrics body, as one registry holding only them would write them. */
function queryFamilies(body: string): string {
  const blocks = body.split('\n\n');
  const family = (name: string) => blocks.find((b) => b.startsWith(`# HELP ${name} `))!;
  return `${family('svc_queries_total')}\n\n${family('svc_query_duration_seconds')}\n`;
}

const sample = fc.record({
  // Label values that need escaping, the overflow label, and a few plain tenants.
  database: fc.constantFrom('default', 'acme', 'a"b', 'back\\slash', 'new\nline', '_other', 'é😀', '0', ''),
  durationSeconds: fc.oneof(
    fc.constantFrom(0, 0.001, 0.005, 0.0051, 300, 300.0001, 1e-9, 0.1 + 0.2, 5e-324),
    fc.double({ min: 0, max: 1000, noNaN: true, noDefaultInfinity: true }),
  ),
  ok: fc.boolean(),
});

describe('the hand-kept query series write what prom-client wrote', () => {
  it('for any sequence of queries, byte for byte (series order, escaping, sums, buckets)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(sample, { maxLength: 60 }), async (samples) => {
        const before = promClientSeries();
        const after = new ServiceMetrics({
          connections: { count: async () => 0, max: () => 1 },
          scanCache: () => ({ hits: 0, fills: 0 }),
          healthy: () => true,
        });
        for (const s of samples) {
          before.observe(s);
          after.observe(s);
        }
        expect(queryFamilies((await after.render()).body)).toBe(await before.text());
      }),
      { numRuns: 300 },
    );
  });

  it('with no query yet: the zeroed default series', async () => {
    const after = new ServiceMetrics({ connections: { count: async () => 0, max: () => 1 }, scanCache: () => ({ hits: 0, fills: 0 }), healthy: () => true });
    expect(queryFamilies((await after.render()).body)).toBe(await promClientSeries().text());
  });
});
