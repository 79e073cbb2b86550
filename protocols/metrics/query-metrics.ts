import type { FastifyPluginAsync } from 'fastify';
import '../auth/principal.js';
/** One finished query, as the query routes report it. */
export interface QuerySample {
  /** The tenant the query ran in (the `database` label). */
  readonly database: string;
  readonly durationSeconds: number;
  /** False when the query failed, timed out or was cancelled. */
  readonly ok: boolean;
}

/** Where the query routes (POST /query, /query/stream, /query/explain, async queries) report each query. */
export interface QueryMetrics {
  observe(sample: QuerySample): void;
}

/** Runs one query's `work` and reports its duration and outcome to `metrics` (when there is one). */
export async function measured<T>(metrics: QueryMetrics | undefined, database: string, work: () => Promise<T>): Promise<T> {
  if (metrics === undefined) return work();
  const started = performance.now();
  let ok = false;
  try {
    const result = await work();
    ok = true;
    return result;
  } finally {
    metrics.observe({ database, durationSeconds: (performance.now() - started) / 1000, ok });
  }
}

/**
 * Counts every answered request of a resource plugin whose handlers each run SQL (tables, rows,
 * vectors) as one query: its duration and whether it succeeded. Requests refused before a
 * principal was known (no credentials) are not queries.
 */
export function countedAsQueries(metrics: QueryMetrics, plugin: FastifyPluginAsync): FastifyPluginAsync {
  return async (app) => {
    // A callback hook, not an async one: it runs on every response and must cost no promise.
    app.addHook('onResponse', (request, reply, done) => {
      if (request.principal !== undefined) {
        metrics.observe({ database: request.principal.tenant, durationSeconds: reply.elapsedTime / 1000, ok: reply.statusCode < 400 });
      }
      done();
    });
    await app.register(plugin);
  };
}
