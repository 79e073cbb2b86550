/**
 * The delivery ledger: per webhook, a durable record of each event that reached an end
 * (delivered, or dead-lettered with its attempts and errors), keyed by (webhook id, event id),
 * and the webhook's position in the log. Sink state in the store (kept across `svcdb replay`).
 *
 *   wh/<webhook id>/e/<event id>  -> JSON LedgerEntry     (written before the event counts as done)
 *   wh/<webhook id>/pos           -> JSON {lsn, afterSequence}
 *
 * A delivery checks the ledger first, so an event whose success was recorded is never sent
 * again; entries older than the delivery window are swept (the position is past them by then).
 */
import { keys, type KvOp, type StateStore } from '../../projections/index.js';
import type { ChangeEvent } from '../events/change-event.js';
import type { SourcePosition } from '../events/event-source.js';
import type { DeliveryRecord, DeliveryStatus } from '../../core/webhook-api.js';

/** A ledger entry: the delivery record, and for a dead letter the event itself (to redeliver it). */
export interface LedgerEntry extends DeliveryRecord {
  readonly event?: ChangeEvent;
  /** When the entry was written (ms): the sweep's clock. */
  readonly written_at_ms: number;
}

const prefix = (webhookId: string): string => `wh/${webhookId}/`;
const entryKey = (webhookId: string, eventId: string): Uint8Array => keys.sinkStateKey(`${prefix(webhookId)}e/${eventId}`);
const positionKey = (webhookId: string): Uint8Array => keys.sinkStateKey(`${prefix(webhookId)}pos`);
const encode = (value: unknown): Uint8Array => Buffer.from(JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
const decode = <T>(bytes: Uint8Array): T => JSON.parse(Buffer.from(bytes).toString('utf8')) as T;

/** Upper bound of keys starting with `start` (the next byte value after the common prefix). */
function rangeOf(start: Uint8Array): { gte: Uint8Array; lt: Uint8Array } {
  const lt = Uint8Array.from(start);
  lt[lt.length - 1] = lt[lt.length - 1]! + 1;
  return { gte: start, lt };
}

export class DeliveryLedger {
  constructor(private readonly store: StateStore) {}

  async get(webhookId: string, eventId: string): Promise<LedgerEntry | null> {
    const bytes = await this.store.get(entryKey(webhookId, eventId));
    return bytes ? decode<LedgerEntry>(bytes) : null;
  }

  /**
   * Written before it resolves. Puts made in the same turn of the event loop go out as one LevelDB
   * batch (one native call for many deliveries); each caller still waits for its own entry.
   */
  put(webhookId: string, entry: LedgerEntry): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queued.push({ op: { type: 'put', key: entryKey(webhookId, entry.event_id), value: encode(entry) }, resolve, reject });
      if (this.queued.length === 1) setImmediate(() => void this.flush());
    });
  }

  private queued: { op: KvOp; resolve: () => void; reject: (error: unknown) => void }[] = [];

  private async flush(): Promise<void> {
    const batch = this.queued;
    this.queued = [];
    try {
      await this.store.write(batch.map((q) => q.op));
      for (const q of batch) q.resolve();
    } catch (error) {
      for (const q of batch) q.reject(error);
    }
  }

  /** Entries of a webhook in event-id order (ULIDs sort by commit time), optionally of one status. */
  async list(webhookId: string, status: DeliveryStatus | undefined, limit: number): Promise<LedgerEntry[]> {
    const out: LedgerEntry[] = [];
    for await (const batch of this.store.entries({ ...rangeOf(keys.sinkStateKey(`${prefix(webhookId)}e/`)), batchSize: 256 })) {
      for (const [, value] of batch) {
        const entry = decode<LedgerEntry>(value);
        if (status !== undefined && entry.status !== status) continue;
        out.push(entry);
        if (out.length >= limit) return out;
      }
    }
    return out;
  }

  async position(webhookId: string): Promise<SourcePosition | null> {
    const bytes = await this.store.get(positionKey(webhookId));
    if (!bytes) return null;
    const raw = decode<{ lsn: number; afterSequence: string }>(bytes);
    return { lsn: raw.lsn, afterSequence: BigInt(raw.afterSequence) };
  }

  async savePosition(webhookId: string, position: SourcePosition): Promise<void> {
    await this.store.write([
      { type: 'put', key: positionKey(webhookId), value: encode({ lsn: position.lsn, afterSequence: position.afterSequence.toString() }) },
    ]);
  }

  /**
   * Deletes delivered entries written before `beforeMs` whose sequence is at or below
   * `atOrBelowSequence` (the saved position: a restart never reads them again). Dead letters stay
   * until redelivered or the webhook goes.
   */
  async sweep(webhookId: string, beforeMs: number, atOrBelowSequence: bigint): Promise<number> {
    let deleted = 0;
    for await (const batch of this.store.entries({ ...rangeOf(keys.sinkStateKey(`${prefix(webhookId)}e/`)), batchSize: 1024 })) {
      const doomed = batch.filter(([, value]) => {
        const entry = decode<LedgerEntry>(value);
        return entry.status === 'delivered' && entry.written_at_ms < beforeMs && BigInt(entry.sequence) <= atOrBelowSequence;
      });
      if (doomed.length > 0) await this.store.write(doomed.map(([key]) => ({ type: 'del' as const, key })));
      deleted += doomed.length;
    }
    return deleted;
  }

  /** Forgets everything of a deleted webhook. */
  async forget(webhookId: string): Promise<void> {
    for await (const batch of this.store.entries({ ...rangeOf(keys.sinkStateKey(prefix(webhookId))), batchSize: 1024 })) {
      await this.store.write(batch.map(([key]) => ({ type: 'del' as const, key })));
    }
  }
}
