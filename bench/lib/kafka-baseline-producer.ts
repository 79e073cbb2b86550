/**
 * The baseline of bench/cdc.ts, in its own process (as `svcdb serve` is): a bare kafkajs producer
 * pushing given messages (key, value, headers: the CDC stream's own messages, captured by the
 * bench) to a topic, one batch at a time, as the CDC Kafka destination does.
 *
 *   node kafka-baseline-producer.js BROKERS TOPIC MESSAGES_NDJSON BATCH_SIZE plain|transactional [WARMUP_TOPIC WARMUP_COUNT]
 *
 * plain: a non-transactional producer (acks all), one `send` per batch. transactional: the
 * destination's settings (idempotent, 1 request in flight, a transactional id), one transaction
 * per batch. Each line of MESSAGES_NDJSON is {"k": key | null, "v": value, "h": {header: value}}.
 * The first WARMUP_COUNT messages go to WARMUP_TOPIC first (JIT and connections warm, as the
 * server's are after the bench's warm-up). Progress and a summary go to stderr; the consumer in the bench measures the figures.
 */
import { readFile } from 'node:fs/promises';
import kafkajs from 'kafkajs';
import type { Message } from 'kafkajs';

const { Kafka, Partitioners, logLevel, CompressionTypes } = kafkajs;

const [brokers, topic, file, batchText, mode, warmupTopic, warmupText] = process.argv.slice(2);
if (!brokers || !topic || !file || !batchText || (mode !== 'plain' && mode !== 'transactional')) {
  process.stderr.write('usage: kafka-baseline-producer.js BROKERS TOPIC MESSAGES_NDJSON BATCH_SIZE plain|transactional\n');
  process.exit(2);
}
const batchSize = Number(batchText);

interface Line {
  readonly k: string | null;
  readonly v: string;
  readonly h: Record<string, string>;
}

const messages: Message[] = (await readFile(file, 'utf8'))
  .split('\n')
  .filter((line) => line.length > 0)
  .map((line) => {
    const { k, v, h } = JSON.parse(line) as Line;
    return { key: k, value: Buffer.from(v), headers: h };
  });

// The CDC destination's client settings (sinks/cdc/kafka-destination.ts, server defaults).
const kafka = new Kafka({
  clientId: `bench-baseline-${mode}`,
  brokers: brokers.split(','),
  connectionTimeout: 3000,
  requestTimeout: 30_000,
  logLevel: logLevel.NOTHING,
  retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 1000 },
});
const transactional = mode === 'transactional';
const producer = transactional
  ? kafka.producer({
      transactionalId: `bench-baseline-${process.pid}`,
      idempotent: true,
      maxInFlightRequests: 1,
      transactionTimeout: 60_000,
      createPartitioner: Partitioners.DefaultPartitioner,
    })
  : kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
await producer.connect();

async function sendAll(to: string, all: readonly Message[]): Promise<void> {
  for (let from = 0; from < all.length; from += batchSize) {
    const batch = all.slice(from, from + batchSize);
    if (transactional) {
      const transaction = await producer.transaction();
      try {
        await transaction.send({ topic: to, messages: batch, compression: CompressionTypes.None });
        await transaction.commit();
      } catch (error) {
        await transaction.abort().catch(() => undefined);
        throw error;
      }
    } else {
      await producer.send({ topic: to, messages: batch, compression: CompressionTypes.None, acks: -1 });
    }
  }
}

if (warmupTopic && warmupText) await sendAll(warmupTopic, messages.slice(0, Number(warmupText)));
const started = performance.now();
await sendAll(topic, messages);
const elapsedS = (performance.now() - started) / 1000;
await producer.disconnect();
process.stderr.write(
  `baseline ${mode}: sent ${messages.length} messages in batches of ${batchSize}: ${Math.round(messages.length / elapsedS)}/s (send side)\n`,
);
