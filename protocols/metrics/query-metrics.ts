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
