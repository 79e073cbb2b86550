import type { Metric, Registry } from 'prom-client';

/**
 * The per-query series (svc_queries_total, svc_query_duration_seconds) kept by hand: every request
 * of the query and row routes lands here, and prom-client's Counter.inc and Histogram.observe build a
 * label hash string per call (and the histogram a property key from the bucket's bound). Here a
 * database's series are one Map lookup away and a bucket is an array index. The registry still
 * writes the text: get() hands it the very values prom-client's own metrics would (same series, same
 * order: the order each was first touched, same sums added in the same order), so /metrics is byte
 * for byte what it was (test/protocols/query-series.test.ts compares both for the same observations).
 */

/** A series' value as prom-client's registry reads it (getForPromString's shape). */
interface ExportedValue {
  readonly labels: Record<string, string | number>;
  readonly sharedLabels?: Record<string, string>;
  readonly value: number;
  readonly metricName?: string;
  readonly exemplar?: null;
}

interface Exported {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly values: ExportedValue[];
  readonly aggregator: 'sum';
}

interface CountSeries {
  value: number;
  readonly labels: { readonly status: string; readonly database: string };
}

/** svc_queries_total{status, database}: a counter per outcome and database. */
export class QueryCounts {
  readonly type = 'counter';
  readonly aggregator = 'sum';
  /** In the order each series was created (the order prom-client lists them). */
  private readonly series: CountSeries[] = [];
  private readonly byDatabase = new Map<string, { success?: CountSeries; error?: CountSeries }>();

  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  /** Adds `by` to the series of this outcome and database (creating it: `by` 0 makes it exist at 0). */
  add(status: 'success' | 'error', database: string, by = 1): void {
    let pair = this.byDatabase.get(database);
    if (pair === undefined) this.byDatabase.set(database, (pair = {}));
    const found = pair[status];
    if (found !== undefined) {
      found.value += by;
      return;
    }
    const created: CountSeries = { value: by, labels: { status, database } };
    pair[status] = created;
    this.series.push(created);
  }

  async get(): Promise<Exported> {
    return { help: this.help, name: this.name, type: this.type, values: this.series.map((s) => ({ value: s.value, labels: s.labels })), aggregator: 'sum' };
  }
}

interface DurationSeries {
  readonly labels: { readonly database: string };
  /** Observations per bucket (not cumulative), by the bucket's index in the bounds. */
  readonly counts: number[];
  sum: number;
  count: number;
}

/** svc_query_duration_seconds{database}: a histogram per database over fixed bounds. */
export class QueryDurations {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series: DurationSeries[] = [];
  private readonly byDatabase = new Map<string, DurationSeries>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
  ) {}

  /** Makes a database's series exist with every bucket at 0 (as prom-client's zero()). */
  zero(database: string): void {
    if (!this.byDatabase.has(database)) this.create(database);
  }

  observe(database: string, seconds: number): void {
    const series = this.byDatabase.get(database) ?? this.create(database);
    const bounds = this.bounds;
    // The first bound the value fits under; above every bound it counts in +Inf only (count).
    for (let i = 0; i < bounds.length; i++) {
      if (seconds <= bounds[i]!) {
        series.counts[i]! += 1;
        break;
      }
    }
    series.sum += seconds;
    series.count += 1;
  }

  /** The registry's view (labels of a bucket line: le first, then the series' own). */
  async getForPromString(): Promise<Exported> {
    const values: ExportedValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const series of this.series) {
      let cumulative = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        cumulative += series.counts[i]!;
        values.push({ labels: { le: this.bounds[i]! }, sharedLabels: series.labels, value: cumulative, metricName: bucket, exemplar: null });
      }
      values.push({ labels: { le: '+Inf' }, sharedLabels: series.labels, value: series.count, metricName: bucket, exemplar: null });
      values.push({ labels: {}, sharedLabels: series.labels, value: series.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: series.labels, value: series.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' };
  }

  /** As getForPromString, each value's labels holding the series' own (prom-client's get() for JSON). */
  async get(): Promise<Exported> {
    const data = await this.getForPromString();
    return { ...data, values: data.values.map(({ sharedLabels, labels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } })) };
  }

  private create(database: string): DurationSeries {
    const series: DurationSeries = { labels: { database }, counts: new Array<number>(this.bounds.length).fill(0), sum: 0, count: 0 };
    this.byDatabase.set(database, series);
    this.series.push(series);
    return series;
  }
}

/** Puts a hand-kept series in a registry beside prom-client's own metrics (it writes their text alike). */
export function registerSeries(registry: Registry, series: QueryCounts | QueryDurations): void {
  registry.registerMetric(series as unknown as Metric);
}
