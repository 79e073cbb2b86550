/**
 * The Kafka destination (kafkajs, the one file that imports it). Exactly once: every batch is one
 * Kafka transaction of a producer whose transactional id belongs to the stream, so a restart
 * fences the previous incarnation and aborts what it left open; then the stream reads back the
 * newest messages of each partition (read_committed) to learn what the topic already holds.
 *
 * Each message carries in its headers the event's sequence and the first sequence and LSN of the
 * transaction it was sent in. The resume point is the start of the newest transaction seen, and
 * an event is skipped when its partition already holds its sequence. That holds on a broker that
 * hides aborted transactions (resend them) and on one that shows them (they count as delivered:
 * the readers see them too), so readers see every event once.
 */
import kafkajs from 'kafkajs';
import type { Admin, Consumer, Kafka, Message, PartitionMetadata, Producer, SASLOptions } from 'kafkajs';
import type { ConnectionOptions } from 'node:tls';
import { assert, SvcError } from '../../core/errors.js';
import { newUlid } from '../../core/ids.js';
import type { Logger } from '../../core/logger.js';
import type { SourcedEvent } from '../events/change-event.js';
import { messageKey, type Destination, type EventEncoder, type ResumePoint } from './destination.js';

const { Kafka: KafkaClient, Partitioners, logLevel, CompressionTypes } = kafkajs;

/** Connection settings for the brokers (SVC_KAFKA_*). */
export interface KafkaClientSettings {
  readonly ssl: boolean;
  readonly sslCaFile?: string | undefined;
  readonly sasl?: { readonly mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; readonly username: string; readonly password: string } | undefined;
  readonly connectionTimeoutMs: number;
  readonly requestTimeoutMs: number;
  /** Longest the read-back of a topic may take before the open fails (and is retried). */
  readonly readBackTimeoutMs: number;
  /** Transactions of a producer that disappears are aborted by the broker after this long. */
  readonly transactionTimeoutMs: number;
}

export const HEADER = {
  eventId: 'svc-event-id',
  operation: 'svc-operation',
  sequence: 'svc-sequence',
  lsn: 'svc-lsn',
  stream: 'svc-stream-id',
  batchSequence: 'svc-batch-sequence',
  batchLsn: 'svc-batch-lsn',
  contentType: 'content-type',
} as const;

/** Messages read back per partition (newest first) before widening once to READ_BACK_WINDOW_WIDE. */
const READ_BACK_WINDOW = 1000;
const READ_BACK_WINDOW_WIDE = 20_000;
/** Bytes of messages per send (the broker's default message.max.bytes is about 1 MiB per record batch). */
const SEND_BYTES_MAX = 512 * 1024;
/** Largest single message: the broker's default message.max.bytes, less room for the batch header. */
const MESSAGE_BYTES_MAX = 1024 * 1024 - 1024;

function messageBytes(m: Message): number {
  let bytes = (m.value as Buffer | null)?.length ?? 0;
  bytes += typeof m.key === 'string' ? Buffer.byteLength(m.key) : 0;
  for (const [k, v] of Object.entries(m.headers ?? {})) bytes += k.length + (typeof v === 'string' ? Buffer.byteLength(v) : 0);
  return bytes;
}

/** Messages in runs of at most `bytesMax` (a bigger single message fails: it could never be sent). */
function chunksOf(messages: readonly Message[], bytesMax: number): Message[][] {
  const out: Message[][] = [];
  let current: Message[] = [];
  let bytes = 0;
  for (const m of messages) {
    const size = messageBytes(m);
    if (size > MESSAGE_BYTES_MAX) {
      throw new SvcError(
        'LIMIT_EXCEEDED',
        `a change event of ${size} bytes is larger than a Kafka message may be (${MESSAGE_BYTES_MAX}); shrink the row or drop the stream`,
        { bytes: size },
      );
    }
    if (current.length > 0 && bytes + size > bytesMax) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(m);
    bytes += size;
  }
  if (current.length > 0) out.push(current);
  return out;
}

interface StreamIdentity {
  readonly id: string;
  readonly name: string;
  readonly brokers: string;
  readonly topic: string;
}

export class KafkaDestination implements Destination {
  private readonly kafka: Kafka;
  private producer: Producer | null = null;
  private partitions: PartitionMetadata[] = [];
  private readonly partitioner = Partitioners.DefaultPartitioner();

  constructor(
    private readonly stream: StreamIdentity,
    private readonly encoder: EventEncoder,
    private readonly settings: KafkaClientSettings,
    private readonly logger: Logger,
    tls?: ConnectionOptions,
  ) {
    this.kafka = new KafkaClient({
      clientId: `svcdb-${stream.name}`,
      brokers: stream.brokers.split(',').map((b) => b.trim()),
      ssl: settings.ssl ? (tls ?? true) : false,
      ...(settings.sasl ? { sasl: settings.sasl as SASLOptions } : {}),
      connectionTimeout: settings.connectionTimeoutMs,
      requestTimeout: settings.requestTimeoutMs,
      logLevel: logLevel.NOTHING,
      // The runner owns retries (with its own capped backoff and status); kafkajs retries a little.
      retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 1000 },
    });
  }

  async open(signal: AbortSignal): Promise<ResumePoint | null> {
    await this.closeProducer();
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      await this.ensureTopic(admin);
      const producer = this.kafka.producer({
        transactionalId: `svcdb-cdc-${this.stream.id}`,
        idempotent: true,
        maxInFlightRequests: 1,
        transactionTimeout: this.settings.transactionTimeoutMs,
        createPartitioner: Partitioners.DefaultPartitioner,
      });
      await producer.connect();
      this.producer = producer;
      // kafkajs sends InitProducerId with the transactional id at the first transaction, not at
      // connect: begin and abort an empty one now, so an older producer of this stream is fenced
      // and its open transaction aborted before the read-back (nothing of it can commit after).
      await (await producer.transaction()).abort();
      this.partitions = await this.partitionMetadata(admin);
      if (signal.aborted) return null;
      return await this.readBack(admin);
    } finally {
      await admin.disconnect();
    }
  }

  async deliver(events: readonly SourcedEvent[], signal: AbortSignal): Promise<void> {
    const producer = this.producer;
    assert(producer, 'deliver before open');
    signal.throwIfAborted();
    if (events.length === 0) return;
    const first = events[0]!;
    const batchHeaders = { [HEADER.batchSequence]: first.sequence.toString(), [HEADER.batchLsn]: String(first.lsn) };
    const messages: Message[] = events.map((e) => this.message(e, batchHeaders));
    const transaction = await producer.transaction();
    try {
      // Several sends of one transaction: a record batch stays below the broker's message.max.bytes.
      for (const chunk of chunksOf(messages, SEND_BYTES_MAX)) {
        await transaction.send({ topic: this.stream.topic, messages: chunk, compression: CompressionTypes.None });
      }
      await transaction.commit();
    } catch (error) {
      await transaction.abort().catch(() => undefined);
      throw error;
    }
  }

  async close(): Promise<void> {
    await this.closeProducer();
  }

  /**
   * The partition an event goes to: the default partitioner's choice for its key, and partition 0
   * for events without one (TRUNCATE, SCHEMA_CHANGE, tables without a primary key), so they keep
   * their order and a restart knows where each went.
   */
  partitionOf(event: SourcedEvent): number {
    const key = messageKey(event);
    if (key === null) return this.partitions[0]?.partitionId ?? 0;
    return this.partitioner({ topic: this.stream.topic, partitionMetadata: this.partitions, message: { key, value: null } });
  }

  private message(event: SourcedEvent, batchHeaders: Record<string, string>): Message {
    return {
      key: messageKey(event),
      value: this.encoder.encode(event),
      partition: this.partitionOf(event),
      headers: {
        [HEADER.eventId]: event.event.event_id,
        [HEADER.operation]: event.event.operation,
        [HEADER.sequence]: event.sequence.toString(),
        [HEADER.lsn]: String(event.lsn),
        [HEADER.stream]: this.stream.id,
        [HEADER.contentType]: this.encoder.contentType,
        ...batchHeaders,
      },
    };
  }

  private async closeProducer(): Promise<void> {
    const producer = this.producer;
    this.producer = null;
    if (producer) await producer.disconnect().catch(() => undefined);
  }

  private async ensureTopic(admin: Admin): Promise<void> {
    try {
      await admin.createTopics({ topics: [{ topic: this.stream.topic }], waitForLeaders: true });
    } catch (error) {
      // Brokers without CreateTopics (some test clusters) create the topic on first use.
      this.logger.debug({ err: error, topic: this.stream.topic }, 'cdc: create topic failed; relying on auto-creation');
    }
  }

  private async partitionMetadata(admin: Admin): Promise<PartitionMetadata[]> {
    const metadata = await admin.fetchTopicMetadata({ topics: [this.stream.topic] });
    const partitions = metadata.topics[0]?.partitions ?? [];
    if (partitions.length === 0) throw new Error(`topic ${this.stream.topic} has no partitions`);
    return [...partitions].sort((a, b) => a.partitionId - b.partitionId);
  }

  /** Reads the newest messages of every partition: the last sequence each holds, and the newest transaction's start. */
  private async readBack(admin: Admin): Promise<ResumePoint | null> {
    const offsets = await admin.fetchTopicOffsets(this.stream.topic);
    const ranges = offsets.map((o) => ({ partition: o.partition, low: Number(o.low), high: Number(o.high) })).filter((r) => r.high > r.low);
    if (ranges.length === 0) return null;
    let found = await this.scan(ranges.map((r) => ({ ...r, from: Math.max(r.low, r.high - READ_BACK_WINDOW) })));
    // Bounded: on a topic shared with busy writers the stream falls back to its local position.
    const unseen = ranges.filter((r) => !found.lastSequence.has(r.partition) && r.high - r.low > READ_BACK_WINDOW);
    if (unseen.length > 0) {
      const wider = await this.scan(unseen.map((r) => ({ ...r, from: Math.max(r.low, r.high - READ_BACK_WINDOW_WIDE) })));
      found = merge(found, wider);
    }
    if (!found.newest) return null;
    const lastSequence = found.lastSequence;
    const { sequence, lsn } = found.newest;
    this.logger.info(
      { stream: this.stream.name, topic: this.stream.topic, resumeLsn: lsn, resumeSequence: sequence.toString() },
      'cdc: resuming from what the topic holds',
    );
    return {
      position: { lsn, afterSequence: sequence - 1n },
      delivered: (event) => {
        const last = lastSequence.get(this.partitionOf(event));
        return last !== undefined && event.sequence <= last;
      },
    };
  }

  private async scan(ranges: readonly { partition: number; from: number; high: number }[]): Promise<ReadBack> {
    const found: ReadBack = { lastSequence: new Map(), newest: null };
    const pending = new Set(ranges.map((r) => r.partition));
    const targets = new Map(ranges.map((r) => [r.partition, r.high]));
    const consumer: Consumer = this.kafka.consumer({
      groupId: `svcdb-readback-${newUlid()}`,
      readUncommitted: false,
      maxWaitTimeInMs: 100,
      allowAutoTopicCreation: false,
    });
    await consumer.connect();
    try {
      await consumer.subscribe({ topic: this.stream.topic, fromBeginning: true });
      const done = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`reading back topic ${this.stream.topic} took longer than ${this.settings.readBackTimeoutMs} ms`)),
          this.settings.readBackTimeoutMs,
        );
        const finish = (partition: number): void => {
          pending.delete(partition);
          if (pending.size === 0) {
            clearTimeout(timer);
            resolve();
          }
        };
        // Progress from END_BATCH_PROCESS: kafkajs emits it also for fetches that read_committed
        // filtered to nothing (aborted records, markers), which never reach eachBatch.
        consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
          if (pending.has(payload.partition) && Number(payload.lastOffset) + 1 >= (targets.get(payload.partition) ?? 0)) finish(payload.partition);
        });
        consumer
          .run({
            autoCommit: false,
            eachBatch: async ({ batch }) => {
              if (!pending.has(batch.partition)) return;
              for (const message of batch.messages) this.note(found, batch.partition, message.headers);
            },
          })
          .catch(reject);
        for (const r of ranges) consumer.seek({ topic: this.stream.topic, partition: r.partition, offset: String(r.from) });
      });
      await done;
    } finally {
      await consumer.disconnect().catch(() => undefined);
    }
    return found;
  }

  private note(found: ReadBack, partition: number, headers: Message['headers']): void {
    const text = (name: string): string | null => {
      const value = headers?.[name];
      if (value === undefined || value === null) return null;
      return Buffer.isBuffer(value) ? value.toString() : Array.isArray(value) ? String(value[0]) : String(value);
    };
    if (text(HEADER.stream) !== this.stream.id) return;
    const sequence = text(HEADER.sequence);
    const batchSequence = text(HEADER.batchSequence);
    const batchLsn = text(HEADER.batchLsn);
    if (sequence === null || batchSequence === null || batchLsn === null) return;
    const seq = BigInt(sequence);
    const last = found.lastSequence.get(partition);
    if (last === undefined || seq > last) found.lastSequence.set(partition, seq);
    const start = BigInt(batchSequence);
    if (!found.newest || start > found.newest.sequence) found.newest = { sequence: start, lsn: Number(batchLsn) };
  }
}

interface ReadBack {
  lastSequence: Map<number, bigint>;
  newest: { sequence: bigint; lsn: number } | null;
}

function merge(a: ReadBack, b: ReadBack): ReadBack {
  const lastSequence = new Map(a.lastSequence);
  for (const [p, s] of b.lastSequence) if ((lastSequence.get(p) ?? -1n) < s) lastSequence.set(p, s);
  const newest = !a.newest ? b.newest : !b.newest ? a.newest : a.newest.sequence >= b.newest.sequence ? a.newest : b.newest;
  return { lastSequence, newest };
}
