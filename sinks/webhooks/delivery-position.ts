/**
 * Where a webhook's delivery stands and where a restart reads from: the events read and not yet done
 * (lanes.ts's Watermark, in read order), and the position saved in the ledger. The position moves only
 * past a done prefix, so nothing after it is skipped by a restart; it is saved at the end of each read
 * batch at most every positionSaveIntervalMs, soon after an event is done (debounced), and when the loop stops.
 */
import type { Logger } from '../../core/logger.js';
import type { SourcedEvent } from '../events/change-event.js';
import type { SourcePosition } from '../events/event-source.js';
import type { DeliveryLedger } from './ledger.js';
import { Watermark } from './lanes.js';

export type PositionSlot = ReturnType<Watermark['add']>;

export interface DeliveryPositionDeps {
  readonly webhookId: () => string;
  readonly ledger: DeliveryLedger;
  readonly logger: Logger;
  readonly saveIntervalMs: number;
  readonly now: () => number;
}

export class DeliveryPosition {
  private watermark = new Watermark();
  private saved: SourcePosition | null = null;
  private savedAtMs = 0;
  private saveTimer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: DeliveryPositionDeps) {}

  /** A new delivery loop reads from `saved` (the ledger's position, or the capture's start): nothing is pending. */
  restart(saved: SourcePosition): void {
    this.saved = saved;
    this.watermark = new Watermark();
  }

  /** Events read and not yet done. */
  get pending(): number {
    return this.watermark.pending;
  }

  /** Where a restart would read from (the last saved or reached position); null before any. */
  get lsn(): number | null {
    return (this.watermark.position ?? this.saved)?.lsn ?? null;
  }

  /** The position saved in the ledger (what a restart reads from; the sweep keeps entries above it). */
  get savedAfterSequence(): bigint | null {
    return this.saved?.afterSequence ?? null;
  }

  /** An event was read: it is pending until done(). */
  add(event: SourcedEvent): PositionSlot {
    return this.watermark.add(event);
  }

  /** Reading went past events that were all done (quiet tables). */
  progressed(position: SourcePosition): void {
    this.watermark.progressed(position);
  }

  /** An event is done (delivered, dead-lettered, filtered out, already in the ledger): the position is saved soon. */
  done(slot: PositionSlot): void {
    this.watermark.done(slot);
    if (this.saveTimer) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = null;
      void this.save(true).catch((error: unknown) =>
        this.deps.logger.warn({ webhook: this.deps.webhookId(), err: error }, 'webhook: saving the position failed'),
      );
    }, this.deps.saveIntervalMs);
    this.saveTimer.unref();
  }

  /** Saves the reached position if it moved (unless `force`, at most every saveIntervalMs). */
  async save(force: boolean): Promise<void> {
    const position = this.watermark.position;
    if (!position || (!force && this.deps.now() - this.savedAtMs < this.deps.saveIntervalMs)) return;
    if (this.saved && position.afterSequence <= this.saved.afterSequence) return;
    this.savedAtMs = this.deps.now();
    this.saved = position;
    await this.deps.ledger.savePosition(this.deps.webhookId(), position);
  }

  /** The runner stopped: no save is left scheduled. */
  stop(): void {
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = null;
  }
}
