/**
 * bench/cdc.ts's Kafka consumer: a read_committed kafkajs consumer of one topic that counts what
 * arrives per phase and how late (from the event's commit timestamp, or the message's CreateTime).
 */
import type { Consumer, Kafka as KafkaClient, KafkaMessage } from 'kafkajs';

const PHASE_TIMEOUT_MS = 10 * 60_000;

export interface Stored {
  readonly k: string | null;
  readonly v: string;
  readonly h: Record<string, string>;
}

export interface PhaseFigures {
  readonly events: number;
  readonly firstSendAt: number;
  readonly lastReceivedAt: number;
  readonly latencies: number[];
  /** Receipt - the message's CreateTime (the producer's send). */
  readonly sendLatencies: number[];
  readonly transactions: number;
}

const TIMESTAMP_FIELD = Buffer.from('"timestamp":"');

function headerText(message: KafkaMessage, name: string): string | null {
  const value = message.headers?.[name];
  if (value === undefined || value === null) return null;
  return Buffer.isBuffer(value) ? value.toString() : Array.isArray(value) ? String(value[0]) : String(value);
}

/** A read_committed kafkajs consumer of one topic, counting what arrives and how late. */
export class TopicReader {
  received = 0;
  private consumer: Consumer | null = null;
  private waiters: { count: number; resolve: () => void }[] = [];
  private phase: { latencies: number[]; sendLatencies: number[]; transactions: Set<string>; firstSendAt: number; lastReceivedAt: number } = TopicReader.fresh();
  readonly kept: Stored[] = [];
  keep = false;

  constructor(
    private readonly kafka: KafkaClient,
    private readonly topic: string,
    /** 'commit': the event's timestamp field (svcdb); 'send': the message's CreateTime (baseline). */
    private readonly latencyFrom: 'commit' | 'send',
  ) {}

  private static fresh(): TopicReader['phase'] {
    return { latencies: [], sendLatencies: [], transactions: new Set(), firstSendAt: Number.POSITIVE_INFINITY, lastReceivedAt: 0 };
  }

  async start(): Promise<void> {
    const consumer = this.kafka.consumer({
      groupId: `bench-${this.topic}-${process.pid}-${Date.now()}`,
      readUncommitted: false,
      maxWaitTimeInMs: 100,
      maxBytesPerPartition: 16 * 1024 * 1024,
      maxBytes: 64 * 1024 * 1024,
    });
    this.consumer = consumer;
    await consumer.connect();
    const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
    await consumer.subscribe({ topic: this.topic, fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        const now = Date.now();
        const phase = this.phase;
        for (const message of batch.messages) {
          const sentAt = Number(message.timestamp);
          if (sentAt < phase.firstSendAt) phase.firstSendAt = sentAt;
          phase.sendLatencies.push(now - sentAt);
          phase.latencies.push(this.latencyFrom === 'send' ? now - sentAt : now - commitTime(message.value!));
          const txn = headerText(message, 'svc-batch-sequence');
          if (txn !== null) phase.transactions.add(txn);
          if (this.keep) {
            const h: Record<string, string> = {};
            for (const name of Object.keys(message.headers ?? {})) h[name] = headerText(message, name) ?? '';
            this.kept.push({ k: message.key ? message.key.toString() : null, v: message.value!.toString(), h });
          }
        }
        phase.lastReceivedAt = now;
        this.received += batch.messages.length;
        this.waiters = this.waiters.filter((w) => {
          if (this.received < w.count) return true;
          w.resolve();
          return false;
        });
      },
    });
    await joined;
  }

  /** Starts counting a new phase; returns the phase's figures once `events` more have arrived. */
  async measure(events: number, work: () => Promise<void>, check?: () => Promise<void>): Promise<PhaseFigures> {
    this.phase = TopicReader.fresh();
    const target = this.received + events;
    let watchdog: NodeJS.Timeout | undefined;
    const arrived = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.topic}: ${this.received} of ${target} messages after ${PHASE_TIMEOUT_MS} ms`)), PHASE_TIMEOUT_MS);
      this.waiters.push({
        count: target,
        resolve: () => {
          clearTimeout(timer);
          clearInterval(watchdog);
          resolve();
        },
      });
      // A stream that fails (e.g. a batch over the broker's size limit) retries forever: give up instead.
      if (check)
        watchdog = setInterval(
          () =>
            void check().catch((error: unknown) => {
              clearTimeout(timer);
              clearInterval(watchdog);
              reject(error);
            }),
          2000,
        );
    });
    try {
      await work();
      await arrived;
    } finally {
      clearInterval(watchdog);
    }
    const phase = this.phase;
    return {
      events,
      firstSendAt: phase.firstSendAt,
      lastReceivedAt: phase.lastReceivedAt,
      latencies: phase.latencies.sort((a, b) => a - b),
      sendLatencies: phase.sendLatencies.sort((a, b) => a - b),
      transactions: phase.transactions.size,
    };
  }

  async stop(): Promise<void> {
    await this.consumer?.disconnect().catch(() => undefined);
  }
}

/** The commit time (ms) in an event's JSON, without parsing all of it. */
function commitTime(value: Buffer): number {
  const at = value.indexOf(TIMESTAMP_FIELD);
  if (at < 0) throw new Error(`no timestamp in ${value.toString().slice(0, 200)}`);
  const start = at + TIMESTAMP_FIELD.length;
  return Date.parse(value.toString('latin1', start, value.indexOf(0x22, start)));
}

function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

/** p50, p99 and max of sorted latencies, named `${prefix}P50Ms` etc. */
export function latencyFigures(prefix: string, sorted: readonly number[]): Record<string, number | null> {
  return { [`${prefix}P50Ms`]: percentile(sorted, 0.5), [`${prefix}P99Ms`]: percentile(sorted, 0.99), [`${prefix}MaxMs`]: sorted.at(-1) ?? null };
}
