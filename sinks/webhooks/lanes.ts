/**
 * Per-key order with parallel keys: events of one key go through one lane, one at a time, in
 * sequence order; lanes of different keys run in parallel. The watermark is the position below
 * which every event read is done (delivered, dead-lettered or filtered out), so a restart reads
 * again from there and the ledger skips what was done above it.
 */
import type { SourcedEvent } from '../events/change-event.js';
import type { SourcePosition } from '../events/event-source.js';

interface Slot {
  readonly sequence: bigint;
  readonly lsn: number;
  done: boolean;
}

/** Events in read order, and the position after the longest done prefix. */
export class Watermark {
  private readonly slots: Slot[] = [];
  private head = 0;
  private reached: SourcePosition | null = null;

  /** Events read and not done yet (the queue's size, for backpressure and svc_event_queue_size). */
  get pending(): number {
    return this.slots.length - this.head;
  }

  /** Where a restart reads from: after the last event of the done prefix (null: none done yet). */
  get position(): SourcePosition | null {
    return this.reached;
  }

  /** Records reading past events that were all done (quiet tables): the position moves on. */
  progressed(position: SourcePosition): void {
    if (this.pending === 0 && (this.reached === null || position.afterSequence > this.reached.afterSequence)) this.reached = position;
  }

  add(event: SourcedEvent): Slot {
    const slot: Slot = { sequence: event.sequence, lsn: event.lsn, done: false };
    this.slots.push(slot);
    return slot;
  }

  done(slot: Slot): void {
    slot.done = true;
    while (this.head < this.slots.length && this.slots[this.head]!.done) {
      const first = this.slots[this.head]!;
      this.reached = { lsn: first.lsn, afterSequence: first.sequence };
      this.head++;
    }
    // Drop the done prefix now and then, not on every event.
    if (this.head > 1024 && this.head * 2 > this.slots.length) {
      this.slots.splice(0, this.head);
      this.head = 0;
    }
  }
}

/** A counting semaphore: at most `limit` holders. */
export class Semaphore {
  private held = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  get inUse(): number {
    return this.held;
  }

  async acquire(): Promise<void> {
    if (this.held < this.limit) {
      this.held++;
      return;
    }
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    if (next)
      next(); // the permit passes on
    else this.held--;
  }
}

/** The lane of an event: its table and key (events without a key share their table's lane). */
export function laneOf(event: SourcedEvent): string {
  return event.event.key === null ? `${event.event.table}` : `${event.event.table}\u0000${JSON.stringify(event.event.key)}`;
}

/** Runs `work` for each event of a lane in order; lanes run in parallel. */
export class Lanes<T extends { readonly event: SourcedEvent }> {
  private readonly queues = new Map<string, T[]>();
  private running = 0;
  private idle: (() => void) | null = null;

  constructor(
    private readonly work: (item: T) => Promise<void>,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  /** Items queued or running. */
  get size(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.length;
    return n;
  }

  /** Items waiting or running, per lane (for GET deliveries?status=pending). */
  items(): T[] {
    return [...this.queues.values()].flat();
  }

  push(item: T): void {
    const lane = laneOf(item.event);
    const queue = this.queues.get(lane);
    if (queue) {
      queue.push(item);
      return;
    }
    this.queues.set(lane, [item]);
    this.running++;
    void this.drain(lane);
  }

  /** Resolves when every lane is empty. */
  async settled(): Promise<void> {
    while (this.running > 0) await new Promise<void>((resolve) => (this.idle = resolve));
  }

  private async drain(lane: string): Promise<void> {
    const queue = this.queues.get(lane)!;
    try {
      while (queue.length > 0) {
        await this.work(queue[0]!);
        queue.shift();
      }
    } catch (error) {
      // Never an unhandled rejection: the lane's items stay undone (the watermark holds below
      // them, a restart delivers them) and the owner hears of it.
      this.onError(error);
    } finally {
      this.queues.delete(lane);
      this.running--;
      if (this.running === 0) {
        const idle = this.idle;
        this.idle = null;
        idle?.();
      }
    }
  }
}
