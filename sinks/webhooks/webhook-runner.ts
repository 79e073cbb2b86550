/**
 * Delivers one webhook's events: reads the change events of its tables from its position, drops
 * what its filter refuses, and posts each event to the receiver in per-key lanes (lanes.ts): with
 * the retry schedule, behind the endpoint's circuit breaker, recording each end in the ledger
 * before it counts as done. A 410 Gone disables the webhook; an open breaker holds events back
 * (nothing is lost); a transform or filter failure dead-letters that one event.
 */
import type { WebhookDef } from '../../core/webhook.js';
import type { Logger } from '../../core/logger.js';
import type { SourcedEvent } from '../events/change-event.js';
import { changeEvents, startOf, type CaptureSpec, type EventSourceDeps } from '../events/event-source.js';
import { CircuitBreaker, type BreakerPermit } from './circuit-breaker.js';
import type { EndpointClient } from './http-client.js';
import { Lanes, type Semaphore } from './lanes.js';
import { DeliveryPosition, type PositionSlot } from './delivery-position.js';
import type { EventFilter } from './filter.js';
import { Sleeper } from './sleeper.js';
import { endpointClient, redeliverDeadLetter } from './redelivery.js';
import type { DeliveryLedger, LedgerEntry } from './ledger.js';
import { afterFailure, attemptTimeoutMs } from './retry.js';
import { deliveryHeaders } from './signature.js';
import { compileTransform, type CompiledTransform } from './transform.js';
import type { BreakerView, DeliveryQuery, DeliveryRecord, WebhookView } from '../../core/webhook-api.js';

export interface WebhookRunnerLimits {
  readonly batchEventsMax: number;
  readonly readBatchBytesMax: number;
  /** Events read and not yet done, per webhook: reading waits above it. */
  readonly pendingEventsMax: number;
  readonly connectionsPerEndpointMax: number;
  readonly connectTimeoutMs: number;
  readonly allowedCidrs: readonly string[];
  readonly positionSaveIntervalMs: number;
}

/** What a delivery attempt tells the metrics. */
export type DeliveryOutcome = 'success' | 'failure' | 'gone' | 'dead_lettered';

export interface WebhookRunnerDeps {
  /** Requests in flight over all webhooks (webhookRequestsInFlightMax), shared by every runner. */
  readonly semaphore: Semaphore;
  readonly source: EventSourceDeps;
  readonly ledger: DeliveryLedger;
  readonly logger: Logger;
  readonly limits: WebhookRunnerLimits;
  readonly filterFor: (def: WebhookDef) => Promise<EventFilter>;
  /** The receiver answered 410 Gone: disable the webhook (through the log). */
  readonly onGone: (def: WebhookDef, reason: string) => Promise<void>;
  readonly onAttempt?: (webhookId: string, outcome: DeliveryOutcome, durationMs: number) => void;
  readonly onRetry?: (webhookId: string) => void;
  readonly now?: () => number;
}

interface Item {
  readonly event: SourcedEvent;
  readonly slot: PositionSlot;
}

export class WebhookRunner {
  private breaker: CircuitBreaker;
  private abort = new AbortController();
  private loop: Promise<void> | null = null;
  private stopped = false;
  /** Waits that a stop or a new definition ends. */
  private readonly sleeper = new Sleeper();
  /** A 410 was reported for the current definition (disabling is under way). */
  private gone = false;
  private readonly counts = { delivered: 0, failedAttempts: 0, deadLettered: 0, filtered: 0 };
  private failures = 0;
  private lastError: { message: string; at: string } | null = null;
  /** The events read and not yet done, and the position a restart reads from. */
  private readonly position: DeliveryPosition;
  /** Event ids being redelivered on request (two requests for one event send it once). */
  private readonly redelivering = new Set<string>();
  private lastSequence: bigint | null = null;
  private client: EndpointClient | null = null;
  private transform: CompiledTransform | null = null;
  private readonly now: () => number;

  constructor(
    private def: WebhookDef,
    private readonly capture: CaptureSpec,
    private readonly deps: WebhookRunnerDeps,
  ) {
    this.breaker = new CircuitBreaker(def.circuit_breaker);
    this.now = deps.now ?? Date.now;
    this.position = new DeliveryPosition({
      webhookId: () => this.def.id,
      ledger: deps.ledger,
      logger: deps.logger,
      saveIntervalMs: deps.limits.positionSaveIntervalMs,
      now: this.now,
    });
  }

  get definition(): WebhookDef {
    return this.def;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** A new definition (PATCH, a 410 that disabled it): the delivery loop restarts with it. */
  update(def: WebhookDef): void {
    if (JSON.stringify(def.circuit_breaker) !== JSON.stringify(this.def.circuit_breaker)) this.breaker = new CircuitBreaker(def.circuit_breaker);
    this.def = def;
    this.gone = false;
    this.abort.abort();
    this.sleeper.wakeAll();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    this.sleeper.close();
    await this.loop;
    this.position.stop();
  }

  breakerView(): BreakerView {
    const { state, failure_count, opened_at } = this.breaker.status(this.now());
    return { state, failure_count, opened_at };
  }

  breakerGauge(): number {
    return this.breaker.status(this.now()).gauge;
  }

  stats(): WebhookView['stats'] {
    return {
      delivered: this.counts.delivered,
      failed_attempts: this.counts.failedAttempts,
      dead_lettered: this.counts.deadLettered,
      filtered: this.counts.filtered,
      pending: this.position.pending,
      last_sequence: this.lastSequence === null ? null : Number(this.lastSequence),
      last_error: this.lastError,
    };
  }

  get pending(): number {
    return this.position.pending;
  }

  async deliveries(query: DeliveryQuery): Promise<DeliveryRecord[]> {
    const stored = query.status === 'pending' ? [] : await this.deps.ledger.list(this.def.id, query.status, query.limit);
    const records: DeliveryRecord[] = stored.map(({ event: _event, written_at_ms: _at, ...record }) => record);
    if (query.status === undefined || query.status === 'pending') records.push(...this.pendingRecords(query.limit - records.length));
    return records.slice(0, query.limit);
  }

  /** Sends a dead letter again, now (redelivery.ts); the ledger says how it went. */
  async redeliver(eventId: string): Promise<LedgerEntry | null> {
    if (this.redelivering.has(eventId)) return null;
    this.redelivering.add(eventId);
    try {
      const { ledger, limits, onAttempt } = this.deps;
      const deps = { def: this.def, ledger, limits, client: () => this.client, transform: () => this.transform, onAttempt, now: this.now };
      const next = await redeliverDeadLetter(deps, eventId);
      if (next?.status === 'delivered') {
        this.counts.delivered++;
        this.counts.deadLettered = Math.max(0, this.counts.deadLettered - 1);
      }
      return next;
    } finally {
      this.redelivering.delete(eventId);
    }
  }

  private pendingRecords(limit: number): DeliveryRecord[] {
    if (limit <= 0 || !this.lanes) return [];
    return this.lanes
      .items()
      .slice(0, limit)
      .map(({ event }) => ({
        event_id: event.event.event_id,
        sequence: event.event.sequence,
        status: 'pending' as const,
        attempts: 0,
        errors: [],
        last_status: null,
        updated_at: new Date(this.now()).toISOString(),
      }));
  }

  private lanes: Lanes<Item> | null = null;

  private async run(): Promise<void> {
    while (!this.stopped) {
      if (!this.def.enabled) {
        await this.sleeper.sleep(null);
        continue;
      }
      this.abort = new AbortController();
      try {
        await this.deliverFromPosition(this.abort.signal);
      } catch (error) {
        if (this.stopped || this.abort.signal.aborted) continue;
        this.failures++;
        this.lastError = { message: (error as Error).message, at: new Date(this.now()).toISOString() };
        const delayMs = Math.min(60_000, 1000 * 2 ** Math.min(this.failures - 1, 6));
        this.deps.logger.warn({ webhook: this.def.id, err: error, retryInMs: delayMs }, 'webhook: cannot deliver (filter, transform or log); retrying');
        await this.sleeper.sleep(delayMs);
      }
    }
    await this.closeClient();
  }

  /** Why the loop last failed (a filter that no longer compiles, a log read), shown by GET. */
  lastFailure(): { readonly message: string; readonly at: string } | null {
    return this.lastError;
  }

  /** Where a restart would read from (the last saved or reached position); null before any. */
  positionLsn(): number | null {
    return this.position.lsn;
  }

  private async deliverFromPosition(signal: AbortSignal): Promise<void> {
    const filter = await this.deps.filterFor(this.def);
    this.transform = compileTransform(this.def.transform);
    await this.closeClient();
    this.client = this.newClient();
    const position = (await this.deps.ledger.position(this.def.id)) ?? startOf(this.capture);
    this.position.restart(position);
    const semaphore = this.deps.semaphore;
    const lanes = new Lanes<Item>(
      (item) => this.deliverOne(item, semaphore, signal),
      (error) => {
        this.lastError = { message: (error as Error).message, at: new Date(this.now()).toISOString() };
        this.deps.logger.error(
          { webhook: this.def.id, err: error },
          'webhook: a delivery lane failed; its events are delivered again after a restart of the loop',
        );
        this.abort.abort();
      },
    );
    this.lanes = lanes;
    const options = {
      batchEventsMax: this.deps.limits.batchEventsMax,
      batchBytesMax: this.deps.limits.readBatchBytesMax,
      signal,
      onProgress: (p: typeof position) => this.position.progressed(p),
    };
    try {
      for await (const batch of changeEvents(this.deps.source, this.capture, position, options)) {
        for (const event of batch) {
          const slot = this.position.add(event);
          this.lastSequence = event.sequence;
          if (!(await this.passes(filter, event, slot))) continue;
          // A TRUNCATE or SCHEMA_CHANGE (no key) goes after every earlier event and before every later one.
          const barrier = event.event.key === null;
          if (barrier) await lanes.settled();
          lanes.push({ event, slot });
          if (barrier) await lanes.settled();
        }
        this.failures = 0;
        while (this.position.pending >= this.deps.limits.pendingEventsMax && !signal.aborted) await this.sleeper.sleep(5);
        await this.position.save(false);
      }
    } finally {
      await lanes.settled();
      await this.position.save(true);
    }
  }

  /** The filter's verdict; an event it cannot judge is dead-lettered with the error (once: the ledger first). */
  private async passes(filter: EventFilter, event: SourcedEvent, slot: Item['slot']): Promise<boolean> {
    try {
      if (await this.deps.ledger.get(this.def.id, event.event.event_id)) {
        this.position.done(slot);
        return false;
      }
      if (await filter.test(event)) return true;
      this.counts.filtered++;
      this.position.done(slot);
      return false;
    } catch (error) {
      await this.deadLetter(event, 0, [{ at: new Date(this.now()).toISOString(), status: null, error: `filter: ${(error as Error).message}` }], null);
      this.position.done(slot);
      return false;
    }
  }

  /** The position saved in the ledger (what a restart reads from; the sweep keeps entries above it). */
  get savedAfterSequence(): bigint | null {
    return this.position.savedAfterSequence;
  }

  /** One event to its end: delivered, dead-lettered, or left undone because the loop stops. */
  private async deliverOne(item: Item, semaphore: Semaphore, signal: AbortSignal): Promise<void> {
    const { event } = item;
    if (signal.aborted) return;
    // The ledger was checked when the event was read (passes()): an event already done never gets here.
    let body: Buffer;
    let contentType: string;
    try {
      ({ body, contentType } = await this.transform!.render(event.event));
    } catch (error) {
      await this.deadLetter(event, 0, [{ at: new Date(this.now()).toISOString(), status: null, error: `transform: ${(error as Error).message}` }], null);
      this.position.done(item.slot);
      return;
    }
    const errors: { at: string; status: number | null; error: string }[] = [];
    for (let attempts = 0; !signal.aborted;) {
      const permit = this.breaker.tryAcquire(this.now());
      if (!permit) {
        await this.sleeper.sleep(Math.max(10, (this.breaker.nextTrialAtMs() ?? this.now() + 100) - this.now()), signal);
        continue;
      }
      const result = await this.attempt(semaphore, permit, event.event.event_id, body, contentType);
      attempts++;
      if (result.outcome === 'success') {
        await this.record(event, 'delivered', attempts, errors, result.status);
        this.counts.delivered++;
        this.position.done(item.slot);
        return;
      }
      if (result.outcome === 'gone') {
        // The lane stops here (later events of this key must not overtake this one) until the loop restarts.
        if (this.gone) return this.sleeper.sleep(null, signal);
        this.gone = true;
        this.deps.logger.warn({ webhook: this.def.id, url: this.def.url }, 'webhook: the receiver answered 410 Gone; disabling the webhook');
        await this.deps.onGone(this.def, `the receiver answered 410 Gone at ${new Date(this.now()).toISOString()}`);
        return this.sleeper.sleep(null, signal);
      }
      this.counts.failedAttempts++;
      errors.push({ at: new Date(this.now()).toISOString(), status: result.status, error: result.error ?? 'failed' });
      const decision = afterFailure(this.def.retry, attempts);
      if (decision.kind === 'dead_letter') {
        await this.deadLetter(event, attempts, errors, result.status);
        this.position.done(item.slot);
        return;
      }
      this.deps.onRetry?.(this.def.id);
      await this.sleeper.sleep(decision.delayMs, signal);
    }
  }

  private async attempt(semaphore: Semaphore, permit: BreakerPermit, eventId: string, body: Buffer, contentType: string) {
    await semaphore.acquire();
    try {
      const result = await this.client!.post(body, this.headers(eventId, body, contentType), attemptTimeoutMs(this.def.retry));
      if (result.outcome === 'retryable') this.breaker.onFailure(permit, this.now());
      else this.breaker.onSuccess(permit, this.now());
      this.deps.onAttempt?.(this.def.id, result.outcome === 'retryable' ? 'failure' : result.outcome, result.durationMs);
      return result;
    } finally {
      semaphore.release();
    }
  }

  private headers(eventId: string, body: Buffer, contentType: string): Record<string, string> {
    return deliveryHeaders({ secret: this.def.secret, body, eventId, contentType, sentAtMs: this.now() });
  }

  private async deadLetter(event: SourcedEvent, attempts: number, errors: LedgerEntry['errors'], status: number | null): Promise<void> {
    await this.record(event, 'dead_lettered', attempts, errors, status);
    this.counts.deadLettered++;
    this.deps.onAttempt?.(this.def.id, 'dead_lettered', 0);
  }

  private async record(
    event: SourcedEvent,
    status: 'delivered' | 'dead_lettered',
    attempts: number,
    errors: LedgerEntry['errors'],
    lastStatus: number | null,
  ): Promise<void> {
    const now = this.now();
    await this.deps.ledger.put(this.def.id, {
      event_id: event.event.event_id,
      sequence: event.event.sequence,
      status,
      attempts,
      errors,
      last_status: lastStatus,
      updated_at: new Date(now).toISOString(),
      written_at_ms: now,
      ...(status === 'dead_lettered' ? { event: event.event } : {}),
    });
  }

  private newClient(): EndpointClient {
    return endpointClient(this.def, this.deps.limits);
  }

  private async closeClient(): Promise<void> {
    const client = this.client;
    this.client = null;
    await client?.close().catch(() => undefined);
  }
}
