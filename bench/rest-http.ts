/**
 * REST over HTTP with autocannon (issue 4): 50 connections, BENCH_DURATION_S seconds (default 10)
 * per case, 127.0.0.1, svcdb (`svcdb serve`, durable commits) and a fastify baseline each in
 * their own process, measured in the same run so the ratios hold on a noisy machine.
 *
 * Cases and goals: GET /tables/t/rows/{id} vs hello-world (≥ 50%); POST /query point select vs
 * hello-world (≥ 40%); POST /tables/t/rows single durable insert vs a fastify JSON POST (≥ 40%,
 * with p99); bulk insert of 10k rows per request (rows/s, goal ≥ 100k); NDJSON stream of
 * BENCH_STREAM_ROWS (default 1M) rows vs fastify streaming the same lines (rows/s).
 * Prints one JSON line on stdout; progress on stderr. A run with any non-2xx answer, error or
 * timeout fails (exit 1): requests/s of refusals measure nothing.
 */
import { load as sharedLoad, type Load, type RequestShape } from './lib/load.js';
import { printBenchResult, progress, round2 } from './lib/print-result.js';
import { startFastifyBaseline, startSvcdbProcess, type ChildServer } from './lib/processes.js';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = 50;
const TABLE_ROWS = Number(process.env.BENCH_TABLE_ROWS ?? 100_000);
const BULK_ROWS = 10_000;
const BULK_REQUESTS = Number(process.env.BENCH_BULK_REQUESTS ?? 20);
const STREAM_ROWS = Number(process.env.BENCH_STREAM_ROWS ?? 1_000_000);
const API_KEY = 'bench-key';
const AUTH = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };

/** autocannon with this bench's 50 connections for DURATION_S seconds (bench/lib/load.ts; any failure voids the run). */
const load = (name: string, url: string, request: RequestShape): Promise<Load> => sharedLoad(name, url, request, CONNECTIONS, DURATION_S);

const randomId = (): number => 1 + Math.floor(Math.random() * TABLE_ROWS);

async function sql(server: ChildServer, text: string): Promise<void> {
  const response = await fetch(`${server.url}/api/v1/query`, { method: 'POST', headers: AUTH, body: JSON.stringify({ sql: text, timeout_ms: 600_000 }) });
  if (!response.ok) throw new Error(`${text.slice(0, 60)}: ${response.status} ${await response.text()}`);
}

async function loadTable(server: ChildServer): Promise<void> {
  progress(`loading ${TABLE_ROWS} rows`);
  await sql(server, 'CREATE TABLE t (id BIGINT PRIMARY KEY, name TEXT NOT NULL, amount DOUBLE PRECISION NOT NULL)');
  await sql(server, 'CREATE TABLE ins (id BIGINT PRIMARY KEY, name TEXT NOT NULL, amount DOUBLE PRECISION NOT NULL)');
  await sql(server, 'CREATE TABLE bulk (id BIGINT PRIMARY KEY, name TEXT NOT NULL, amount DOUBLE PRECISION NOT NULL)');
  for (let start = 1; start <= TABLE_ROWS; start += 50_000) {
    const end = Math.min(start + 49_999, TABLE_ROWS);
    await sql(server, `INSERT INTO t SELECT g, 'name-' || g, g * 1.5 FROM generate_series(${start}, ${end}) g`);
  }
}

async function bulkInsert(server: ChildServer): Promise<number> {
  let next = 1;
  const started = performance.now();
  for (let r = 0; r < BULK_REQUESTS; r++) {
    const rows = Array.from({ length: BULK_ROWS }, () => {
      const id = next++;
      return { id, name: `name-${id}`, amount: id * 1.5 };
    });
    const response = await fetch(`${server.url}/api/v1/tables/bulk/rows`, { method: 'POST', headers: AUTH, body: JSON.stringify({ rows }) });
    if (response.status !== 201) throw new Error(`bulk insert: ${response.status} ${await response.text()}`);
    await response.arrayBuffer();
  }
  return Math.round((BULK_REQUESTS * BULK_ROWS) / ((performance.now() - started) / 1000));
}

/** Rows per second reading an NDJSON response to its end. */
async function streamRate(url: string, init: RequestInit, rows: number): Promise<number> {
  const started = performance.now();
  const response = await fetch(url, init);
  if (!response.ok) throw new Error(`stream: ${response.status}`);
  let lines = 0;
  for await (const chunk of response.body!) for (const byte of chunk as Uint8Array) if (byte === 10) lines += 1;
  if (lines !== rows) throw new Error(`stream: ${lines} lines, expected ${rows}`);
  return Math.round(rows / ((performance.now() - started) / 1000));
}

async function main(): Promise<void> {
  const baseline = await startFastifyBaseline();
  const svcdb = await startSvcdbProcess(API_KEY);
  try {
    await loadTable(svcdb);
    progress('fastify hello-world');
    const hello = await load('fastify hello-world', baseline.url, { method: 'GET', path: '/' });
    progress('fastify JSON POST');
    const echo = await load('fastify JSON POST', baseline.url, {
      method: 'POST',
      path: '/echo',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ row: { id: 1, name: 'name-1', amount: 1.5 } }),
    });
    progress('GET /tables/t/rows/{id}');
    const byId = await load('GET /tables/t/rows/{id}', svcdb.url, {
      method: 'GET',
      headers: AUTH,
      setupRequest: (req) => ({ ...req, path: `/api/v1/tables/t/rows/${randomId()}` }),
    });
    progress('POST /query point select');
    const point = await load('POST /query point select', svcdb.url, {
      method: 'POST',
      path: '/api/v1/query',
      headers: AUTH,
      setupRequest: (req) => ({ ...req, body: JSON.stringify({ sql: 'SELECT * FROM t WHERE id = $1', params: [randomId()] }) }),
    });
    progress('POST /tables/ins/rows single durable insert');
    let nextId = 1;
    const insert = await load('POST /tables/ins/rows', svcdb.url, {
      method: 'POST',
      path: '/api/v1/tables/ins/rows',
      headers: AUTH,
      setupRequest: (req) => {
        const id = nextId++;
        return { ...req, body: JSON.stringify({ row: { id, name: `name-${id}`, amount: id * 1.5 } }) };
      },
    });
    progress(`bulk insert ${BULK_REQUESTS} x ${BULK_ROWS} rows`);
    const bulkRowsPerSec = await bulkInsert(svcdb);
    progress(`NDJSON stream of ${STREAM_ROWS} rows`);
    const streamSql = `SELECT g AS id, 'name-' || g AS name, g * 1.5 AS amount FROM generate_series(1, ${STREAM_ROWS}) g`;
    const streamRowsPerSec = await streamRate(
      `${svcdb.url}/api/v1/query/stream`,
      { method: 'POST', headers: { ...AUTH, accept: 'application/x-ndjson' }, body: JSON.stringify({ sql: streamSql, timeout_ms: 600_000 }) },
      STREAM_ROWS,
    );
    const baselineStreamRowsPerSec = await streamRate(`${baseline.url}/ndjson?rows=${STREAM_ROWS}`, {}, STREAM_ROWS);
    printBenchResult({
      bench: 'rest-http',
      connections: CONNECTIONS,
      durationS: DURATION_S,
      helloReqPerSec: hello.reqPerSec,
      jsonPostReqPerSec: echo.reqPerSec,
      jsonPostP99Ms: echo.p99Ms,
      rowByIdReqPerSec: byId.reqPerSec,
      rowByIdRatio: round2(byId.reqPerSec / hello.reqPerSec),
      pointQueryReqPerSec: point.reqPerSec,
      pointQueryRatio: round2(point.reqPerSec / hello.reqPerSec),
      insertReqPerSec: insert.reqPerSec,
      insertP99Ms: insert.p99Ms,
      insertRatio: round2(insert.reqPerSec / echo.reqPerSec),
      bulkRowsPerSec,
      streamRowsPerSec,
      baselineStreamRowsPerSec,
      streamRatio: round2(streamRowsPerSec / baselineStreamRowsPerSec),
      failedRequests: 0, // a failed request voids the run (load() throws)
    });
  } finally {
    await svcdb.stop();
    await baseline.stop();
  }
}

await main().catch((error: unknown) => {
  progress(`rest-http failed: ${(error as Error).message}`);
  process.exitCode = 1;
});
