/**
 * The CDC stream registry: keeps one runner per stream definition in the catalog. Definitions are
 * catalog facts in the log, so the registry follows the tables projection: after each applied
 * batch that changed a stream (CREATE, ALTER ... PAUSE/RESUME, DROP) it starts, updates or stops
 * runners. Built by the composition root; the engine asks it for SHOW CDC STREAM STATUS.
 */
import type { Subscription } from 'rxjs';
import type { TableDef } from '../../core/catalog.js';
import { CDC_STREAM_OBJECT, decodeCdcStreamDef, type CdcDestination, type CdcStreamDef, type CdcStreamFilter } from '../../core/cdc-stream.js';
import { SvcError } from '../../core/errors.js';
import type { CatalogObject, CatalogState } from '../../projections/index.js';
import type { CdcRuntime, CdcStreamStatus } from '../../query/index.js';
import { CoalescedTask } from '../events/coalesced.js';
import type { CaptureSpec } from '../events/event-source.js';
import type { Destination } from './destination.js';
import { StreamRunner, type RunnerDeps, type StreamFilter } from './stream-runner.js';

export interface CdcStreamsDeps extends RunnerDeps {
  readonly catalog: CatalogState;
  /** Emits after the tables projection applied a batch. */
  readonly applied$: { subscribe(next: () => void): Subscription };
  /** Builds the destination of a stream (Kafka, Kinesis), with its encoder. */
  readonly destinationFor: (def: CdcStreamDef) => Destination;
  /** SVC_KAFKA_BROKERS_ALLOWED as a list, or null (any broker). */
  readonly kafkaBrokersAllowed: readonly string[] | null;
  /** Compiles a stream filter against a table (throws VALIDATION_ERROR). */
  readonly compileFilter?: (tenant: string, table: TableDef, filter: CdcStreamFilter) => Promise<StreamFilter>;
  /** The current Avro schema of a FORMAT AVRO stream's table. */
  readonly schemaOf?: (def: CdcStreamDef) => { readonly schema: unknown; readonly fingerprint: string } | null;
}

/** Counts per stream for /metrics. */
export interface CdcStreamMetrics {
  readonly name: string;
  readonly tenant: string;
  readonly state: string;
  readonly eventsDelivered: number;
  readonly eventsFiltered: number;
  readonly lagRecords: number;
  readonly queued: number;
}

const runnerKey = (tenant: string, name: string): string => `${tenant}\u0000${name}`;

export class CdcStreams implements CdcRuntime {
  private readonly runners = new Map<string, { runner: StreamRunner; updatedLsn: number }>();
  private subscription: Subscription | null = null;
  private readonly syncs = new CoalescedTask(
    () => this.syncNow(),
    (error: unknown) => {
      this.deps.logger.error({ err: error }, 'cdc: syncing streams with the catalog failed');
    },
  );
  private stopped = false;

  constructor(private readonly deps: CdcStreamsDeps) {}

  /** The lowest log position a stream still needs (retention keeps the log above it); null: none. */
  lowestNeededLsn(): number | null {
    // Before the runners exist (while the server catches up) their positions are unknown: keep all.
    if (!this.subscription && !this.stopped) return 0;
    let lowest: number | null = null;
    for (const { runner } of this.runners.values()) {
      const needed = runner.neededLsn();
      if (lowest === null || needed < lowest) lowest = needed;
    }
    return lowest;
  }

  /** Starts the streams of the catalog and follows its changes. */
  start(): void {
    this.sync();
    this.subscription = this.deps.applied$.subscribe(() => this.sync());
  }

  status(tenant: string, name: string): CdcStreamStatus | null {
    return this.runners.get(runnerKey(tenant, name))?.runner.status() ?? null;
  }

  /** Refuses a Kafka broker outside SVC_KAFKA_BROKERS_ALLOWED (when set). */
  checkDestination(destination: CdcDestination): void {
    const allowed = this.deps.kafkaBrokersAllowed;
    if (destination.kind !== 'kafka' || allowed === null) return;
    const refused = destination.brokers
      .split(',')
      .map((b) => b.trim())
      .filter((b) => !allowed.includes(b));
    if (refused.length > 0) {
      throw new SvcError('AUTHORIZATION_DENIED', `Kafka broker ${refused.join(', ')} is not in SVC_KAFKA_BROKERS_ALLOWED`, { brokers: refused });
    }
  }

  /** Refuses a filter that does not compile against the table (CREATE CHANGE DATA CAPTURE ... WITH). */
  async checkFilter(tenant: string, table: TableDef, filter: CdcStreamFilter): Promise<void> {
    await this.deps.compileFilter?.(tenant, table, filter);
  }

  /** The Avro schema a FORMAT AVRO stream writes with now (null: JSON, or not running). */
  schema(tenant: string, name: string): { readonly schema: unknown; readonly fingerprint: string } | null {
    const runner = this.runners.get(runnerKey(tenant, name))?.runner;
    if (!runner || runner.definition.format !== 'avro') return null;
    return this.deps.schemaOf?.(runner.definition) ?? null;
  }

  definition(tenant: string, name: string): CdcStreamDef | null {
    return this.runners.get(runnerKey(tenant, name))?.runner.definition ?? null;
  }

  metrics(): CdcStreamMetrics[] {
    return [...this.runners.values()].map(({ runner }) => {
      const status = runner.status();
      return {
        name: runner.name,
        tenant: runner.definition.tenant,
        state: status.state,
        eventsDelivered: status.eventsDelivered,
        eventsFiltered: status.eventsFiltered,
        lagRecords: status.lagRecords,
        queued: runner.queued,
      };
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.subscription?.unsubscribe();
    await this.syncs.settled();
    await Promise.all([...this.runners.values()].map(({ runner }) => runner.stop()));
    this.runners.clear();
  }

  /** Brings the runners in line with the catalog (one sync at a time; requests meanwhile make one more). */
  private sync(): void {
    this.syncs.request();
  }

  private async syncNow(): Promise<void> {
    if (this.stopped) return;
    const objects = this.deps.catalog.objects(CDC_STREAM_OBJECT);
    const live = new Set<string>();
    for (const object of objects) {
      const key = runnerKey(object.tenant, object.name);
      live.add(key);
      const current = this.runners.get(key);
      const def = decodeCdcStreamDef(object.definition);
      if (current && current.runner.definition.id === def.id) {
        if (current.updatedLsn !== object.updatedLsn) {
          current.runner.update(def);
          current.updatedLsn = object.updatedLsn;
        }
        continue;
      }
      if (current) await this.remove(key, current.runner, true);
      this.add(key, object, def);
    }
    for (const [key, { runner }] of this.runners) {
      if (!live.has(key)) await this.remove(key, runner, true);
    }
  }

  private add(key: string, object: CatalogObject, def: CdcStreamDef): void {
    const capture = cdcCaptureSpec(object, def);
    const runner = new StreamRunner(def, capture, this.deps.destinationFor(def), this.deps);
    this.runners.set(key, { runner, updatedLsn: object.updatedLsn });
    runner.start();
    this.deps.logger.info({ stream: def.name, tenant: def.tenant, table: def.table, destination: def.destination.kind }, 'cdc: stream started');
  }

  /** Stops a runner; a dropped stream also forgets its local offset. */
  private async remove(key: string, runner: StreamRunner, dropped: boolean): Promise<void> {
    this.runners.delete(key);
    await runner.stop();
    if (dropped) await this.deps.offsets.delete(runner.definition.id);
    this.deps.logger.info({ stream: runner.name }, 'cdc: stream stopped');
  }
}

/** What a CDC stream captures: its table's changes from the stream's creation in the log (and its snapshot). */
export function cdcCaptureSpec(object: CatalogObject, def: CdcStreamDef): CaptureSpec {
  return {
    tenant: def.tenant,
    tableIds: [def.tableId],
    objectKind: CDC_STREAM_OBJECT,
    objectName: def.name,
    createdLsn: object.createdLsn,
    createdSequence: object.createdSequence,
    snapshotRows: object.snapshotRows,
  };
}
