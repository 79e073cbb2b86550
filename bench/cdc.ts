/**
 * CDC streams (docs/cdc.md). Prints two JSON lines:
 *
 * cdc-in-process: a table t(id INT PRIMARY KEY, v TEXT) gets BENCH_CDC_CHANGES changes (default
 * 200,000: half bulk INSERTs, half UPDATEs, 10,000 rows a statement) through the SQL engine over a
 * real log and projections; then the change events of a CDC capture on t are read back with
 * `changeEvents(projectionEventSource(...), spec, startOf(spec), {stopAtHead})`. Baseline in the
 * same run: `log.read` + `decodeLogRecord` of the same records, no events built. Rounds alternate.
 *
 * cdc-kafka: end to end through Apache Kafka (test/helpers/kafka-real.ts; when no broker can run,
 * librdkafka's mock cluster, marked as such). `svcdb serve` in its own process with
 * `CREATE CHANGE DATA CAPTURE ON t TO KAFKA ... TOPIC 'bench'`; a kafkajs consumer
 * (read_committed) in this process reads the topic. Phases, one after another:
 *   - live batched: writers commit BENCH_CDC_KAFKA_CHANGES (default 100,000) INSERTs, 1,000 rows
 *     a statement, 4 statements in flight, while the stream delivers;
 *   - live single-row: 32 writers commit BENCH_CDC_SINGLE_CHANGES (default 20,000) one-row INSERTs;
 *   - catch-up: the stream is paused, BENCH_CDC_KAFKA_CHANGES UPDATEs are committed (1,000 rows a
 *     statement), then the stream is resumed: the delivery pipeline's own throughput.
 * Latency: consumer receive time - the event's `timestamp` (commit time, ms). Baseline in the same
 * run: a bare kafkajs producer in its own process (bench/lib/kafka-baseline-producer.ts) sending
 * the very messages the catch-up phase received (key, value, headers) to another topic, in batches
 * of SVC_CDC_BATCH_EVENTS_MAX (the bench sets 1,000), plain and transactional, read by the same consumer setup;
 * its latency is receive time - the message's CreateTime (the producer's send).
 *
 * BENCH_CDC_PARTS=in-process,kafka selects parts. Progress goes to stderr.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import kafkajs from 'kafkajs';
import { startMockKafka } from '../test/helpers/kafka-mock.js';
import { KAFKA_VERSION, realKafkaAvailable, startRealKafka } from '../test/helpers/kafka-real.js';
import { kafkajsMockPreloadEnv, patchKafkajsForMockCluster } from '../test/helpers/kafkajs-mock-patch.js';
import { cdcInProcess } from './lib/cdc-in-process.js';
import { latencyFigures, TopicReader } from './lib/cdc-topic-reader.js';
import { perS, printBenchResult, progress, round2, type BenchResult } from './lib/print-result.js';
import { runBenchScript, startSvcdbProcess, stopChildrenOnSignals, type SvcdbProcess } from './lib/processes.js';

const { Kafka, logLevel } = kafkajs;

const PARTS = (process.env.BENCH_CDC_PARTS ?? 'in-process,kafka').split(',');
const KAFKA_CHANGES = Number(process.env.BENCH_CDC_KAFKA_CHANGES ?? 100_000);
const SINGLE_CHANGES = Number(process.env.BENCH_CDC_SINGLE_CHANGES ?? 20_000);
const BATCH_ROWS = 1000;
const BATCH_WRITERS = 4;
const SINGLE_WRITERS = 32;
/**
 * SVC_CDC_BATCH_EVENTS_MAX. Not the server's default (5,000): a batch is one produce request, and
 * 5,000 of these ~525-byte messages exceed a default broker's message.max.bytes (1 MiB), so the
 * stream fails on every attempt (RecordTooLarge). 1,000 fits.
 */
const CDC_BATCH_EVENTS = Number(process.env.BENCH_CDC_BATCH_EVENTS ?? 1000);
/** Events sent before measuring, by svcdb (batched INSERTs; then 500 single-row) and by each baseline producer. */
const WARMUP_EVENTS = 5000;
const API_KEY = 'bench-key';

const pick = (from: Record<string, unknown>, prefix: string): Record<string, unknown> =>
  Object.fromEntries(Object.entries(from).filter(([k]) => k.startsWith(prefix)));

async function query<T = { data: Record<string, unknown>[] }>(server: SvcdbProcess, text: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(`${server.url}/api/v1/query`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ sql: text, params, timeout_ms: 600_000 }),
  });
  const body = await response.text();
  if (!response.ok) throw new Error(`${text.slice(0, 80)}: ${response.status} ${body.slice(0, 500)}`);
  return JSON.parse(body) as T;
}

/** Throws when the stream has had a delivery error. */
async function streamHealthy(server: SvcdbProcess): Promise<void> {
  const status = (await query(server, 'SHOW CDC STREAM STATUS bench')).data[0]!;
  if (Number(status['delivery_errors']) > 0) throw new Error(`the stream failed to deliver: ${JSON.stringify(status)}`);
}

async function waitForState(server: SvcdbProcess, state: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = (await query(server, 'SHOW CDC STREAM STATUS bench')).data[0]!;
    if (status['state'] === state) return;
    if (Date.now() > deadline) throw new Error(`stream bench not ${state} within ${timeoutMs} ms: ${JSON.stringify(status)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Runs `statements` with `inFlight` of them at a time; resolves when all are acknowledged. */
async function runStatements(server: SvcdbProcess, statements: readonly { sql: string; params?: unknown[] }[], inFlight: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < statements.length) {
        const s = statements[next++]!;
        await query(server, s.sql, s.params ?? []);
      }
    }),
  );
}

function insertStatements(first: number, count: number): { sql: string }[] {
  const out: { sql: string }[] = [];
  for (let from = first; from < first + count; from += BATCH_ROWS) {
    const to = Math.min(first + count - 1, from + BATCH_ROWS - 1);
    out.push({ sql: `INSERT INTO t SELECT g, 'value-' || g FROM generate_series(${from}, ${to}) g` });
  }
  return out;
}
async function toKafka(): Promise<BenchResult> {
  const availability = realKafkaAvailable();
  let broker: { brokers: string; stop(): Promise<void> };
  let kafkaKind: string;
  let childEnv: Record<string, string> = {};
  if (availability.ok) {
    progress('starting Apache Kafka');
    broker = await startRealKafka();
    kafkaKind = `Apache Kafka ${KAFKA_VERSION}, 1 broker (KRaft combined), 1 partition`;
  } else {
    progress(`no real Kafka (${availability.reason}): librdkafka mock cluster`);
    patchKafkajsForMockCluster();
    broker = await startMockKafka();
    childEnv = kafkajsMockPreloadEnv(process.env);
    kafkaKind = `librdkafka mock cluster (kcat), NOT a real broker (${availability.reason}); 4 partitions, aborted transactions visible`;
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svcdb-bench-cdc-kafka-'));
  const readers: TopicReader[] = [];
  let server: SvcdbProcess | undefined;
  try {
    const kafka = new Kafka({ clientId: 'bench-cdc', brokers: broker.brokers.split(','), logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin
      .createTopics({ topics: ['bench', 'baseline-plain', 'baseline-txn'].map((topic) => ({ topic, numPartitions: 1 })), waitForLeaders: true })
      .catch((error: unknown) => progress(`createTopics failed (${(error as Error).message}): relying on auto-creation`));
    await admin.disconnect();

    // BENCH_CDC_SERVER_NODE_ARGS: e.g. `--cpu-prof --cpu-prof-dir=DIR` to profile the server.
    const nodeArgs = (process.env.BENCH_CDC_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
    server = await startSvcdbProcess(API_KEY, { ...childEnv, SVC_CDC_BATCH_EVENTS_MAX: String(CDC_BATCH_EVENTS) }, { nodeArgs });
    const svc = server;
    await query(svc, 'CREATE TABLE t (id INT PRIMARY KEY, v TEXT)');
    await query(svc, `CREATE CHANGE DATA CAPTURE ON t TO KAFKA '${broker.brokers}' TOPIC 'bench' AS bench`);
    await waitForState(svc, 'running');
    const reader = new TopicReader(kafka, 'bench', 'commit');
    readers.push(reader);
    await reader.start();
    const healthy = (): Promise<void> => streamHealthy(svc);

    let nextId = 1;
    progress('warm-up: 5,000 batched and 500 single-row INSERTs');
    await reader.measure(
      WARMUP_EVENTS + 500,
      async () => {
        await runStatements(svc, insertStatements(nextId, WARMUP_EVENTS), BATCH_WRITERS);
        nextId += WARMUP_EVENTS;
        await runStatements(
          svc,
          Array.from({ length: 500 }, (_, i) => ({ sql: 'INSERT INTO t VALUES ($1, $2)', params: [nextId + i, `value-${nextId + i}`] })),
          SINGLE_WRITERS,
        );
        nextId += 500;
      },
      healthy,
    );

    const result: Record<string, string | number | boolean | null> = {
      bench: 'cdc-kafka',
      kafka: kafkaKind,
      realKafka: availability.ok,
      cdcBatchEventsMax: CDC_BATCH_EVENTS,
      loadAverage1mAtStart: round2(os.loadavg()[0]!),
    };

    progress(`live batched: ${KAFKA_CHANGES} INSERTs, ${BATCH_ROWS} rows a statement, ${BATCH_WRITERS} in flight`);
    const batchedIds = nextId;
    let writeMs = 0;
    let batchedStart = 0;
    const batched = await reader.measure(
      KAFKA_CHANGES,
      async () => {
        batchedStart = Date.now();
        await runStatements(svc, insertStatements(nextId, KAFKA_CHANGES), BATCH_WRITERS);
        writeMs = Date.now() - batchedStart;
      },
      healthy,
    );
    nextId += KAFKA_CHANGES;
    Object.assign(result, {
      batchedEvents: KAFKA_CHANGES,
      batchedCommitsPerSec: perS(KAFKA_CHANGES, writeMs),
      batchedEndToEndPerSec: perS(KAFKA_CHANGES, batched.lastReceivedAt - batchedStart),
      batchedEventsPerTxn: Math.round(KAFKA_CHANGES / batched.transactions),
      ...latencyFigures('batched', batched.latencies),
    });
    progress(`  ${JSON.stringify(pick(result, 'batched'))}`);

    progress(`live single-row: ${SINGLE_CHANGES} one-row INSERTs, ${SINGLE_WRITERS} writers`);
    let singleStart = 0;
    const single = await reader.measure(
      SINGLE_CHANGES,
      async () => {
        const statements = Array.from({ length: SINGLE_CHANGES }, (_, i) => ({
          sql: 'INSERT INTO t VALUES ($1, $2)',
          params: [nextId + i, `value-${nextId + i}`],
        }));
        singleStart = Date.now();
        await runStatements(svc, statements, SINGLE_WRITERS);
        writeMs = Date.now() - singleStart;
      },
      healthy,
    );
    nextId += SINGLE_CHANGES;
    Object.assign(result, {
      singleEvents: SINGLE_CHANGES,
      singleCommitsPerSec: perS(SINGLE_CHANGES, writeMs),
      singleEndToEndPerSec: perS(SINGLE_CHANGES, single.lastReceivedAt - singleStart),
      singleEventsPerTxn: round2(SINGLE_CHANGES / single.transactions),
      ...latencyFigures('single', single.latencies),
    });
    progress(`  ${JSON.stringify(pick(result, 'single'))}`);

    progress(`catch-up: stream paused, ${KAFKA_CHANGES} UPDATEs (${BATCH_ROWS} rows a statement), then RESUME`);
    await query(svc, 'ALTER CDC STREAM bench PAUSE');
    await waitForState(svc, 'paused');
    const updates: { sql: string }[] = [];
    for (let from = batchedIds; from < batchedIds + KAFKA_CHANGES; from += BATCH_ROWS) {
      updates.push({ sql: `UPDATE t SET v = v || '-updated' WHERE id BETWEEN ${from} AND ${Math.min(batchedIds + KAFKA_CHANGES - 1, from + BATCH_ROWS - 1)}` });
    }
    let t0 = Date.now();
    await runStatements(svc, updates, BATCH_WRITERS);
    const updateMs = Date.now() - t0;
    reader.keep = true;
    let resumedAt = 0;
    const catchUp = await reader.measure(
      KAFKA_CHANGES,
      async () => {
        resumedAt = Date.now();
        await query(svc, 'ALTER CDC STREAM bench RESUME');
      },
      healthy,
    );
    reader.keep = false;
    const catchUpMs = catchUp.lastReceivedAt - catchUp.firstSendAt;
    if (reader.kept.length !== KAFKA_CHANGES) throw new Error(`catch-up kept ${reader.kept.length} messages, expected ${KAFKA_CHANGES}`);
    const catchUpPerS = perS(KAFKA_CHANGES, catchUpMs);
    Object.assign(result, {
      catchUpEvents: KAFKA_CHANGES,
      catchUpUpdateCommitsPerSec: perS(KAFKA_CHANGES, updateMs),
      catchUpResumeToFirstSendMs: catchUp.firstSendAt - resumedAt,
      catchUpPerSec: catchUpPerS,
      catchUpResumeToLastPerSec: perS(KAFKA_CHANGES, catchUp.lastReceivedAt - resumedAt),
      catchUpEventsPerTxn: Math.round(KAFKA_CHANGES / catchUp.transactions),
      // The Kafka leg alone (receipt - CreateTime, as for the baselines): commit latency means nothing for a backlog.
      ...latencyFigures('catchUpSend', catchUp.sendLatencies),
      catchUpMessageBytesAvg: Math.round(
        reader.kept.reduce((sum, m) => sum + m.v.length + (m.k?.length ?? 0) + Object.entries(m.h).reduce((s, [k, v]) => s + k.length + v.length, 0), 0) /
          reader.kept.length,
      ),
    });
    progress(`  ${JSON.stringify(pick(result, 'catchUp'))}`);

    // Everything committed arrived once: nothing more comes.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const committed = WARMUP_EVENTS + 500 + KAFKA_CHANGES + SINGLE_CHANGES + KAFKA_CHANGES;
    result['eventsReceived'] = reader.received;
    result['eventsCommitted'] = committed;
    await reader.stop();
    await server.stop();
    server = undefined;

    // Baselines: the same messages, from a bare producer in its own process.
    const file = path.join(dir, 'messages.ndjson');
    await writeFile(file, reader.kept.map((m) => JSON.stringify(m)).join('\n') + '\n');
    reader.kept.length = 0;
    for (const mode of ['plain', 'transactional'] as const) {
      const topic = mode === 'plain' ? 'baseline-plain' : 'baseline-txn';
      progress(`baseline ${mode}: ${KAFKA_CHANGES} messages to ${topic}, batches of ${CDC_BATCH_EVENTS}`);
      const baselineReader = new TopicReader(kafka, topic, 'send');
      readers.push(baselineReader);
      await baselineReader.start();
      t0 = Date.now();
      const args = [broker.brokers, topic, file, String(CDC_BATCH_EVENTS), mode, `${topic}-warmup`, String(WARMUP_EVENTS)];
      const figures = await baselineReader.measure(KAFKA_CHANGES, () => runBenchScript('kafka-baseline-producer.js', args, childEnv));
      await baselineReader.stop();
      const key = mode === 'plain' ? 'baselinePlain' : 'baselineTxn';
      result[`${key}PerSec`] = perS(KAFKA_CHANGES, figures.lastReceivedAt - figures.firstSendAt);
      Object.assign(result, latencyFigures(key, figures.latencies));
      progress(`  ${JSON.stringify(pick(result, key))}`);
    }
    result['loadAverage1mAtEnd'] = round2(os.loadavg()[0]!);
    const baselineTxn = result['baselineTxnPerSec'] as number;
    result['catchUpRatio'] = round2(catchUpPerS / baselineTxn);
    result['batchedEndToEndRatio'] = round2((result['batchedEndToEndPerSec'] as number) / baselineTxn);
    result['note'] =
      'events/s: first send (CreateTime) to last receipt for catch-up and baselines, first write to last receipt for live phases; latency: receipt - commit timestamp (svcdb), receipt - CreateTime (baseline); consumer kafkajs read_committed in the bench process';
    return result as BenchResult;
  } finally {
    for (const r of readers) await r.stop();
    await server?.stop();
    await broker.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

stopChildrenOnSignals(progress);

if (PARTS.includes('in-process')) printBenchResult(await cdcInProcess(CDC_BATCH_EVENTS));
if (PARTS.includes('kafka')) printBenchResult(await toKafka());
