/**
 * Runs one CDC stream: opens its destination (which says where to resume), pulls change events
 * from the log in batches and delivers each, and keeps the stream's status. An unreachable
 * destination never touches the writers: the stream shows `failing` and retries with capped
 * backoff. A local durable offset (LevelDB) is written after each delivered batch, for resuming
 * when the destination cannot say, and for the status.
 */
import type { CdcStreamDef } from '../../core/cdc-stream.js';
import type { Logger } from '../../core/logger.js';
import type { CdcStreamStatus } from '../../query/index.js';
import type { SourcedEvent } from '../events/change-event.js';
import { changeEvents, startOf, type CaptureSpec, type EventSourceDeps, type SourcePosition } from '../events/event-source.js';

/** A position reached without events (quiet tables) is written at most this often. */
const PROGRESS_SAVE_INTERVAL_MS = 1000;
import type { Destination } from './destination.js';
import { retryDelayMs, transition, type StreamEvent, type StreamState } from './stream-state.js';

export interface RunnerLimits {
  readonly batchEventsMax: number;
  readonly readBatchBytesMax: number;
  readonly retryDelayMsMax: number;
}

/** A stream's local offset: the position after its last delivered event. */
export interface OffsetStore {
  get(streamId: string): Promise<SourcePosition | null>;
  put(streamId: string, position: SourcePosition): Promise<void>;
  delete(streamId: string): Promise<void>;
}

/** A stream's compiled filter (sinks/webhooks/filter.ts through createCdcStreams); true: send. */
export interface StreamFilter {
  test(event: SourcedEvent): Promise<boolean>;
}

export interface RunnerDeps {
  readonly source: EventSourceDeps;
  readonly offsets: OffsetStore;
  readonly headLsn: () => number;
  readonly logger: Logger;
  readonly limits: RunnerLimits;
  /** Told of every delivered batch and filtered event (metrics). */
  readonly onDelivered?: (streamName: string, events: number) => void;
  /** The filter of a stream with WITH (operations/columns/predicate); absent: everything is sent. */
  readonly filterFor?: (def: CdcStreamDef) => Promise<StreamFilter | null>;
}

export class StreamRunner {
  private stateNow: StreamState = 'starting';
  private abort = new AbortController();
  private loop: Promise<void> | null = null;
  private failures = 0;
  private wake: (() => void) | null = null;
  private readonly counts = { delivered: 0, filtered: 0, errors: 0 };
  private last: { sequence: bigint; lsn: number } | null = null;
  private lastError: { message: string; at: string } | null = null;
  /** Where a restart would read from: after the last delivered event, or the last quiet records read. */
  private position: SourcePosition | null = null;
  private positionSavedAtMs = 0;
  /** Events read from the log but not yet delivered (svc_event_queue_size). */
  queued = 0;

  constructor(
    private def: CdcStreamDef,
    private readonly capture: CaptureSpec,
    private readonly destination: Destination,
    private readonly deps: RunnerDeps,
  ) {
    if (def.paused) this.stateNow = 'paused';
  }

  get name(): string {
    return this.def.name;
  }

  get definition(): CdcStreamDef {
    return this.def;
  }

  get state(): StreamState {
    return this.stateNow;
  }

  status(): CdcStreamStatus {
    const lastLsn = this.last?.lsn ?? null;
    return {
      state: this.stateNow,
      lastSequence: this.last ? Number(this.last.sequence) : null,
      lastLsn,
      lagRecords: Math.max(0, this.deps.headLsn() - this.doneLsn()),
      eventsDelivered: this.counts.delivered,
      eventsFiltered: this.counts.filtered,
      deliveryErrors: this.counts.errors,
      lastError: this.lastError?.message ?? null,
      lastErrorAt: this.lastError?.at ?? null,
    };
  }

  /** The last log record whose events were all delivered (about: a batch may end inside a record). */
  private doneLsn(): number {
    return Math.max(this.last?.lsn ?? 0, (this.position?.lsn ?? this.capture.createdLsn + 1) - 1, this.capture.createdLsn);
  }

  /** The last log record this stream no longer needs: it rereads from the record of its position. */
  neededLsn(): number {
    return (this.position?.lsn ?? this.capture.createdLsn) - 1;
  }

  start(): void {
    if (!this.loop) this.loop = this.run();
  }

  /** A new definition of the same stream (PAUSE or RESUME). */
  update(def: CdcStreamDef): void {
    const wasPaused = this.def.paused;
    this.def = def;
    if (def.paused && !wasPaused) {
      this.move('pause');
      this.abort.abort();
    } else if (!def.paused && wasPaused) {
      this.move('resume');
      this.wake?.();
    }
  }

  /** Stops delivering (after the batch in flight) and closes the destination. */
  async stop(): Promise<void> {
    this.move('stop');
    this.abort.abort();
    this.wake?.();
    await this.loop;
    await this.destination.close().catch(() => undefined);
  }

  /** The state now (it changes while a delivery awaits: no narrowing across awaits). */
  private current(): StreamState {
    return this.stateNow;
  }

  /** Stopped or paused (state changes while a delivery awaits). */
  private halted(): boolean {
    const state: StreamState = this.stateNow;
    return state === 'stopped' || state === 'paused';
  }

  private move(event: StreamEvent): void {
    this.stateNow = transition(this.stateNow, event);
  }

  private async run(): Promise<void> {
    while (this.stateNow !== 'stopped') {
      if (this.stateNow === 'paused') {
        // Armed before any await: a RESUME or stop while the destination closes is not missed.
        const woken = this.wakeable(null);
        await this.destination.close().catch(() => undefined);
        if (this.current() === 'paused') await woken;
        this.wake = null;
        continue;
      }
      this.abort = new AbortController();
      try {
        await this.deliverFromResumePoint(this.abort.signal);
      } catch (error) {
        if (this.halted()) continue;
        // Ends the read that was prefetching for this attempt (it may be waiting for the log's head).
        this.abort.abort();
        await this.fail(error);
      }
    }
  }

  /** A promise resolved by wake() (or after `ms`); wake is set at once, before the caller awaits anything. */
  private wakeable(ms: number | null): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = ms === null ? null : setTimeout(resolve, ms);
      this.wake = () => {
        if (timer) clearTimeout(timer);
        resolve();
      };
    });
  }

  private async deliverFromResumePoint(signal: AbortSignal): Promise<void> {
    const resume = await this.destination.open(signal);
    const local = await this.deps.offsets.get(this.def.id);
    this.position ??= local;
    // The later of the two: the local position is written only after the destination acknowledged
    // (or for records with nothing to deliver), the destination's read-back covers a crash before it.
    const candidates = [resume?.position, local].filter((p): p is SourcePosition => p !== null && p !== undefined);
    const position = candidates.sort((x, y) => (x.afterSequence > y.afterSequence ? -1 : 1))[0] ?? startOf(this.capture);
    const delivered = resume?.delivered ?? (() => false);
    const filter = (await this.deps.filterFor?.(this.def)) ?? null;
    if (signal.aborted) return;
    this.move('opened');
    this.deps.logger.info({ stream: this.def.name, lsn: position.lsn, afterSequence: position.afterSequence.toString() }, 'cdc: stream delivering');
    // Progress the source reports while a batch is in delivery holds until that batch is delivered.
    let delivering = false;
    let held: SourcePosition | null = null;
    const options = {
      batchEventsMax: this.deps.limits.batchEventsMax,
      batchBytesMax: this.deps.limits.readBatchBytesMax,
      signal,
      onProgress: (p: SourcePosition) => {
        if (delivering) held = p;
        else this.progressed(p);
      },
    };
    const events = changeEvents(this.deps.source, this.capture, position, options);
    let next = events.next();
    try {
      for (;;) {
        const step = await next;
        if (step.done) return;
        const batch = step.value;
        delivering = true;
        // The next batch is read and built while this one's transaction runs.
        next = events.next();
        next.catch(() => undefined);
        const fresh = await this.sendable(
          batch.filter((e) => !delivered(e)),
          filter,
        );
        this.queued = fresh.length;
        const snapshot = fresh.some((e) => e.event.operation === 'SNAPSHOT');
        if (snapshot) this.move('snapshot');
        if (fresh.length > 0) await this.destination.deliver(fresh, signal);
        this.queued = 0;
        if (!snapshot && this.stateNow === 'snapshotting') this.move('caught_snapshot');
        this.delivered(batch, fresh.length);
        await this.savePosition({ lsn: this.last!.lsn, afterSequence: this.last!.sequence });
        delivering = false;
        if (held) {
          this.progressed(held);
          held = null;
        }
        if (signal.aborted) return;
      }
    } finally {
      // A read in flight ends with the signal (stop, pause) or with the error that got us here.
      void events.return(undefined).catch(() => undefined);
    }
  }

  /** The events the stream's filter lets through; the others count as filtered. */
  private async sendable(events: SourcedEvent[], filter: StreamFilter | null): Promise<SourcedEvent[]> {
    if (!filter) return events;
    const out: SourcedEvent[] = [];
    for (const event of events) {
      if (await filter.test(event)) out.push(event);
      else this.counts.filtered++;
    }
    return out;
  }

  private delivered(batch: readonly SourcedEvent[], count: number): void {
    const lastEvent = batch[batch.length - 1]!;
    this.last = { sequence: lastEvent.sequence, lsn: lastEvent.lsn };
    this.counts.delivered += count;
    this.failures = 0;
    this.deps.onDelivered?.(this.def.name, count);
  }

  /** Records read with nothing (more) to deliver: the position moves on (written at most once a second). */
  private progressed(position: SourcePosition): void {
    if (this.position && position.afterSequence <= this.position.afterSequence) return;
    this.position = position;
    const now = Date.now();
    if (now - this.positionSavedAtMs < PROGRESS_SAVE_INTERVAL_MS) return;
    this.positionSavedAtMs = now;
    void this.deps.offsets.put(this.def.id, position).catch((error: unknown) => {
      this.deps.logger.warn({ stream: this.def.name, err: error }, 'cdc: saving the stream position failed');
    });
  }

  private async savePosition(position: SourcePosition): Promise<void> {
    this.position = position;
    this.positionSavedAtMs = Date.now();
    await this.deps.offsets.put(this.def.id, position);
  }

  private async fail(error: unknown): Promise<void> {
    this.failures++;
    this.counts.errors++;
    const message = error instanceof Error ? error.message : String(error);
    this.lastError = { message, at: new Date().toISOString() };
    this.move('error');
    const delayMs = retryDelayMs(this.failures, this.deps.limits.retryDelayMsMax);
    this.deps.logger.warn({ stream: this.def.name, err: error, failures: this.failures, retryInMs: delayMs }, 'cdc: delivery failed; retrying');
    const woken = this.wakeable(delayMs);
    await this.destination.close().catch(() => undefined);
    if (!this.halted()) await woken;
    this.wake = null;
    this.move('retry');
  }
}
