/**
 * The CDC metrics (the spec's table): read from the running streams at scrape time, so the sinks
 * keep plain counters and protocols/ owns the Prometheus shapes.
 */
import { Gauge, type Registry } from 'prom-client';

/** One stream's counters (sinks' CdcStreams.metrics()). */
export interface CdcMetricRow {
  readonly name: string;
  readonly tenant: string;
  readonly eventsDelivered: number;
  readonly eventsFiltered: number;
  readonly lagRecords: number;
  readonly queued: number;
}

/**
 * svc_cdc_events_processed_total and svc_cdc_events_filtered_total are counters by nature; they
 * are gauges here only in prom-client's sense of "set at collect time", and typed counter in the
 * exposition, so Prometheus' rate() applies.
 */
export function registerCdcMetrics(
  registry: Registry,
  rows: () => readonly CdcMetricRow[],
  webhooks: () => readonly { readonly id: string; readonly tenant: string; readonly filtered: number }[] = () => [],
): void {
  const registers = [registry];
  const labelNames = ['stream', 'database'] as const;
  const each = (gauge: Gauge<'stream' | 'database'>, value: (row: CdcMetricRow) => number): void => {
    gauge.reset();
    for (const row of rows()) gauge.set({ stream: row.name, database: row.tenant }, value(row));
  };
  const processed = new Gauge({
    name: 'svc_cdc_events_processed_total',
    help: 'Change events a CDC stream delivered since start',
    labelNames,
    registers,
    collect(this: Gauge<'stream' | 'database'>) {
      each(this, (r) => r.eventsDelivered);
    },
  });
  const filtered = new Gauge({
    name: 'svc_cdc_events_filtered_total',
    help: 'Change events a CDC stream (label stream) or a webhook (label webhook) left out by its filters since start',
    labelNames: ['stream', 'webhook', 'database'] as const,
    registers,
    collect(this: Gauge<'stream' | 'webhook' | 'database'>) {
      this.reset();
      for (const row of rows()) this.set({ stream: row.name, database: row.tenant }, row.eventsFiltered);
      for (const row of webhooks()) this.set({ webhook: row.id, database: row.tenant }, row.filtered);
    },
  });
  for (const metric of [processed, filtered]) (metric as unknown as { type: string }).type = 'counter';
  new Gauge({
    name: 'svc_cdc_lag_records',
    help: 'Log records a CDC stream is behind the durable head',
    labelNames,
    registers,
    collect(this: Gauge<'stream' | 'database'>) {
      each(this, (r) => r.lagRecords);
    },
  });
}
