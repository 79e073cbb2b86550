/**
 * Kinesis records without the SDK: an event's partition key and bytes, the service's limits, and
 * the plan of PutRecords calls that keeps per-key order when a call is partly refused.
 *
 * PutRecords processes every record of a call on its own: one may be refused (throttled) while a
 * later one of the same shard is written, so two records of one key in one call could land out of
 * order. A call therefore carries at most one record per partition key; the next event of a key
 * waits until the previous one was written, and a refused record is put again before it.
 */
import { createHash } from 'node:crypto';
import { SvcError } from '../../core/errors.js';
import { MIB } from '../../core/units.js';
import type { SourcedEvent } from '../events/change-event.js';
import { messageKey, type EventEncoder } from './destination.js';

/** The service's limits (Kinesis Data Streams quotas); sizes count the data and the partition key. */
export const KINESIS_LIMITS = {
  recordsPerCallMax: 500,
  bytesPerCallMax: 5 * MIB,
  recordBytesMax: 1 * MIB,
  partitionKeyCharsMax: 256,
} as const;

export type KinesisLimits = { readonly [K in keyof typeof KINESIS_LIMITS]: number };

/** One event on its way to the stream. */
export interface PendingRecord {
  readonly event: SourcedEvent;
  readonly partitionKey: string;
  readonly data: Buffer;
  /** Data plus partition key (UTF-8), what the per-record and per-call limits count. */
  readonly bytes: number;
  /** Times the service refused it so far, and the last reason. */
  refusals: number;
  lastRefusal: string | null;
}

/**
 * The partition key of an event: its primary key as JSON, or the table's name for events without
 * a key (TRUNCATE, schema changes, tables without a primary key), so those keep their order too.
 * Kinesis caps a partition key at 256 characters: a longer one is replaced by `sha256:` and the
 * hex SHA-256 of the key (same key, same shard; collisions as unlikely as SHA-256's).
 */
export function partitionKey(event: SourcedEvent, limits: KinesisLimits = KINESIS_LIMITS): string {
  const key = messageKey(event) ?? event.event.table;
  // String length counts UTF-16 units, never fewer than the characters Kinesis counts.
  if (key.length <= limits.partitionKeyCharsMax) return key;
  return `sha256:${createHash('sha256').update(key).digest('hex')}`;
}

/** Encodes an event as a record; an event over the per-record limit fails with LIMIT_EXCEEDED. */
export function toRecord(event: SourcedEvent, encoder: EventEncoder, limits: KinesisLimits = KINESIS_LIMITS): PendingRecord {
  const key = partitionKey(event, limits);
  const data = encoder.encode(event);
  const bytes = data.length + Buffer.byteLength(key);
  if (bytes > limits.recordBytesMax) {
    throw new SvcError(
      'LIMIT_EXCEEDED',
      `change event ${event.sequence} (${event.event.operation} on ${event.event.table}) is ${bytes} bytes as a Kinesis record; a record holds at most ${limits.recordBytesMax} bytes`,
      { limit: 'recordBytesMax', limitValue: limits.recordBytesMax, bytes, sequence: event.sequence.toString(), table: event.event.table },
    );
  }
  return { event, partitionKey: key, data, bytes, refusals: 0, lastRefusal: null };
}

/** The records of one batch still to put, in event order. */
export class PutPlan {
  private pending: PendingRecord[];

  constructor(
    records: readonly PendingRecord[],
    private readonly limits: KinesisLimits = KINESIS_LIMITS,
  ) {
    this.pending = [...records];
  }

  get remaining(): number {
    return this.pending.length;
  }

  /** The next call: the oldest pending record of each partition key, in event order, within the call limits. */
  nextCall(): PendingRecord[] {
    const call: PendingRecord[] = [];
    const keys = new Set<string>();
    let bytes = 0;
    for (const record of this.pending) {
      if (keys.has(record.partitionKey)) continue;
      // A key whose oldest record does not fit waits entirely: its later records must not pass it.
      keys.add(record.partitionKey);
      if (bytes + record.bytes > this.limits.bytesPerCallMax) continue;
      call.push(record);
      bytes += record.bytes;
      if (call.length === this.limits.recordsPerCallMax) break;
    }
    return call;
  }

  /** Removes the written records of a call; the refused ones stay first of their key. */
  settle(call: readonly PendingRecord[], refused: ReadonlySet<PendingRecord>): void {
    const written = new Set(call.filter((r) => !refused.has(r)));
    if (written.size > 0) this.pending = this.pending.filter((r) => !written.has(r));
  }
}
