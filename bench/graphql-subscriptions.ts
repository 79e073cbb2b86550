/**
 * GraphQL live queries pushed from the log (issue 13's benchmarks): BENCH_GQL_SUBS_CLIENTS
 * (default 1,000) graphql-ws clients, one socket and one live query each,
 * `subscription { t(order_by: {id: desc}, limit: 10) { id at_ms note } }`, spread over
 * BENCH_GQL_SUBS_WORKERS processes (default 4; bench/lib/graphql-ws-clients.ts), against
 * `svcdb serve` in its own process (durable commits). The bench process is the writer: one
 * INSERT at a time (POST /api/v1/query), one every BENCH_GQL_SUBS_INTERVAL_MS (default 100 ms),
 * BENCH_GQL_SUBS_COMMITS of them (default 200) after 20 unmeasured ones. Each row carries `at_ms`,
 * the writer's clock just before its request; a client's latency for a row = its first result
 * holding the row − at_ms (so it includes the write request and the durable commit). Figures: P50/P99/max
 * over every (client, row) delivery, and per row the time until the LAST client had it
 * ("commit to every client"), P50/P99; missed = clients × rows − deliveries (a live query is
 * coalesced: a row that left the 10-row window before a client's next result is missed by it).
 *
 * Baseline in the same run: bench/lib/graphql-ws-broadcast.ts, a bare `ws` server in its own
 * process speaking just enough graphql-transport-ws for the same clients, broadcasting the very
 * payload the live query sends (the 10 newest rows) on each POST /publish of a row; the same
 * writer loop, client processes and figures, and each server's CPU time per write (/proc: on a
 * shared machine latencies follow the other jobs, CPU per write far less). Goal: P99 < 100 ms.
 *
 * Subscriptions are the branch gql-subs' WebSocket transport (protocols/graphql/ws/): the bench
 * checks that the server's schema has a Subscription type and that a graphql-ws client gets a
 * first result; if not, the svcdb side is not run and the JSON line says
 * `"skipped": "subscriptions not wired"` (the baseline is still measured). Progress on stderr.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';
import { printBenchResult, progress, round2 } from './lib/print-result.js';
import { forkBenchChild, startSvcdbProcess, stopChildrenOnSignals, type ChildServer } from './lib/processes.js';

const CLIENTS = Number(process.env.BENCH_GQL_SUBS_CLIENTS ?? 1000);
const WORKERS = Number(process.env.BENCH_GQL_SUBS_WORKERS ?? 4);
const COMMITS = Number(process.env.BENCH_GQL_SUBS_COMMITS ?? 200);
const INTERVAL_MS = Number(process.env.BENCH_GQL_SUBS_INTERVAL_MS ?? 100);
const WARMUP_COMMITS = 20;
const WINDOW = 10;
const SEED_ROWS = 10;
const SETTLE_TIMEOUT_MS = 30_000;
const READY_TIMEOUT_MS = 120_000;
const API_KEY = 'bench-key';
const AUTH = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
const QUERY = `subscription { t(order_by: {id: desc}, limit: ${WINDOW}) { id at_ms note } }`;

const now = (): number => performance.timeOrigin + performance.now();
const percentile = (sorted: Float64Array, p: number): number =>
  round2(sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? Number.NaN);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Worker {
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

interface Side {
  readonly deliveries: number;
  readonly missed: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly everyClientP50Ms: number;
  readonly everyClientP99Ms: number;
  readonly writeP99Ms: number;
  /** The server process's CPU time (user + system) per measured write, pushes to every client included. */
  readonly serverCpuMsPerWrite: number;
}

/** CPU time (user + system, ms) the process `pid` has used so far, from /proc (Linux; 10 ms ticks). */
function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** The next IPC message of `child` of this type (a `failed` one rejects). */
function nextMessage<T>(child: ChildProcess, type: string, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.off('message', on);
      reject(new Error(`no ${type} within ${timeoutMs} ms`));
    }, timeoutMs);
    const on = (message: { type: string; message?: string }): void => {
      if (message.type !== type && message.type !== 'failed') return;
      clearTimeout(timer);
      child.off('message', on);
      if (message.type === 'failed') reject(new Error(message.message));
      else resolve(message as T);
    };
    child.on('message', on);
  });
}

/** WORKERS processes holding CLIENTS subscriptions on `wsUrl`, each having had its first result. */
async function startClients(wsUrl: string): Promise<Worker[]> {
  const workers: Worker[] = [];
  for (let w = 0; w < WORKERS; w++) {
    const count = Math.floor(CLIENTS / WORKERS) + (w < CLIENTS % WORKERS ? 1 : 0);
    workers.push(forkBenchChild('graphql-ws-clients.js', [wsUrl, String(count), API_KEY, QUERY]));
  }
  try {
    await Promise.all(workers.map((w) => nextMessage(w.child, 'ready', READY_TIMEOUT_MS)));
  } catch (error) {
    await Promise.all(workers.map((w) => w.stop()));
    throw error;
  }
  return workers;
}

/** Writes rows `from`..`from + count - 1` one at a time, one every INTERVAL_MS; the write requests' times. */
async function write(writeRow: (id: number, atMs: number) => Promise<void>, from: number, count: number): Promise<number[]> {
  const times: number[] = [];
  const started = now();
  for (let i = 0; i < count; i++) {
    const due = started + i * INTERVAL_MS;
    if (due > now()) await sleep(due - now());
    const at = now();
    await writeRow(from + i, at);
    times.push(now() - at);
  }
  return times;
}

/** One side: clients subscribed, warm-up writes, measured writes, every delivery collected. */
async function measure(name: string, wsUrl: string, serverPid: number, writeRow: (id: number, atMs: number) => Promise<void>): Promise<Side> {
  progress(`${name}: ${CLIENTS} subscriptions over ${WORKERS} processes`);
  const workers = await startClients(wsUrl);
  const failures: string[] = [];
  for (const w of workers)
    w.child.on('message', (m: { type: string; message?: string }) => {
      if (m.type === 'failed') failures.push(m.message!);
    });
  try {
    progress(`${name}: ${WARMUP_COMMITS} warm-up writes, then ${COMMITS} measured, one every ${INTERVAL_MS} ms`);
    await write(writeRow, SEED_ROWS + 1, WARMUP_COMMITS);
    await sleep(1000);
    const fromId = SEED_ROWS + WARMUP_COMMITS + 1;
    for (const w of workers) w.child.send({ type: 'measure', fromId });
    const cpuBefore = cpuMsOf(serverPid);
    const writeTimes = await write(writeRow, fromId, COMMITS);
    const expected = CLIENTS * COMMITS;
    const deadline = Date.now() + SETTLE_TIMEOUT_MS;
    for (;;) {
      const counts = await Promise.all(
        workers.map(async (w) => {
          const reply = nextMessage<{ deliveries: number }>(w.child, 'status', 10_000);
          w.child.send({ type: 'status' });
          return (await reply).deliveries;
        }),
      );
      if (counts.reduce((a, b) => a + b, 0) >= expected || Date.now() > deadline) break;
      await sleep(200);
    }
    const cpuMs = cpuMsOf(serverPid) - cpuBefore;
    if (failures.length > 0) throw new Error(`${name}: ${failures[0]}`);
    const reports = await Promise.all(
      workers.map(async (w) => {
        const reply = nextMessage<{ deliveries: number; latencies: number[]; perId: [number, number, number][] }>(w.child, 'report', 60_000);
        w.child.send({ type: 'report' });
        return reply;
      }),
    );
    return { ...summarize(reports, writeTimes), serverCpuMsPerWrite: round2(cpuMs / COMMITS) };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
}

function summarize(
  reports: { deliveries: number; latencies: number[]; perId: [number, number, number][] }[],
  writeTimes: number[],
): Omit<Side, 'serverCpuMsPerWrite'> {
  const all = Float64Array.from(reports.flatMap((r) => r.latencies)).sort();
  const lastClient = new Map<number, { clients: number; maxMs: number }>();
  for (const report of reports) {
    for (const [id, clients, maxMs] of report.perId) {
      const entry = lastClient.get(id) ?? { clients: 0, maxMs: 0 };
      lastClient.set(id, { clients: entry.clients + clients, maxMs: Math.max(entry.maxMs, maxMs) });
    }
  }
  // Only rows every client saw have a "time to every client".
  const complete = Float64Array.from([...lastClient.values()].filter((e) => e.clients === CLIENTS).map((e) => e.maxMs)).sort();
  const deliveries = reports.reduce((sum, r) => sum + r.deliveries, 0);
  return {
    deliveries,
    missed: CLIENTS * COMMITS - deliveries,
    p50Ms: percentile(all, 0.5),
    p99Ms: percentile(all, 0.99),
    maxMs: round2(all.at(-1) ?? Number.NaN),
    everyClientP50Ms: percentile(complete, 0.5),
    everyClientP99Ms: percentile(complete, 0.99),
    writeP99Ms: percentile(Float64Array.from(writeTimes).sort(), 0.99),
  };
}

async function postJson(pool: Pool, path: string, body: unknown): Promise<unknown> {
  const res = await pool.request({ method: 'POST', path, headers: AUTH, body: JSON.stringify(body) });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** Why the svcdb side cannot run (null: it can): no Subscription type, or no first result over graphql-ws. */
async function notWired(server: ChildServer, pool: Pool): Promise<string | null> {
  const answer = (await postJson(pool, '/graphql', { query: '{ __schema { subscriptionType { name } } }' })) as {
    data?: { __schema: { subscriptionType: { name: string } | null } };
  };
  if (!answer.data?.__schema.subscriptionType) return 'subscriptions not wired';
  const probe = forkBenchChild('graphql-ws-clients.js', [server.url.replace(/^http/, 'ws') + '/graphql', '1', API_KEY, QUERY]);
  try {
    await nextMessage(probe.child, 'ready', 15_000);
    return null;
  } catch (error) {
    progress(`graphql-ws probe: ${(error as Error).message}`);
    return 'subscriptions not wired';
  } finally {
    await probe.stop();
  }
}

async function startBroadcast(seed: readonly object[]): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const broadcast = forkBenchChild('graphql-ws-broadcast.js', [String(WINDOW), JSON.stringify(seed)]);
  const [message] = (await once(broadcast.child, 'message')) as [{ type: string; port: number }];
  return { url: `http://127.0.0.1:${message.port}`, pid: broadcast.child.pid!, stop: broadcast.stop };
}

const rowOf = (id: number, atMs: number): { id: number; at_ms: number; note: string } => ({ id, at_ms: Math.round(atMs), note: `note-${id}` });

async function main(): Promise<void> {
  stopChildrenOnSignals(progress);
  const svcdb = await startSvcdbProcess(API_KEY);
  const pool = new Pool(svcdb.url, { connections: 2 });
  try {
    await postJson(pool, '/api/v1/query', { sql: 'CREATE TABLE t (id BIGINT PRIMARY KEY, at_ms BIGINT NOT NULL, note TEXT NOT NULL)' });
    const seed = Array.from({ length: SEED_ROWS }, (_, i) => rowOf(i + 1, now()));
    for (const row of seed) await postJson(pool, '/api/v1/query', { sql: 'INSERT INTO t VALUES ($1, $2, $3)', params: [row.id, row.at_ms, row.note] });
    const skipped = await notWired(svcdb, pool);
    let svcdbSide: Side | null = null;
    if (skipped === null) {
      svcdbSide = await measure('svcdb', svcdb.url.replace(/^http/, 'ws') + '/graphql', svcdb.pid, async (id, atMs) => {
        const row = rowOf(id, atMs);
        await postJson(pool, '/api/v1/query', { sql: 'INSERT INTO t VALUES ($1, $2, $3)', params: [row.id, row.at_ms, row.note] });
      });
    } else {
      progress(`svcdb side skipped: ${skipped}`);
    }
    const broadcast = await startBroadcast(seed);
    const broadcastPool = new Pool(broadcast.url, { connections: 2 });
    let baseline: Side;
    try {
      baseline = await measure('baseline', broadcast.url.replace(/^http/, 'ws') + '/graphql', broadcast.pid, async (id, atMs) => {
        await postJson(broadcastPool, '/publish', rowOf(id, atMs));
      });
    } finally {
      await broadcastPool.close();
      await broadcast.stop();
    }
    const fields = (prefix: string, side: Side | null): Record<string, number | null> =>
      Object.fromEntries(Object.entries(side ?? baselineShape).map(([k, v]) => [`${prefix}${k[0]!.toUpperCase()}${k.slice(1)}`, side ? v : null]));
    printBenchResult({
      bench: 'graphql-subscriptions',
      ...(skipped ? { skipped } : {}),
      clients: CLIENTS,
      workers: WORKERS,
      commits: COMMITS,
      intervalMs: INTERVAL_MS,
      ...fields('svcdb', svcdbSide),
      ...fields('baseline', baseline),
      p99Ratio: svcdbSide ? round2(svcdbSide.p99Ms / baseline.p99Ms) : null,
    });
  } finally {
    await pool.close();
    await svcdb.stop();
  }
}

/** The field names of a side, for the JSON line of a skipped one (nulls). */
const baselineShape: Side = {
  deliveries: 0,
  missed: 0,
  p50Ms: 0,
  p99Ms: 0,
  maxMs: 0,
  everyClientP50Ms: 0,
  everyClientP99Ms: 0,
  writeP99Ms: 0,
  serverCpuMsPerWrite: 0,
};

await main().catch((error: unknown) => {
  progress(`graphql-subscriptions failed: ${(error as Error).message}`);
  process.exitCode = 1;
});
