/**
 * The librdkafka mock cluster (kcat) as a Kafka peer for tests: kafkajs's transactional producer
 * works against it through the test-only patch (in this process, and in a child node process
 * through the preload), and kcat reads back what was written, headers and raw bytes included.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';
import { startMockKafka, skipMockKafka, type MockKafka } from '../helpers/kafka-mock.js';
import { kafkajsMockPatchApplied, kafkajsMockPreloadArgs, patchKafkajsForMockCluster } from '../helpers/kafkajs-mock-patch.js';
import { messageText, readTopicWithKcat } from '../helpers/kcat.js';

/** Runs an ES module snippet in a child `node` from the repository root; resolves with its stdout. */
function runChild(nodeArgs: string[], source: string, env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, '--input-type=module', '-e', source], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout.trim());
      else reject(new Error(`child node exited with ${code}: ${stderr}`));
    });
  });
}

// An idempotent producer asks the controller for its producer id: the mock's controller id (0) is
// none of its brokers, so this fails without the patch.
const CHILD_PRODUCER = `
import { Kafka, logLevel } from 'kafkajs';
const kafka = new Kafka({ clientId: 'child', brokers: [process.env.BROKERS], logLevel: logLevel.NOTHING, retry: { retries: 1, initialRetryTime: 50 } });
const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
try {
  await producer.connect();
  await producer.send({ topic: process.env.TOPIC, messages: [{ key: 'child', value: 'from-child' }] });
  console.log('sent');
} catch (error) {
  console.log('failed ' + error.name + ': ' + error.message);
} finally {
  await producer.disconnect();
}`;

describe.skipIf(skipMockKafka())('librdkafka mock cluster (kcat) as a Kafka peer', () => {
  let mock: MockKafka;
  let kafka: Kafka;

  beforeAll(async () => {
    patchKafkajsForMockCluster();
    mock = await startMockKafka();
    kafka = new Kafka({ clientId: 'svcdb-test', brokers: [mock.brokers], logLevel: logLevel.NOTHING });
  });

  afterAll(async () => {
    await mock?.stop();
  });

  it('reports a controller id that is none of its brokers (why kafkajs needs the patch)', async () => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      const cluster = await admin.describeCluster();
      expect(cluster.brokers.map((b) => b.nodeId)).toEqual([1]);
      expect(cluster.brokers.map((b) => b.nodeId)).not.toContain(cluster.controller);
    } finally {
      await admin.disconnect();
    }
    expect(kafkajsMockPatchApplied()).toBe(true);
  });

  it('takes a kafkajs transaction, and kcat reads back keys, values, headers and raw bytes', async () => {
    const topic = 'mock-tx';
    const producer = kafka.producer({ transactionalId: 'svcdb-test-mock-tx', idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      const txn = await producer.transaction();
      await txn.send({
        topic,
        messages: [
          { key: 'k1', value: '{"op":"insert","id":1}', headers: { event_id: 'e-1', source: 'svcdb' }, partition: 0 },
          { key: 'k2', value: Buffer.from([0xff, 0x00, 0x22, 0x5c, 0x0a, 0xc3, 0xa9]), headers: { event_id: 'e-2' }, partition: 0 },
          { key: 'k3', value: null, headers: { event_id: 'e-3' }, partition: 2 },
        ],
      });
      await txn.commit();
    } finally {
      await producer.disconnect();
    }

    const read = await readTopicWithKcat(mock.brokers, topic);
    expect(read.map((m) => [m.partition, m.offset])).toEqual([
      [0, 0],
      [0, 1],
      [2, 0],
    ]);
    expect(read.map(messageText)[0]).toEqual({ key: 'k1', value: '{"op":"insert","id":1}', headers: { event_id: 'e-1', source: 'svcdb' } });
    expect(read[1]?.value).toEqual(Buffer.from([0xff, 0x00, 0x22, 0x5c, 0x0a, 0xc3, 0xa9]));
    expect(messageText(read[1]!).headers).toEqual({ event_id: 'e-2' });
    expect(read[2]?.value).toBeNull();
    expect(read[2]?.key?.toString()).toBe('k3');
  });

  it('does not hide an aborted transaction from read_committed readers (a mock limitation)', async () => {
    const topic = 'mock-abort';
    const producer = kafka.producer({ transactionalId: 'svcdb-test-mock-abort', idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      const aborted = await producer.transaction();
      await aborted.send({ topic, messages: [{ key: 'a', value: 'aborted', partition: 1 }] });
      await aborted.abort();
      const committed = await producer.transaction();
      await committed.send({ topic, messages: [{ key: 'c', value: 'committed', partition: 1 }] });
      await committed.commit();
    } finally {
      await producer.disconnect();
    }
    const read = await readTopicWithKcat(mock.brokers, topic, { isolation: 'read_committed' });
    // A real broker gives [committed] at offset 2 (after the aborted record and its abort marker).
    expect(read.map((m) => [m.offset, m.value?.toString()])).toEqual([
      [0, 'aborted'],
      [1, 'committed'],
    ]);
  });

  it('patches kafkajs in a child node process through the preload', async () => {
    const env = { BROKERS: mock.brokers, TOPIC: 'mock-child' };
    expect(await runChild([], CHILD_PRODUCER, env)).toMatch(/^failed KafkaJSBrokerNotFound: Broker 0 not found/);
    expect(await runChild(kafkajsMockPreloadArgs(), CHILD_PRODUCER, env)).toBe('sent');
    const read = await readTopicWithKcat(mock.brokers, 'mock-child');
    expect(read.map(messageText).map((m) => m.value)).toEqual(['from-child']);
  });
});
