/**
 * Webhook deliveries (issue 12's benchmarks). Prints two JSON lines:
 *
 * webhooks-ledger: the exactly-once ledger's cost per delivery, in process. BENCH_WH_LEDGER_PUTS
 * (default 50,000) `DeliveryLedger.put`s of entries shaped as the runner writes them (a delivered
 * event: id, sequence, status, attempts, errors, last status, times) on a real state store
 * (`openStateStore` in a temp dir), one at a time and 100 in flight (a webhook's 100 lanes); and the
 * runner's check before each delivery, `DeliveryLedger.get` of an id not delivered yet. Baseline in
 * the same run: plain classic-level `put`s (same options: STORE_OPTIONS) of the same key and value
 * bytes, the same bytes as a one-op batch (the ledger's write without its JSON), and `getSync` misses. Rounds alternate which side goes first; medians, µs per operation.
 *
 * webhooks-http: end to end. A receiver in its own process (bench/lib/webhook-receiver.ts:
 * node:http on 127.0.0.1, 200 at once, recording arrival time and the event's commit timestamp)
 * and `svcdb serve` in its own process (durable commits). A table t of 100 keys (id INT PRIMARY KEY,
 * v BIGINT, note TEXT), one webhook on it (default operations, no filter, no transform). The bench
 * process runs the writers over HTTP (POST /api/v1/query). Phases, one after another:
 *   - live single-row: 32 writers commit BENCH_WH_SINGLE_CHANGES (default 50,000) one-row UPDATEs,
 *     statement i on key i mod 100;
 *   - live batched: 4 writers commit BENCH_WH_BATCH_CHANGES (default 100,000) changes as UPDATEs of
 *     all 100 keys (100 rows a statement); the receiver keeps these bodies and headers;
 *   - catch-up: the webhook is disabled (PATCH enabled:false), BENCH_WH_BATCH_CHANGES more changes
 *     are committed the same way, then it is enabled again: the delivery pipeline's own rate.
 * Deliveries/s: first write (catch-up: first receipt) to last receipt. Latency: arrival - the
 * event's `timestamp` (commit time, ms). Baseline in the same run: a bare undici Pool in its own
 * process (bench/lib/webhook-baseline-client.ts) POSTing the bodies and headers of the batched phase
 * to the same receiver, with svcdb's pool options (BENCH_WH_CONNECTIONS connections, default 10 =
 * SVC_WEBHOOK_CONNECTIONS_PER_ENDPOINT_MAX's default) and BENCH_WH_IN_FLIGHT requests in flight
 * (default 100 = SVC_WEBHOOK_REQUESTS_IN_FLIGHT_MAX's default; both are given to the server too);
 * it runs twice, before and after the catch-up phase (mean). Its latency: arrival - send.
 * The receiver checks every event id arrives once and per-key order.
 *
 * BENCH_WH_PARTS=ledger,http selects parts. BENCH_WH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR"
 * profiles the server. Progress goes to stderr.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { median, perS, printBenchResult, progress, round2, type BenchResult } from './lib/print-result.js';
import { ledgerCost } from './lib/webhooks-ledger.js';
import { forkBenchChild, runBenchScript, startSvcdbProcess, stopChildrenOnSignals, type SvcdbProcess } from './lib/processes.js';
import type { ReceiverFigures } from './lib/webhook-receiver.js';

const PARTS = (process.env.BENCH_WH_PARTS ?? 'ledger,http').split(',');
const KEYS = 100;
const SINGLE_CHANGES = Number(process.env.BENCH_WH_SINGLE_CHANGES ?? 50_000);
const SINGLE_WRITERS = 32;
const BATCH_CHANGES = Number(process.env.BENCH_WH_BATCH_CHANGES ?? 100_000);
const BATCH_WRITERS = 4;
const CONNECTIONS = Number(process.env.BENCH_WH_CONNECTIONS ?? 10);
const IN_FLIGHT = Number(process.env.BENCH_WH_IN_FLIGHT ?? 100);
const WARMUP_SINGLE = 1000;
const WARMUP_BATCHES = 20;
const BASELINE_WARMUP = 5000;
const API_KEY = 'bench-key';
const SECRET = `whsec_${Buffer.from('a bench secret of 32 bytes......').toString('base64')}`;
const PHASE_TIMEOUT_MS = 10 * 60_000;

const pick = (from: Record<string, unknown>, prefix: string): Record<string, unknown> =>
  Object.fromEntries(Object.entries(from).filter(([k]) => k.startsWith(prefix)));

// ------------------------------------------------------------------------------------------------
// (b) End to end over HTTP.

/** The receiver process, driven over IPC. */
class ReceiverProcess {
  private readonly waiters = new Map<string, ((message: any) => void)[]>();
  private constructor(
    private readonly child: ChildProcess,
    readonly stop: () => Promise<void>,
    readonly url: string,
  ) {}

  static async start(): Promise<ReceiverProcess> {
    const { child, stop } = forkBenchChild('webhook-receiver.js');
    const port = await new Promise<number>((resolve, reject) => {
      child.once('message', (m: { type: string; port: number }) => resolve(m.port));
      child.once('exit', (code) => reject(new Error(`the receiver exited with ${code}`)));
    });
    const receiver = new ReceiverProcess(child, stop, `http://127.0.0.1:${port}/hook`);
    child.on('message', (m: { type: string }) => {
      const list = receiver.waiters.get(m.type);
      const next = list?.shift();
      next?.(m);
    });
    return receiver;
  }

  private next<T>(type: string): Promise<T> {
    return new Promise<T>((resolve) => {
      const list = this.waiters.get(type) ?? [];
      list.push(resolve);
      this.waiters.set(type, list);
    });
  }

  /** Starts counting a phase; the promise resolves with its figures once `expect` requests arrived. */
  phase(name: string, expect: number, keep = false): Promise<ReceiverFigures> {
    const reached = this.next<{ figures: ReceiverFigures }>('reached').then((m) => m.figures);
    this.child.send({ type: 'phase', name, expect, keep });
    return reached;
  }

  async status(): Promise<{ total: number; phaseCount: number; distinctEvents: number }> {
    const reply = this.next<{ total: number; phaseCount: number; distinctEvents: number }>('status');
    this.child.send({ type: 'status' });
    return reply;
  }

  async save(file: string): Promise<number> {
    const reply = this.next<{ count: number }>('saved');
    this.child.send({ type: 'save', file });
    return (await reply).count;
  }
}

class Svcdb {
  private readonly pool: Pool;
  constructor(readonly server: SvcdbProcess) {
    this.pool = new Pool(server.url, { connections: SINGLE_WRITERS, pipelining: 1 });
  }

  async call<T = any>(method: 'GET' | 'POST' | 'PATCH', route: string, body?: unknown): Promise<T> {
    const res = await this.pool.request({
      method,
      path: `/api/v1${route}`,
      headers: { authorization: `Bearer ${API_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      headersTimeout: PHASE_TIMEOUT_MS,
      bodyTimeout: PHASE_TIMEOUT_MS,
    });
    const text = await res.body.text();
    if (res.statusCode < 200 || res.statusCode >= 300)
      throw new Error(`${method} ${route} ${JSON.stringify(body)?.slice(0, 100)}: ${res.statusCode} ${text.slice(0, 500)}`);
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }

  query(sql: string, params: unknown[] = []): Promise<unknown> {
    return this.call('POST', '/query', { sql, params, timeout_ms: 600_000 });
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** Runs `statements` with `inFlight` at a time; resolves when all are acknowledged. */
async function runStatements(svc: Svcdb, statements: readonly { sql: string; params?: unknown[] }[], inFlight: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < statements.length) {
        const s = statements[next++]!;
        await svc.query(s.sql, s.params ?? []);
      }
    }),
  );
}

const singleRowUpdates = (count: number): { sql: string; params: unknown[] }[] =>
  Array.from({ length: count }, (_, i) => ({ sql: 'UPDATE t SET v = v + 1 WHERE id = $1', params: [(i % KEYS) + 1] }));
/** Statements of KEYS rows each (every key), `changes` rows in all. */
const batchedUpdates = (changes: number): { sql: string }[] => Array.from({ length: Math.ceil(changes / KEYS) }, () => ({ sql: 'UPDATE t SET v = v + 1' }));

function latencyFigures(prefix: string, f: ReceiverFigures): Record<string, number | null> {
  return { [`${prefix}P50Ms`]: f.p50Ms, [`${prefix}P99Ms`]: f.p99Ms, [`${prefix}MaxMs`]: f.maxMs };
}

async function overHttp(): Promise<BenchResult> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svcdb-bench-wh-'));
  let receiver: ReceiverProcess | undefined;
  let server: SvcdbProcess | undefined;
  let svc: Svcdb | undefined;
  try {
    receiver = await ReceiverProcess.start();
    const rx = receiver;
    const nodeArgs = (process.env.BENCH_WH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
    server = await startSvcdbProcess(
      API_KEY,
      {
        SVC_WEBHOOK_CONNECTIONS_PER_ENDPOINT_MAX: String(CONNECTIONS),
        SVC_WEBHOOK_REQUESTS_IN_FLIGHT_MAX: String(IN_FLIGHT),
      },
      { nodeArgs },
    );
    svc = new Svcdb(server);
    const db = svc;
    await db.query('CREATE TABLE t (id INT PRIMARY KEY, v BIGINT NOT NULL, note TEXT)');
    await db.query(`INSERT INTO t SELECT g, 0, 'a note of the row ' || g FROM generate_series(1, ${KEYS}) g`);
    const created = await db.call<{ id: string }>('POST', '/webhooks', { url: rx.url, secret: SECRET, tables: ['t'] });
    const webhookId = created.id;

    /** Fails the phase when the webhook has had a failed attempt or a dead letter (nothing here should fail). */
    const healthy = async (): Promise<void> => {
      const view = await db.call<{ stats: Record<string, number> }>('GET', `/webhooks/${webhookId}`);
      if (view.stats['failed_attempts']! > 0 || view.stats['dead_lettered']! > 0) throw new Error(`the webhook failed: ${JSON.stringify(view.stats)}`);
    };
    /** Runs `work` and resolves with the phase's receiver figures once `expect` deliveries arrived. */
    const measure = async (name: string, expect: number, work: () => Promise<void>, keep = false): Promise<ReceiverFigures> => {
      const reached = rx.phase(name, expect, keep);
      let failed: (error: unknown) => void = () => undefined;
      const failure = new Promise<never>((_, reject) => (failed = reject));
      failure.catch(() => undefined); // a failure after the phase ended is nobody's
      const deadline = Date.now() + PHASE_TIMEOUT_MS;
      const watchdog = setInterval(() => {
        void healthy()
          .then(async () => {
            if (Date.now() > deadline) failed(new Error(`${name}: ${(await rx.status()).phaseCount} of ${expect} deliveries after ${PHASE_TIMEOUT_MS} ms`));
          })
          .catch(failed);
      }, 2000);
      try {
        await Promise.race([work(), failure]);
        return await Promise.race([reached, failure]);
      } finally {
        clearInterval(watchdog);
      }
    };

    let committed = 0;
    progress(`warm-up: ${WARMUP_SINGLE} single-row and ${WARMUP_BATCHES} ${KEYS}-row UPDATEs`);
    await measure('warmup', WARMUP_SINGLE + WARMUP_BATCHES * KEYS, async () => {
      await runStatements(db, singleRowUpdates(WARMUP_SINGLE), SINGLE_WRITERS);
      await runStatements(db, batchedUpdates(WARMUP_BATCHES * KEYS), BATCH_WRITERS);
    });
    committed += WARMUP_SINGLE + WARMUP_BATCHES * KEYS;

    const result: Record<string, string | number | boolean | null> = {
      bench: 'webhooks-http',
      keys: KEYS,
      connections: CONNECTIONS,
      inFlight: IN_FLIGHT,
      loadAverage1mAtStart: round2(os.loadavg()[0]!),
    };

    progress(`live single-row: ${SINGLE_CHANGES} one-row UPDATEs, ${SINGLE_WRITERS} writers`);
    let writeMs = 0;
    let start = 0;
    const single = await measure('single', SINGLE_CHANGES, async () => {
      const statements = singleRowUpdates(SINGLE_CHANGES);
      start = Date.now();
      await runStatements(db, statements, SINGLE_WRITERS);
      writeMs = Date.now() - start;
    });
    committed += SINGLE_CHANGES;
    Object.assign(result, {
      singleChanges: SINGLE_CHANGES,
      singleCommitsPerSec: perS(SINGLE_CHANGES, writeMs),
      singleDeliveriesPerSec: perS(SINGLE_CHANGES, single.lastAtMs - start),
      ...latencyFigures('single', single),
    });
    progress(`  ${JSON.stringify(pick(result, 'single'))}`);

    progress(`live batched: ${BATCH_CHANGES} changes, ${KEYS} rows a statement, ${BATCH_WRITERS} writers (bodies kept for the baseline)`);
    const batched = await measure(
      'batched',
      BATCH_CHANGES,
      async () => {
        const statements = batchedUpdates(BATCH_CHANGES);
        start = Date.now();
        await runStatements(db, statements, BATCH_WRITERS);
        writeMs = Date.now() - start;
      },
      true,
    );
    committed += BATCH_CHANGES;
    Object.assign(result, {
      batchedChanges: BATCH_CHANGES,
      batchedCommitsPerSec: perS(BATCH_CHANGES, writeMs),
      batchedDeliveriesPerSec: perS(BATCH_CHANGES, batched.lastAtMs - start),
      ...latencyFigures('batched', batched),
      bodyBytesAvg: batched.bodyBytesAvg,
      headerBytesAvg: batched.headerBytesAvg,
    });
    progress(`  ${JSON.stringify(pick(result, 'batched'))}`);
    const file = path.join(dir, 'requests.ndjson');
    const saved = await rx.save(file);
    if (saved !== BATCH_CHANGES) throw new Error(`the receiver kept ${saved} requests, expected ${BATCH_CHANGES}`);

    const baselineRuns: ReceiverFigures[] = [];
    const baseline = async (): Promise<void> => {
      progress(`baseline: ${saved} POSTs of the batched phase's bodies, ${CONNECTIONS} connections, ${IN_FLIGHT} in flight`);
      const figures = await measure(`baseline-${baselineRuns.length + 1}`, saved, () =>
        runBenchScript('webhook-baseline-client.js', [rx.url, file, String(CONNECTIONS), String(IN_FLIGHT), String(BASELINE_WARMUP)]),
      );
      baselineRuns.push(figures);
      progress(`  ${perS(figures.count, figures.lastAtMs - figures.firstAtMs)} requests/s, P50 ${figures.p50Ms} ms, P99 ${figures.p99Ms} ms`);
    };
    await baseline();

    progress(`catch-up: webhook disabled, ${BATCH_CHANGES} changes committed, then enabled`);
    await db.call('PATCH', `/webhooks/${webhookId}`, { enabled: false });
    const before = (await rx.status()).total;
    const t0 = Date.now();
    await runStatements(db, batchedUpdates(BATCH_CHANGES), BATCH_WRITERS);
    const catchUpWriteMs = Date.now() - t0;
    committed += BATCH_CHANGES;
    await new Promise((resolve) => setTimeout(resolve, 500));
    const leaked = (await rx.status()).total - before;
    if (leaked !== 0) throw new Error(`${leaked} deliveries arrived while the webhook was disabled`);
    let enabledAt = 0;
    const catchUp = await measure('catch-up', BATCH_CHANGES, async () => {
      enabledAt = Date.now();
      await db.call('PATCH', `/webhooks/${webhookId}`, { enabled: true });
    });
    const catchUpPerS = perS(BATCH_CHANGES, catchUp.lastAtMs - catchUp.firstAtMs);
    Object.assign(result, {
      catchUpChanges: BATCH_CHANGES,
      catchUpCommitsPerSec: perS(BATCH_CHANGES, catchUpWriteMs),
      catchUpEnableToFirstMs: catchUp.firstAtMs - enabledAt,
      catchUpDeliveriesPerSec: catchUpPerS,
      catchUpEnableToLastPerSec: perS(BATCH_CHANGES, catchUp.lastAtMs - enabledAt),
    });
    progress(`  ${JSON.stringify(pick(result, 'catchUp'))}`);

    await baseline();
    const baselineRates = baselineRuns.map((f) => perS(f.count, f.lastAtMs - f.firstAtMs));
    const baselinePerS = Math.round(baselineRates.reduce((a, b) => a + b, 0) / baselineRates.length);
    Object.assign(result, {
      baselineRunsPerSec: baselineRates.join(' / '),
      baselinePerSec: baselinePerS,
      baselineP50Ms: median(baselineRuns.map((f) => f.p50Ms ?? 0)),
      baselineP99Ms: median(baselineRuns.map((f) => f.p99Ms ?? 0)),
      catchUpRatio: round2(catchUpPerS / baselinePerS),
      batchedRatio: round2((result['batchedDeliveriesPerSec'] as number) / baselinePerS),
      singleRatio: round2((result['singleDeliveriesPerSec'] as number) / baselinePerS),
    });

    // Everything committed arrived exactly once, per key in order.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const status = await rx.status();
    const phases = [single, batched, catchUp];
    const view = await db.call<{ stats: Record<string, number> }>('GET', `/webhooks/${webhookId}`);
    Object.assign(result, {
      eventsCommitted: committed,
      distinctEventsReceived: status.distinctEvents,
      duplicates: phases.reduce((n, f) => n + f.duplicates, 0),
      orderViolations: phases.reduce((n, f) => n + f.orderViolations, 0),
      serverStats: JSON.stringify(view.stats),
      loadAverage1mAtEnd: round2(os.loadavg()[0]!),
      note: `deliveries/s: first write to last receipt (live), first to last receipt (catch-up, baseline); latency: receipt - commit timestamp (svcdb), receipt - send (baseline); ${CONNECTIONS} connections and ${IN_FLIGHT} in flight on both sides; baseline: mean of ${baselineRuns.length} runs (before and after catch-up), bare undici Pool in its own process`,
    });
    if (status.distinctEvents !== committed) throw new Error(`${status.distinctEvents} distinct events received, ${committed} committed`);
    return result as BenchResult;
  } finally {
    await svc?.close();
    await server?.stop();
    await receiver?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

stopChildrenOnSignals(progress);

if (PARTS.includes('ledger')) printBenchResult(await ledgerCost());
if (PARTS.includes('http')) printBenchResult(await overHttp());
