/**
 * The webhook registry: one runner per webhook definition in the catalog, kept in line with it
 * after each applied batch (as CdcStreams does for streams), and the runtime the service asks for
 * live state, deliveries and redelivery. Built by the composition root.
 */
import type { Subscription } from 'rxjs';
import { SvcError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { decodeWebhookDef, WEBHOOK_OBJECT, type WebhookDef } from '../../core/webhook.js';
import type { CatalogObject, CatalogState } from '../../projections/index.js';
import { CoalescedTask } from '../events/coalesced.js';
import type { CaptureSpec } from '../events/event-source.js';
import type { DeliveryLedger } from './ledger.js';
import type { DeliveryQuery, DeliveryRecord, WebhookMetricRow, WebhookRuntime } from '../../core/webhook-api.js';
import { WebhookRunner, type WebhookRunnerDeps } from './webhook-runner.js';

export interface WebhookDeliveriesDeps extends WebhookRunnerDeps {
  readonly catalog: CatalogState;
  readonly applied$: { subscribe(next: () => void): Subscription };
  readonly ledger: DeliveryLedger;
  /** Delivered entries are kept this long (delivery_window_secs), then swept. */
  readonly deliveryWindowMs: number;
  readonly logger: Logger;
}

/** How often delivered ledger entries older than the window are swept. */
const SWEEP_INTERVAL_MS = 10 * 60_000;

export class WebhookDeliveries implements WebhookRuntime {
  private readonly runners = new Map<string, { runner: WebhookRunner; updatedLsn: number; tables: string }>();
  private subscription: Subscription | null = null;
  private readonly syncs = new CoalescedTask(
    () => this.syncNow(),
    (error: unknown) => {
      this.deps.logger.error({ err: error }, 'webhooks: syncing with the catalog failed');
    },
  );
  private sweeper: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly deps: WebhookDeliveriesDeps) {}

  start(): void {
    this.sync();
    this.subscription = this.deps.applied$.subscribe(() => this.sync());
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS);
    this.sweeper.unref();
    void this.sweep();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.subscription?.unsubscribe();
    if (this.sweeper) clearInterval(this.sweeper);
    await this.syncs.settled();
    await Promise.all([...this.runners.values()].map(({ runner }) => runner.stop()));
    this.runners.clear();
  }

  status(id: string) {
    const runner = this.runners.get(id)?.runner;
    return runner ? { breaker: runner.breakerView(), stats: runner.stats() } : null;
  }

  async deliveries(id: string, query: DeliveryQuery): Promise<DeliveryRecord[]> {
    const runner = this.runners.get(id)?.runner;
    if (runner) return runner.deliveries(query);
    const stored = query.status === 'pending' ? [] : await this.deps.ledger.list(id, query.status, query.limit);
    return stored.map(({ event: _event, written_at_ms: _at, ...record }) => record);
  }

  async redeliver(id: string, eventId: string): Promise<DeliveryRecord> {
    const runner = this.runners.get(id)?.runner;
    const entry = runner ? await runner.redeliver(eventId) : null;
    if (!entry) {
      throw new SvcError('NOT_FOUND', `webhook ${id} has no dead-lettered event ${eventId}; GET /webhooks/${id}/deliveries?status=dead_lettered lists them`, {
        webhook_id: id,
        event_id: eventId,
      });
    }
    const { event: _event, written_at_ms: _at, ...record } = entry;
    return record;
  }

  /** The lowest log position a webhook still needs; 0 before the runners exist (keep all). */
  lowestNeededLsn(): number | null {
    if (!this.subscription && !this.stopped) return 0;
    let lowest: number | null = null;
    for (const { runner } of this.runners.values()) {
      const lsn = runner.positionLsn();
      // A runner that has not read its position yet needs everything from its webhook's creation.
      const needed = (lsn ?? 1) - 1;
      if (lowest === null || needed < lowest) lowest = needed;
    }
    return lowest;
  }

  metrics(): WebhookMetricRow[] {
    return [...this.runners.values()].map(({ runner }) => ({
      id: runner.definition.id,
      tenant: runner.definition.tenant,
      breakerGauge: runner.breakerGauge(),
      pending: runner.pending,
      filtered: runner.stats().filtered,
    }));
  }

  /** Brings the runners in line with the catalog (one sync at a time; requests meanwhile make one more). */
  private sync(): void {
    this.syncs.request();
  }

  private async syncNow(): Promise<void> {
    if (this.stopped) return;
    const live = new Set<string>();
    for (const object of this.deps.catalog.objects(WEBHOOK_OBJECT)) {
      const def = decodeWebhookDef(object.definition);
      live.add(def.id);
      const current = this.runners.get(def.id);
      const tables = def.table_ids.join(',');
      if (current && current.tables === tables) {
        if (current.updatedLsn !== object.updatedLsn) {
          current.runner.update(def);
          current.updatedLsn = object.updatedLsn;
        }
        continue;
      }
      // New, or its tables changed (another capture): a new runner resumes from the ledger's position.
      if (current) await this.remove(def.id, false);
      this.add(object, def);
    }
    for (const id of [...this.runners.keys()]) if (!live.has(id)) await this.remove(id, true);
  }

  private add(object: CatalogObject, def: WebhookDef): void {
    const capture: CaptureSpec = {
      tenant: def.tenant,
      tableIds: def.table_ids,
      objectKind: WEBHOOK_OBJECT,
      objectName: def.id,
      createdLsn: object.createdLsn,
      createdSequence: object.createdSequence,
      snapshotRows: 0n,
    };
    const runner = new WebhookRunner(def, capture, this.deps);
    this.runners.set(def.id, { runner, updatedLsn: object.updatedLsn, tables: def.table_ids.join(',') });
    runner.start();
    this.deps.logger.info({ webhook: def.id, tenant: def.tenant, tables: def.tables }, 'webhooks: delivering');
  }

  private async remove(id: string, deleted: boolean): Promise<void> {
    const current = this.runners.get(id);
    this.runners.delete(id);
    await current?.runner.stop();
    if (deleted) await this.deps.ledger.forget(id);
  }

  private async sweep(): Promise<void> {
    const before = Date.now() - this.deps.deliveryWindowMs;
    for (const [id, { runner }] of this.runners) {
      // Only entries the saved position is past: a restart never reads them again.
      const below = runner.savedAfterSequence;
      if (below === null) continue;
      await this.deps.ledger
        .sweep(id, before, below)
        .catch((error: unknown) => this.deps.logger.warn({ webhook: id, err: error }, 'webhooks: ledger sweep failed'));
    }
  }
}
