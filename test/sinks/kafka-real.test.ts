/**
 * A real Apache Kafka 4 broker (KRaft, one JVM) as a test peer: kafkajs transactions commit and
 * abort, read_committed readers (kafkajs and kcat) see only committed messages, and a second
 * producer with the same transactionalId fences the first. Skips with a warning where Java or the
 * jars are missing, except under CI=true, where it fails instead.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel, type Consumer, type Producer } from 'kafkajs';
import { KAFKA_VERSION, skipRealKafka, startRealKafka, type RealKafka } from '../helpers/kafka-real.js';
import { messageText, readTopicWithKcat } from '../helpers/kcat.js';
import { mockKafkaAvailable } from '../helpers/kafka-mock.js';

async function until(what: string, done: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function transactionalProducer(kafka: Kafka, transactionalId: string): Producer {
  return kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1, retry: { retries: 2, initialRetryTime: 100 } });
}

describe.skipIf(skipRealKafka())(`real Apache Kafka ${KAFKA_VERSION} (KRaft)`, () => {
  let broker: RealKafka;
  let kafka: Kafka;
  const opened: Array<Producer | Consumer> = [];

  beforeAll(async () => {
    broker = await startRealKafka();
    console.info(`[kafka-real] Kafka ${KAFKA_VERSION} started in ${broker.startMs} ms at ${broker.brokers}`);
    kafka = new Kafka({ clientId: 'svcdb-test', brokers: [broker.brokers], logLevel: logLevel.NOTHING });
  }, 120_000);

  afterAll(async () => {
    for (const client of opened) await client.disconnect().catch(() => undefined);
    await broker?.stop();
  }, 60_000);

  it('commits and aborts kafkajs transactions; read_committed readers see only the committed messages', async () => {
    const topic = 'real-tx';
    const admin = kafka.admin();
    await admin.connect();
    try {
      expect(await admin.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true })).toBe(true);
      const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
      expect(metadata.topics[0]?.partitions).toHaveLength(3);
    } finally {
      await admin.disconnect();
    }

    const producer = transactionalProducer(kafka, 'svcdb-test-real-tx');
    opened.push(producer);
    await producer.connect();
    const committed = await producer.transaction();
    await committed.send({ topic, messages: [0, 1, 2].map((p) => ({ key: `c${p}`, value: `committed-${p}`, headers: { event_id: `e-${p}` }, partition: p })) });
    await committed.commit();
    const aborted = await producer.transaction();
    await aborted.send({ topic, messages: [0, 1, 2].map((p) => ({ key: `a${p}`, value: `aborted-${p}`, partition: p })) });
    await aborted.abort();
    // A last committed transaction behind the aborted one on every partition: a reader that has
    // seen all of it has read past the aborted messages.
    const last = await producer.transaction();
    await last.send({ topic, messages: [0, 1, 2].map((p) => ({ key: `l${p}`, value: `last-${p}`, partition: p })) });
    await last.commit();

    const consumer = kafka.consumer({ groupId: 'svcdb-test-real-tx', readUncommitted: false });
    opened.push(consumer);
    const seen: string[] = [];
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value?.toString() ?? 'null') });
    await until('the last transaction on every partition', () => seen.filter((v) => v.startsWith('last-')).length === 3);
    await consumer.disconnect();
    expect(seen.sort()).toEqual(['committed-0', 'committed-1', 'committed-2', 'last-0', 'last-1', 'last-2']);

    if (mockKafkaAvailable().ok || process.env['CI'] === 'true') {
      const readCommitted = (await readTopicWithKcat(broker.brokers, topic)).map(messageText);
      expect(readCommitted.map((m) => m.value).sort()).toEqual(['committed-0', 'committed-1', 'committed-2', 'last-0', 'last-1', 'last-2']);
      expect(readCommitted.find((m) => m.value === 'committed-1')?.headers).toEqual({ event_id: 'e-1' });
      const readUncommitted = await readTopicWithKcat(broker.brokers, topic, { isolation: 'read_uncommitted' });
      expect(readUncommitted.map((m) => m.value?.toString())).toContain('aborted-1'); // they were written
    }
  });

  it('fences a producer when another starts with the same transactionalId', async () => {
    const topic = 'real-fence';
    const first = transactionalProducer(kafka, 'svcdb-test-fence');
    const second = transactionalProducer(kafka, 'svcdb-test-fence');
    opened.push(first, second);
    await first.connect();
    const open = await first.transaction();
    await open.send({ topic, messages: [{ key: 'first', value: 'from-first' }] });

    await second.connect();
    // kafkajs sends InitProducerId with the transactionalId on a producer's first transaction(),
    // not on connect(): only then is the epoch bumped and the first's open transaction aborted.
    const taken = await second.transaction();
    const error = await open.commit().then(
      () => null,
      (e: unknown) => e as { name: string; type?: string; retriable?: boolean },
    );
    expect(error).not.toBeNull();
    expect(error?.name).toBe('KafkaJSProtocolError');
    expect(error?.type).toBe('INVALID_PRODUCER_EPOCH');
    expect(error?.retriable).toBe(false);

    await taken.send({ topic, messages: [{ key: 'second', value: 'from-second' }] });
    await taken.commit();

    const values = (await consumeAll(kafka, topic, 'from-second')).sort();
    expect(values).toEqual(['from-second']);
  });

  it('kill() ends the broker at once and removes its temp dir (the last test: afterAll then has nothing to stop)', async () => {
    expect(existsSync(broker.dir)).toBe(true);
    await broker.kill();
    expect(() => process.kill(broker.pid, 0)).toThrow(/ESRCH/);
    expect(existsSync(broker.dir)).toBe(false);
  });
});

/** Values a read_committed kafkajs consumer sees in `topic` until `lastValue` arrives. */
async function consumeAll(kafka: Kafka, topic: string, lastValue: string): Promise<string[]> {
  const consumer = kafka.consumer({ groupId: `svcdb-test-${topic}`, readUncommitted: false });
  const seen: string[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value?.toString() ?? 'null') });
    await until(`${lastValue} in ${topic}`, () => seen.includes(lastValue));
  } finally {
    await consumer.disconnect();
  }
  return seen;
}
