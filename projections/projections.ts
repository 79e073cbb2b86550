import type { Logger } from '../core/logger.js';
import type { Lsn } from '../core/units.js';
import type { Log } from '../log/index.js';
import { AppliedTracker } from './applied-tracker.js';
import type { CatalogState } from './catalog-state.js';
import { runConsumer } from './consumer.js';
import { RecordHandoff } from './record-handoff.js';
import { RowVersionedStore } from './row-versions.js';
import { Sequencer } from './sequencer.js';
import type { StateStore } from './state-store.js';
import { TablesProjection } from './tables-projection.js';

export interface ProjectionOptions {
  readonly readBatchBytesMax: number;
  /** Delete log segments every consumer has applied (off by default: the log is the database). */
  readonly retentionEnabled: boolean;
  readonly logger: Logger;
}

export interface ConsumerOffset {
  readonly name: string;
  readonly offset: Lsn;
}

/**
 * The running projections over one log and one store, and the sequencer that writes through them.
 * The composition root builds the log and the store and hands them in.
 */
export class Projections {
  readonly applied: AppliedTracker;
  readonly sequencer: Sequencer;
  private readonly abort = new AbortController();
  private loop: Promise<void> | null = null;

  private constructor(
    readonly log: Log,
    /** The store, counting writes to each table's rows (row-versions.ts) for the query layer. */
    readonly store: RowVersionedStore,
    readonly tables: TablesProjection,
    handoff: RecordHandoff,
    private readonly options: ProjectionOptions,
  ) {
    this.applied = new AppliedTracker(tables.offset);
    this.sequencer = new Sequencer({ log, store, catalog: tables.catalog, applied: this.applied, handoff });
  }

  static async open(log: Log, rawStore: StateStore, options: ProjectionOptions): Promise<Projections> {
    const store = new RowVersionedStore(rawStore);
    const handoff = new RecordHandoff();
    const tables = await TablesProjection.load(store, options.logger.child({ component: 'tables-projection' }), handoff);
    return new Projections(log, store, tables, handoff, options);
  }

  get catalog(): CatalogState {
    return this.tables.catalog;
  }

  /** True once every consumer has applied everything durable at the time of asking. */
  get caughtUp(): boolean {
    return this.applied.failed === null && this.applied.lsn >= this.log.durableLsn;
  }

  get healthy(): boolean {
    return this.applied.failed === null;
  }

  consumers(): ConsumerOffset[] {
    return [{ name: this.tables.name, offset: this.tables.offset }];
  }

  /** Starts following the log; resolves once caught up with the durable head as of now. */
  async start(onProgress?: (appliedLsn: Lsn, targetLsn: Lsn) => void): Promise<void> {
    const target = this.log.durableLsn;
    const { logger } = this.options;
    this.loop = runConsumer(this.log, this.tables, {
      batchBytesMax: this.options.readBatchBytesMax,
      signal: this.abort.signal,
      logger,
      onApplied: (offset) => {
        this.applied.advance(offset);
        onProgress?.(offset, target);
        if (this.options.retentionEnabled) void this.retain(offset);
      },
    }).catch((error: unknown) => {
      logger.error({ err: error, consumer: this.tables.name }, 'projection stopped');
      this.applied.fail(error);
    });
    await this.applied.waitFor(target);
  }

  /** Stops the apply loop (after the batch in progress) and refuses new writes. */
  async stop(): Promise<void> {
    this.sequencer.close();
    this.abort.abort();
    await this.loop;
  }

  private retaining = false;

  private async retain(belowOrAt: Lsn): Promise<void> {
    if (this.retaining) return;
    this.retaining = true;
    try {
      const min = Math.min(...this.consumers().map((c) => c.offset));
      const { segmentsDeleted } = await this.log.retain((min + 1) as Lsn);
      if (segmentsDeleted > 0) this.options.logger.info({ segmentsDeleted, belowLsn: min + 1, appliedLsn: belowOrAt }, 'log segments retained');
    } finally {
      this.retaining = false;
    }
  }
}
