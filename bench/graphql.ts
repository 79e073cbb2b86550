/**
 * GraphQL over HTTP (issue 13's benchmarks) against REST on the same server, in the same run:
 * `svcdb serve` in its own process (durable commits), 127.0.0.1, 50 connections.
 *
 * Tables: t (BENCH_TABLE_ROWS rows, default 10,000), parents (BENCH_PARENTS, default 1,000) and
 * children (10 per parent, an index on parent_id, a foreign key: the array relation `children`).
 *
 * (a) lookup by primary key: `t_by_pk(id: $id)` (POST /graphql, variables) vs REST
 *     GET /api/v1/tables/t/rows/{id}; autocannon, BENCH_DURATION_S seconds (default 10) each,
 *     a random id per request over BENCH_TABLE_ROWS rows (default 10,000). Goal ≥ 0.7×.
 * (b) 100 parents × 10 children: one GraphQL query `parents(where: id range, order_by, limit 100)
 *     { id name children { id parent_id note } }` vs the same rows through two REST calls, parents
 *     then children by `parent_id IN (...)` (both POST /api/v1/query, whose answer has no count
 *     to compute, unlike GET rows with a filter). An operation is the whole pair, so this case runs
 *     its own loop (50 operations in flight over an undici Pool of 50 connections, the same on
 *     both sides) and times operations, not requests. A random window of 100 parents each time.
 * Every answer is checked (status; for GraphQL no `errors`; in (b) 100 parents and 1,000
 * children): a run with any failure is void (exit 1). BENCH_ROUNDS rounds (default 2) of both cases;
 * which side goes first alternates per case and per round; figures are the means over the rounds.
 * Besides ops/s and p99, each side reports the server's CPU time per operation (/proc; user +
 * system) and a CPU ratio (REST ms / GraphQL ms, above 1 GraphQL is cheaper): on a shared machine
 * ops/s follow the other jobs, CPU per operation far less.
 * Prints one JSON line on stdout; progress on stderr.
 */
import { readFileSync } from 'node:fs';
import autocannon, { type Request } from 'autocannon';
import { Pool } from 'undici';
import { printBenchResult, progress, round2 } from './lib/print-result.js';
import { startSvcdbProcess, stopChildrenOnSignals, type ChildServer } from './lib/processes.js';

/** The server's pid, for its CPU time (set once started). */
let serverPid = 0;

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = 50;
const TABLE_ROWS = Number(process.env.BENCH_TABLE_ROWS ?? 10_000);
const PARENTS = Number(process.env.BENCH_PARENTS ?? 1_000);
const CHILDREN_PER_PARENT = 10;
const WINDOW = 100;
/** Rounds of both cases; each round swaps which side goes first (figures: the mean over rounds). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const API_KEY = 'bench-key';
const AUTH = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };

interface Load {
  readonly opsPerSec: number;
  readonly p99Ms: number;
  /** The server process's CPU time (user + system) per operation: far less swayed by other jobs on the machine than ops/s. */
  readonly cpuMsPerOp: number;
}

/** CPU time (user + system, ms) the process `pid` has used so far, from /proc (Linux; 10 ms ticks). */
function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the command: state is field 3, utime field 14 and stime field 15 (1-based over the whole line).
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S;
}
const TICKS_PER_S = 100;

const round3 = (value: number): number => Math.round(value * 1000) / 1000;
const randomId = (): number => 1 + Math.floor(Math.random() * TABLE_ROWS);
const randomWindowStart = (): number => 1 + Math.floor(Math.random() * (PARENTS - WINDOW + 1));

async function sql(server: ChildServer, text: string): Promise<void> {
  const response = await fetch(`${server.url}/api/v1/query`, { method: 'POST', headers: AUTH, body: JSON.stringify({ sql: text, timeout_ms: 600_000 }) });
  if (!response.ok) throw new Error(`${text.slice(0, 60)}: ${response.status} ${await response.text()}`);
}

async function loadTables(server: ChildServer): Promise<void> {
  progress(`loading t (${TABLE_ROWS} rows), parents (${PARENTS}) and children (${PARENTS * CHILDREN_PER_PARENT})`);
  await sql(server, 'CREATE TABLE t (id BIGINT PRIMARY KEY, name TEXT NOT NULL, amount DOUBLE PRECISION NOT NULL)');
  await sql(server, 'CREATE TABLE parents (id BIGINT PRIMARY KEY, name TEXT NOT NULL)');
  await sql(server, 'CREATE TABLE children (id BIGINT PRIMARY KEY, parent_id BIGINT NOT NULL REFERENCES parents(id), note TEXT NOT NULL)');
  await sql(server, 'CREATE INDEX children_parent_id ON children (parent_id)');
  for (let start = 1; start <= TABLE_ROWS; start += 50_000) {
    await sql(server, `INSERT INTO t SELECT g, 'name-' || g, g * 1.5 FROM generate_series(${start}, ${Math.min(start + 49_999, TABLE_ROWS)}) g`);
  }
  await sql(server, `INSERT INTO parents SELECT g, 'parent-' || g FROM generate_series(1, ${PARENTS}) g`);
  const children = PARENTS * CHILDREN_PER_PARENT;
  for (let start = 1; start <= children; start += 50_000) {
    const end = Math.min(start + 49_999, children);
    await sql(server, `INSERT INTO children SELECT g, (g - 1) / ${CHILDREN_PER_PARENT} + 1, 'child-' || g FROM generate_series(${start}, ${end}) g`);
  }
}

/** autocannon at CONNECTIONS for DURATION_S; any non-2xx, error, timeout or `check` failure voids the run. */
async function cannon(name: string, url: string, request: Omit<Request, 'path'> & { path?: string }, check?: (body: string) => boolean): Promise<Load> {
  let bad = 0;
  const onResponse = check
    ? (_status: number, body: string): void => {
        if (!check(body)) bad++;
      }
    : undefined;
  const cpuBefore = cpuMsOf(serverPid);
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: DURATION_S,
    requests: [{ ...request, ...(onResponse ? { onResponse } : {}) } as Request],
  });
  const cpuMs = cpuMsOf(serverPid) - cpuBefore;
  const failed = result.non2xx + result.errors + result.timeouts + bad;
  if (failed > 0)
    throw new Error(
      `${name}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts, ${bad} wrong answers of ${result.requests.total}; the run is void`,
    );
  return { opsPerSec: Math.round(result.requests.average), p99Ms: result.latency.p99, cpuMsPerOp: round3(cpuMs / result.requests.total) };
}

/** GraphQL answers 200 with `errors` for a failed operation: a body with errors, or without the row, is a failure. */
const graphqlOk = (body: string): boolean => body.startsWith('{"data":{"t_by_pk":{"id":') && !body.includes('"errors"');

async function postJson(pool: Pool, path: string, body: unknown): Promise<unknown> {
  const res = await pool.request({ method: 'POST', path, headers: AUTH, body: JSON.stringify(body) });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${text.slice(0, 200)}`);
  return JSON.parse(text);
}

const NESTED_QUERY = `query Window($lo: bigint!, $hi: bigint!) {
  parents(where: {id: {_gte: $lo, _lt: $hi}}, order_by: {id: asc}, limit: ${WINDOW}) { id name children { id parent_id note } }
}`;

/** One operation of (b) through GraphQL: 100 parents with their children; checks the counts. */
async function nestedGraphql(pool: Pool): Promise<void> {
  const lo = randomWindowStart();
  const answer = (await postJson(pool, '/graphql', { query: NESTED_QUERY, variables: { lo: String(lo), hi: String(lo + WINDOW) } })) as {
    data?: { parents: { children: unknown[] }[] };
    errors?: unknown;
  };
  const parents = answer.data?.parents;
  if (answer.errors || !parents || parents.length !== WINDOW || parents.some((p) => p.children.length !== CHILDREN_PER_PARENT)) {
    throw new Error(`graphql nested: unexpected answer ${JSON.stringify(answer).slice(0, 300)}`);
  }
}

/** One operation of (b) through REST: the parents, then their children by parent_id IN (...); checks the counts. */
async function nestedRest(pool: Pool): Promise<void> {
  const lo = randomWindowStart();
  const parents = (await postJson(pool, '/api/v1/query', {
    sql: 'SELECT id, name FROM parents WHERE id >= $1 AND id < $2 ORDER BY id LIMIT 100',
    params: [lo, lo + WINDOW],
  })) as { data: { id: number | string }[] };
  if (parents.data.length !== WINDOW) throw new Error(`rest parents: ${parents.data.length} rows`);
  const ids = parents.data.map((row) => Number(row.id)).join(', ');
  const children = (await postJson(pool, '/api/v1/query', {
    sql: `SELECT id, parent_id, note FROM children WHERE parent_id IN (${ids}) ORDER BY parent_id, id`,
  })) as { data: unknown[] };
  if (children.data.length !== WINDOW * CHILDREN_PER_PARENT) throw new Error(`rest children: ${children.data.length} rows`);
}

/** `operation` run by CONNECTIONS loops for DURATION_S over one pool; operations/s and the p99 of an operation's time. */
async function loop(url: string, operation: (pool: Pool) => Promise<void>): Promise<Load> {
  const pool = new Pool(url, { connections: CONNECTIONS, pipelining: 1 });
  const latencies: number[] = [];
  const deadline = performance.now() + DURATION_S * 1000;
  const started = performance.now();
  const cpuBefore = cpuMsOf(serverPid);
  try {
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (performance.now() < deadline) {
          const at = performance.now();
          await operation(pool);
          latencies.push(performance.now() - at);
        }
      }),
    );
  } finally {
    await pool.close();
  }
  const elapsedS = (performance.now() - started) / 1000;
  const cpuMs = cpuMsOf(serverPid) - cpuBefore;
  latencies.sort((a, b) => a - b);
  return {
    opsPerSec: Math.round(latencies.length / elapsedS),
    p99Ms: Math.round(latencies[Math.ceil(latencies.length * 0.99) - 1]! * 10) / 10,
    cpuMsPerOp: round3(cpuMs / latencies.length),
  };
}

/** Runs both sides of a case, `first` first (the cases alternate it: the first side after other work pays for cold caches). */
async function pair(first: 'graphql' | 'rest', graphql: () => Promise<Load>, rest: () => Promise<Load>): Promise<{ graphql: Load; rest: Load }> {
  if (first === 'graphql') {
    const g = await graphql();
    return { graphql: g, rest: await rest() };
  }
  const r = await rest();
  return { graphql: await graphql(), rest: r };
}

/** The mean of each side's figures over the rounds. */
function meanOf(rounds: readonly { graphql: Load; rest: Load }[]): { graphql: Load; rest: Load } {
  const mean = (side: 'graphql' | 'rest', field: keyof Load): number => round2(rounds.reduce((sum, r) => sum + r[side][field], 0) / rounds.length);
  const side = (name: 'graphql' | 'rest'): Load => ({
    opsPerSec: Math.round(mean(name, 'opsPerSec')),
    p99Ms: mean(name, 'p99Ms'),
    cpuMsPerOp: round3(rounds.reduce((sum, r) => sum + r[name].cpuMsPerOp, 0) / rounds.length),
  });
  return { graphql: side('graphql'), rest: side('rest') };
}

async function main(): Promise<void> {
  stopChildrenOnSignals(progress);
  const svcdb = await startSvcdbProcess(API_KEY);
  serverPid = svcdb.pid;
  try {
    await loadTables(svcdb);
    const byPkBody = (): string =>
      JSON.stringify({ query: 'query ($id: bigint!) { t_by_pk(id: $id) { id name amount } }', variables: { id: String(randomId()) } });
    const byPk = async (): Promise<Load> => {
      progress('GraphQL t_by_pk');
      return cannon(
        'graphql t_by_pk',
        svcdb.url,
        { method: 'POST', path: '/graphql', headers: AUTH, setupRequest: (req) => ({ ...req, body: byPkBody() }) },
        graphqlOk,
      );
    };
    const rowById = async (): Promise<Load> => {
      progress('REST GET /tables/t/rows/{id}');
      return cannon('rest row by id', svcdb.url, {
        method: 'GET',
        headers: AUTH,
        setupRequest: (req) => ({ ...req, path: `/api/v1/tables/t/rows/${randomId()}` }),
      });
    };
    progress('warm-up (answers checked)');
    await warmUp(svcdb.url, byPkBody);
    const nestedGraphqlLoad = async (): Promise<Load> => {
      progress('GraphQL 100 parents x 10 children');
      return loop(svcdb.url, nestedGraphql);
    };
    const nestedRestLoad = async (): Promise<Load> => {
      progress('REST parents, then children IN (...)');
      return loop(svcdb.url, nestedRest);
    };
    const lookups: { graphql: Load; rest: Load }[] = [];
    const nesteds: { graphql: Load; rest: Load }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      progress(`round ${round + 1} of ${ROUNDS}`);
      lookups.push(await pair(round % 2 === 0 ? 'graphql' : 'rest', byPk, rowById));
      nesteds.push(await pair(round % 2 === 0 ? 'rest' : 'graphql', nestedGraphqlLoad, nestedRestLoad));
    }
    const lookup = meanOf(lookups);
    const nested = meanOf(nesteds);
    printBenchResult({
      bench: 'graphql',
      connections: CONNECTIONS,
      durationS: DURATION_S,
      tableRows: TABLE_ROWS,
      parents: PARENTS,
      childrenPerParent: CHILDREN_PER_PARENT,
      byPkReqPerSec: lookup.graphql.opsPerSec,
      byPkP99Ms: lookup.graphql.p99Ms,
      restRowByIdReqPerSec: lookup.rest.opsPerSec,
      restRowByIdP99Ms: lookup.rest.p99Ms,
      byPkRatio: round2(lookup.graphql.opsPerSec / lookup.rest.opsPerSec),
      byPkServerCpuMs: lookup.graphql.cpuMsPerOp,
      restRowByIdServerCpuMs: lookup.rest.cpuMsPerOp,
      byPkCpuRatio: round2(lookup.rest.cpuMsPerOp / lookup.graphql.cpuMsPerOp),
      nestedOpsPerSec: nested.graphql.opsPerSec,
      nestedP99Ms: nested.graphql.p99Ms,
      restTwoCallsOpsPerSec: nested.rest.opsPerSec,
      restTwoCallsP99Ms: nested.rest.p99Ms,
      nestedRatio: round2(nested.graphql.opsPerSec / nested.rest.opsPerSec),
      nestedServerCpuMs: nested.graphql.cpuMsPerOp,
      restTwoCallsServerCpuMs: nested.rest.cpuMsPerOp,
      nestedCpuRatio: round2(nested.rest.cpuMsPerOp / nested.graphql.cpuMsPerOp),
      rounds: ROUNDS,
      byPkRatioRounds: lookups.map((r) => round2(r.graphql.opsPerSec / r.rest.opsPerSec)).join(' / '),
      nestedRatioRounds: nesteds.map((r) => round2(r.graphql.opsPerSec / r.rest.opsPerSec)).join(' / '),
      failedRequests: 0,
    });
  } finally {
    await svcdb.stop();
  }
}

/** A few seconds of each case first, so neither side pays for the cold start (JIT, caches); the nested answers are checked here too. */
async function warmUp(url: string, byPkBody: () => string): Promise<void> {
  const pool = new Pool(url, { connections: 4 });
  try {
    for (let i = 0; i < 50; i++) await Promise.all([nestedGraphql(pool), nestedRest(pool)]);
  } finally {
    await pool.close();
  }
  await autocannon({
    url,
    connections: CONNECTIONS,
    duration: 3,
    requests: [{ method: 'POST', path: '/graphql', headers: AUTH, setupRequest: (req: Request) => ({ ...req, body: byPkBody() }) } as Request],
  });
  await autocannon({
    url,
    connections: CONNECTIONS,
    duration: 3,
    requests: [{ method: 'GET', headers: AUTH, setupRequest: (req: Request) => ({ ...req, path: `/api/v1/tables/t/rows/${randomId()}` }) } as Request],
  });
}

await main().catch((error: unknown) => {
  progress(`graphql failed: ${(error as Error).message}`);
  process.exitCode = 1;
});
