/**
 * librdkafka's built-in mock cluster, run by Debian's kcat: a Kafka protocol server in one small
 * process, up in well under a second. Quirks (docs/testing-kafka.md): topics auto-create with 4
 * partitions on first use (CreateTopics is unsupported); it reports controller id 0 while its
 * brokers are 1..N, so kafkajs's idempotent and transactional producers need
 * test/helpers/kafkajs-mock-patch.ts; transactions have no markers, and aborted messages stay
 * visible to read_committed readers.
 *
 *   patchKafkajsForMockCluster();
 *   const mock = await startMockKafka();   // mock.brokers === '127.0.0.1:PORT'
 *   ...
 *   await mock.stop();
 */
import type { Availability } from './kafka-real.js';
import { commandRuns, killOwned, spawnOwned, stopOwned } from './owned-process.js';

const START_TIMEOUT_MS = 15_000;
const STOP_TERM_TIMEOUT_MS = 5_000;

export interface MockKafka {
  /** The bootstrap list, `127.0.0.1:PORT[,127.0.0.1:PORT...]`. */
  readonly brokers: string;
  readonly pid: number;
  /** Stops kcat (SIGTERM, then SIGKILL after 5 s); the cluster and its data are gone. */
  stop(): Promise<void>;
}

let availability: Availability | undefined;

/** Whether kcat (with librdkafka's mock cluster) is on PATH. */
export function mockKafkaAvailable(): Availability {
  availability ??= commandRuns('kcat', '-V') ? { ok: true } : { ok: false, reason: 'kcat is not installed (apt-get install kcat)' };
  return availability;
}

/** For `describe.skipIf(skipMockKafka())`: true with a console.warn when kcat is missing, never under CI=true. */
export function skipMockKafka(): boolean {
  const found = mockKafkaAvailable();
  if (found.ok || process.env['CI'] === 'true') return false;
  console.warn(`[kafka-mock] skipping the mock-Kafka tests: ${found.reason}`);
  return true;
}

/** Starts a mock cluster of `brokerCount` brokers (default 1); resolves with its bootstrap list. */
export async function startMockKafka(options: { brokerCount?: number } = {}): Promise<MockKafka> {
  const found = mockKafkaAvailable();
  if (!found.ok) throw new Error(`cannot start the librdkafka mock cluster: ${found.reason}`);
  const brokerCount = options.brokerCount ?? 1;
  // A consumer of a throwaway topic keeps kcat (and so the mock cluster) running; -u: unbuffered.
  const args = ['-C', '-u', '-q', '-X', `test.mock.num.brokers=${brokerCount}`, '-b', 'unused:1', '-t', 'svcdb-mock-keepalive'];
  const kcat = spawnOwned('kcat', args);
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kcat printed no mock cluster address within ${START_TIMEOUT_MS} ms: ${kcat.output()}`)), START_TIMEOUT_MS);
    const look = (): void => {
      // "... Mock cluster enabled: original bootstrap.servers and security.protocol ignored and replaced with 127.0.0.1:PORT"
      const match = /replaced with (\S+)/.exec(kcat.output());
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    kcat.onOutput(look);
    look();
    void kcat.exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`kcat exited with ${code ?? signal} before its mock cluster was up: ${kcat.output()}`));
    });
  }).catch(async (error: unknown) => {
    await killOwned(kcat);
    throw error;
  });
  return {
    brokers: address,
    pid: kcat.pid,
    stop: async () => void (await stopOwned(kcat, STOP_TERM_TIMEOUT_MS)),
  };
}
