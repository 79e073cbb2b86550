/**
 * A real Apache Kafka 4 broker for tests: one JVM in KRaft combined mode (broker + controller,
 * node 1) on 127.0.0.1 and two ephemeral ports, its log dirs in a fresh temp dir. The jars come
 * from Maven Central through test/kafka/fetch-jars.sh into a cache (see docs/testing-kafka.md).
 *
 *   const kafka = await startRealKafka();   // kafka.brokers === '127.0.0.1:PORT'
 *   ...
 *   await kafka.stop();                     // SIGTERM, SIGKILL after a timeout; temp dir removed
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import { freePort } from './cli.js';
import { commandRuns, killOwned, spawnOwned, stopOwned, type OwnedProcess } from './owned-process.js';

const JAVA_MAJOR_MIN = 17; // Kafka 4 brokers need Java 17
const FORMAT_TIMEOUT_MS = 60_000;
const START_TIMEOUT_MS = 60_000;
const STOP_TERM_TIMEOUT_MS = 15_000;
const FETCH_TIMEOUT_MS = 10 * 60_000;
const START_ATTEMPTS_MAX = 3; // a port taken between freePort() and the broker's bind: retry
const JVM_OPTIONS = ['-Xmx512m', '-Xms64m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Djava.awt.headless=true'];

export interface RealKafka {
  /** The bootstrap address, `127.0.0.1:PORT`. */
  readonly brokers: string;
  readonly pid: number;
  /** The broker's temp dir (server.properties, data/), removed by stop() and kill(). */
  readonly dir: string;
  /** How long the start took, storage format included. */
  readonly startMs: number;
  /** The broker's recent log output (log4j at WARN). */
  output(): string;
  /** Graceful stop (SIGTERM, then SIGKILL after 15 s); removes the temp dir. */
  stop(): Promise<void>;
  /** SIGKILL (a crash); removes the temp dir. */
  kill(): Promise<void>;
}

export type Availability = { ok: true } | { ok: false; reason: string };

/** The repository root: the nearest folder up from this file holding test/kafka/pom.xml. */
function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'test', 'kafka', 'pom.xml'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('test/kafka/pom.xml not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

const POM = path.join(repoRoot(), 'test', 'kafka', 'pom.xml');
const FETCH_SCRIPT = path.join(repoRoot(), 'test', 'kafka', 'fetch-jars.sh');

/** The Kafka version test/kafka/pom.xml names (its one source). */
export const KAFKA_VERSION: string = (() => {
  const match = /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(readFileSync(POM, 'utf8'));
  if (!match?.[1]) throw new Error(`no <kafka.version> in ${POM}`);
  return match[1];
})();

/** Where the broker jars are cached (the same rule as test/kafka/fetch-jars.sh). */
export function kafkaJarsDir(): string {
  return process.env['SVCDB_KAFKA_CACHE'] ?? path.join(os.homedir(), '.cache', 'svcdb-test', `kafka-${KAFKA_VERSION}`);
}

function javaMajor(): number | null {
  const probe = spawnSync('java', ['-version'], { encoding: 'utf8', timeout: 30_000 });
  if (probe.error !== undefined || probe.status !== 0) return null;
  const match = /version "(\d+)(?:\.(\d+))?/.exec(probe.stderr);
  if (!match?.[1]) return null;
  const first = Number(match[1]);
  return first === 1 ? Number(match[2]) : first; // "1.8.0" is Java 8
}

let availability: Availability | undefined;

/**
 * Whether startRealKafka can work here: Java 17+ on PATH, and the jars cached or fetched now
 * (synchronously, through Maven; once per process).
 */
export function realKafkaAvailable(): Availability {
  availability ??= checkAvailability();
  return availability;
}

function checkAvailability(): Availability {
  const major = javaMajor();
  if (major === null) return { ok: false, reason: 'java is not installed (Kafka 4 needs Java 17 or later)' };
  if (major < JAVA_MAJOR_MIN) return { ok: false, reason: `java ${major} is too old (Kafka 4 needs Java ${JAVA_MAJOR_MIN} or later)` };
  if (existsSync(path.join(kafkaJarsDir(), '.complete'))) return { ok: true };
  if (!commandRuns('mvn', '--version'))
    return { ok: false, reason: `the Kafka ${KAFKA_VERSION} jars are not in ${kafkaJarsDir()} and mvn is not installed to fetch them` };
  const fetch = spawnSync('bash', [FETCH_SCRIPT], { encoding: 'utf8', timeout: FETCH_TIMEOUT_MS });
  if (fetch.status === 0 && existsSync(path.join(kafkaJarsDir(), '.complete'))) return { ok: true };
  const why = (fetch.error?.message ?? fetch.stderr ?? '').trim().split('\n').slice(-5).join(' | ');
  return { ok: false, reason: `fetching the Kafka ${KAFKA_VERSION} jars with ${FETCH_SCRIPT} failed: ${why}` };
}

/**
 * For `describe.skipIf(skipRealKafka())`: true (with a console.warn saying why) when no broker can
 * run here, except under CI=true, where the tests run and fail loudly instead.
 */
export function skipRealKafka(): boolean {
  const found = realKafkaAvailable();
  if (found.ok) return false;
  if (process.env['CI'] === 'true') return false;
  console.warn(`[kafka-real] skipping the real-Kafka tests: ${found.reason}`);
  return true;
}

function serverProperties(dir: string, brokerPort: number, controllerPort: number): string {
  return `${[
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.bootstrap.servers=127.0.0.1:${controllerPort}`,
    `listeners=PLAINTEXT://127.0.0.1:${brokerPort},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${brokerPort}`,
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    `log.dirs=${path.join(dir, 'data')}`,
    'num.partitions=1',
    'default.replication.factor=1',
    'auto.create.topics.enable=true',
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=1',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'transaction.state.log.num.partitions=1',
    'share.coordinator.state.topic.replication.factor=1',
    'share.coordinator.state.topic.min.isr=1',
    'group.initial.rebalance.delay.ms=0',
    'num.network.threads=2',
    'num.io.threads=2',
    'num.recovery.threads.per.data.dir=1',
  ].join('\n')}\n`;
}

const LOG4J2 = `${[
  'status = error',
  'appender.console.type = Console',
  'appender.console.name = STDOUT',
  'appender.console.layout.type = PatternLayout',
  'appender.console.layout.pattern = [%d] %p %m (%c)%n',
  'rootLogger.level = WARN',
  'rootLogger.appenderRef.stdout.ref = STDOUT',
].join('\n')}\n`;

function javaArgs(dir: string, mainClass: string, args: readonly string[]): string[] {
  return [...JVM_OPTIONS, `-Dlog4j2.configurationFile=${path.join(dir, 'log4j2.properties')}`, '-cp', `${kafkaJarsDir()}/*`, mainClass, ...args];
}

/** A Kafka Uuid (16 bytes, base64url) as Kafka's Uuid.randomUuid makes them: never starting with
 *  '-', which the StorageTool's argument parser would take for an option (1 id in 64 did). */
function clusterUuid(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

async function formatStorage(dir: string): Promise<void> {
  const clusterId = clusterUuid();
  const args = ['format', '-t', clusterId, '-c', path.join(dir, 'server.properties'), '--standalone'];
  const tool = spawnOwned('java', javaArgs(dir, 'kafka.tools.StorageTool', args), { cwd: dir });
  const timer = setTimeout(() => void killOwned(tool), FORMAT_TIMEOUT_MS);
  const { code, signal } = await tool.exited;
  clearTimeout(timer);
  if (code !== 0) throw new Error(`kafka StorageTool format exited with ${code ?? signal}: ${tool.output()}`);
}

/** Resolves once a kafkajs admin client sees broker 1; rejects when the broker exits first or at the deadline. */
async function waitUntilReady(broker: OwnedProcess, brokers: string, deadlineMs: number): Promise<void> {
  const kafka = new Kafka({ clientId: 'svcdb-test-ready', brokers: [brokers], logLevel: logLevel.NOTHING, connectionTimeout: 1000, retry: { retries: 0 } });
  let lastError = 'not tried';
  while (Date.now() < deadlineMs) {
    if (!broker.isRunning()) throw new BrokerExited(broker.output());
    const admin = kafka.admin();
    try {
      await admin.connect();
      const cluster = await admin.describeCluster();
      if (cluster.brokers.some((b) => b.nodeId === 1)) return;
      lastError = `describeCluster listed ${JSON.stringify(cluster.brokers)}`;
    } catch (error) {
      lastError = (error as Error).message;
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the Kafka broker at ${brokers} was not ready within ${START_TIMEOUT_MS} ms (last: ${lastError}); its log: ${broker.output()}`);
}

class BrokerExited extends Error {
  constructor(readonly brokerOutput: string) {
    super(`the Kafka broker exited during its start: ${brokerOutput}`);
  }
}

async function startOnce(dir: string): Promise<{ broker: OwnedProcess; brokers: string }> {
  const brokerPort = await freePort();
  let controllerPort = await freePort();
  while (controllerPort === brokerPort) controllerPort = await freePort();
  await rm(path.join(dir, 'data'), { recursive: true, force: true });
  await writeFile(path.join(dir, 'server.properties'), serverProperties(dir, brokerPort, controllerPort));
  await formatStorage(dir);
  const broker = spawnOwned('java', javaArgs(dir, 'kafka.Kafka', [path.join(dir, 'server.properties')]), { cwd: dir });
  const brokers = `127.0.0.1:${brokerPort}`;
  try {
    await waitUntilReady(broker, brokers, Date.now() + START_TIMEOUT_MS);
  } catch (error) {
    await killOwned(broker);
    throw error;
  }
  return { broker, brokers };
}

/** Formats a fresh KRaft storage, starts the broker, and resolves once kafkajs can talk to it. */
export async function startRealKafka(): Promise<RealKafka> {
  const found = realKafkaAvailable();
  if (!found.ok) throw new Error(`cannot start a real Kafka broker: ${found.reason}`);
  const startedAt = Date.now();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svcdb-kafka-'));
  await writeFile(path.join(dir, 'log4j2.properties'), LOG4J2);
  let started: { broker: OwnedProcess; brokers: string } | undefined;
  for (let attempt = 1; started === undefined; attempt += 1) {
    try {
      started = await startOnce(dir);
    } catch (error) {
      const portTaken = error instanceof BrokerExited && /Address already in use|BindException/.test(error.brokerOutput);
      if (!portTaken || attempt >= START_ATTEMPTS_MAX) {
        await rm(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }
  const { broker, brokers } = started;
  const startMs = Date.now() - startedAt;
  const end = async (how: 'stop' | 'kill'): Promise<void> => {
    await (how === 'stop' ? stopOwned(broker, STOP_TERM_TIMEOUT_MS) : killOwned(broker));
    await rm(dir, { recursive: true, force: true });
  };
  return { brokers, pid: broker.pid, dir, startMs, output: () => broker.output(), stop: () => end('stop'), kill: () => end('kill') };
}
