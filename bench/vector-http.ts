/**
 * Vector search over HTTP (issue 5) against a real `svcdb serve` child process (durable commits),
 * with raw hnswlib-node in the bench process as the baseline, in the same run so the ratios hold
 * on a noisy machine. Data: BENCH_VECTORS (default 100,000) embedding-like vectors of 128 dims (a
 * 16-dim latent plus noise, bench/lib/embeddings.ts, the same data as vector-hnsw), category
 * cat = i % 100; BENCH_QUERIES (default 200) queries with exact cosine top-10 ground truth.
 *
 * Loaded twice: a REST table `items` (hnsw m 16, ef_construction 64, cosine) through
 * POST /api/v1/vectors/upsert, one request at a time, and a Pinecone index `bench` through
 * {host}/vectors/upsert with BENCH_UPSERT_IN_FLIGHT (default 4) requests in flight (a bulk
 * loader's parallel batches), 1000 vectors per request: durable vectors/s against raw addPoint
 * (goal ≥ 80%).
 *
 * For ef_search 40, 100 and 200 the server is restarted on the same data dir with
 * SVC_VECTOR_EF_SEARCH=ef (the Pinecone /query has no ef field; REST also sends ef_search), and
 * each path (POST /api/v1/vectors/search, POST {host}/query) is measured for recall@10, QPS one
 * request at a time and QPS with BENCH_CONCURRENCY (default 8) requests in flight, each measurement
 * lasting at least BENCH_MIN_MS (default 2000) ms, and throughput under load (autocannon,
 * BENCH_LOAD_CONNECTIONS, default 16, for BENCH_LOAD_S, default 5, seconds); raw is searchKnn, single thread, sequential,
 * at the same ef (goal: recall ≥ 0.95 at ≥ 50% of raw QPS). At ef 40 also filtered search at 10%
 * selectivity (cat < 10) against the filtered ground truth (goal: recall ≥ 0.95); raw uses
 * searchKnn's filter callback. Restart times are reported (stop, start to /api/v1/ready, the first
 * query of each path after it). Rates under 100/s keep 3 significant digits, ratios under 0.1 two.
 * Prints one JSON line on stdout; progress on stderr.
 */
import autocannon from 'autocannon';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import nodePath from 'node:path';
import { DIMS, embeddings, exactTopK, hnswlib, K, recallOf } from './lib/embeddings.js';
import { printBenchResult, progress, round2 } from './lib/print-result.js';
import { startSvcdbProcess, stopAllProcesses, type SvcdbProcess } from './lib/processes.js';

const N = Number(process.env.BENCH_VECTORS ?? 100_000);
const Q = Number(process.env.BENCH_QUERIES ?? 200);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const MIN_MS = Number(process.env.BENCH_MIN_MS ?? 2000);
const LOAD_CONNECTIONS = Number(process.env.BENCH_LOAD_CONNECTIONS ?? 16);
const LOAD_S = Number(process.env.BENCH_LOAD_S ?? 5);
/** Upsert requests in flight for the Pinecone load (a bulk loader's parallel batches); REST loads one at a time. */
const UPSERT_IN_FLIGHT = Number(process.env.BENCH_UPSERT_IN_FLIGHT ?? 4);
const EFS = [40, 100, 200] as const;
const BATCH = 1000;
const M = 16;
const EF_CONSTRUCTION = 64;
const WARMUP_QUERIES = 20;
const API_KEY = 'bench-key';
const VECTOR_KEY = 'bench-vector-key';
const REST_HEADERS = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
const PINECONE_HEADERS = { 'api-key': VECTOR_KEY, 'content-type': 'application/json' };
const REST_FILTER = "(metadata->>'cat')::int < 10";
const PINECONE_FILTER = { cat: { $lt: 10 } };

const category = (i: number): number => i % 100;
const elapsedS = (since: number): number => (performance.now() - since) / 1000;
/** A rate: whole numbers from 100 up, 3 significant digits below (a path doing 1.4 q/s must not print 1). */
const rate = (perS: number): number => (perS >= 100 ? Math.round(perS) : Number(perS.toPrecision(3)));
/** A ratio: 2 decimals from 0.1 up, 2 significant digits below (0.00018, not 0). */
const ratio = (a: number, b: number): number => (a / b >= 0.1 ? round2(a / b) : Number((a / b).toPrecision(2)));

/** Set on SIGTERM/SIGINT: no new request starts, so the server's graceful shutdown is not kept busy. */
let interrupted = false;

async function post<T>(url: string, headers: Record<string, string>, body: string): Promise<T> {
  if (interrupted) throw new Error('interrupted');
  const response = await fetch(url, { method: 'POST', headers, body });
  const text = await response.text();
  if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${text.slice(0, 500)}`);
  return JSON.parse(text) as T;
}

async function get<T>(url: string, headers: Record<string, string>): Promise<T> {
  const response = await fetch(url, { headers });
  const text = await response.text();
  if (!response.ok) throw new Error(`GET ${url}: ${response.status} ${text.slice(0, 500)}`);
  return JSON.parse(text) as T;
}

interface Measured {
  readonly qps: number;
  /** The first Q answers (one per query, in query order). */
  readonly got: number[][];
}

/**
 * Runs query n % Q for n = 0, 1, ... with `concurrency` in flight, until every query ran once and
 * MIN_MS passed; QPS over all requests. `search` answers row numbers.
 */
async function measure(search: (q: number) => Promise<number[]>, concurrency: number): Promise<Measured> {
  const got: number[][] = new Array(Q);
  let next = 0;
  let done = 0;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    for (;;) {
      const n = next;
      if (n >= Q && performance.now() - started >= MIN_MS) return;
      next += 1;
      const ids = await search(n % Q);
      if (n < Q) got[n] = ids;
      done += 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { qps: rate(done / elapsedS(started)), got };
}

/**
 * Throughput under load: autocannon (the load generator of bench/rest-http.ts, far lighter per
 * request than fetch, which on this 2-core machine takes as much CPU as the server) with
 * LOAD_CONNECTIONS connections for LOAD_S seconds, the bodies cycling through the queries.
 * Answers are not checked here (recall is measured by `measure`); any non-2xx fails the bench.
 */
async function measureLoad(url: string, headers: Record<string, string>, bodies: readonly string[]): Promise<number> {
  let next = 0;
  const request = {
    method: 'POST' as const,
    path: new URL(url).pathname,
    headers,
    setupRequest: (req: object) => ({ ...req, body: bodies[next++ % bodies.length] }),
  };
  const result = await autocannon({ url: new URL(url).origin, connections: LOAD_CONNECTIONS, duration: LOAD_S, requests: [request as autocannon.Request] });
  if (result.non2xx + result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers and ${result.errors} errors under load`);
  return rate(result.requests.average);
}

/** The same for a synchronous search (raw hnswlib), one at a time. */
function measureSync(search: (q: number) => number[]): Measured {
  const got: number[][] = [];
  let n = 0;
  const started = performance.now();
  while (n < Q || performance.now() - started < MIN_MS) {
    const ids = search(n % Q);
    if (n < Q) got.push(ids);
    n += 1;
  }
  return { qps: rate(n / elapsedS(started)), got };
}

function checkAnswer(ids: number[], what: string): number[] {
  if (ids.length !== K || ids.some((id) => !Number.isInteger(id) || id < 0 || id >= N)) throw new Error(`${what}: unexpected answer ${JSON.stringify(ids)}`);
  return ids;
}

// ---- data, ground truth, raw baseline -------------------------------------------------------

const benchStarted = performance.now();
progress(`generating ${N} + ${Q} vectors`);
const data = embeddings(N + Q);
const rows = data.slice(0, N);
const queries = data.slice(N);
const vectorJson = (v: Float32Array): string => JSON.stringify(Array.from(v));
const queryJson = queries.map(vectorJson);

progress(`ground truth for ${Q} queries over ${N} vectors`);
const truth = queries.map((q) => exactTopK(rows, q, () => true));
const truthFiltered = queries.map((q) => exactTopK(rows, q, (i) => category(i) < 10));

const result: Record<string, number> = {
  vectors: N,
  dims: DIMS,
  queries: Q,
  concurrency: CONCURRENCY,
  min_ms: MIN_MS,
  load_connections: LOAD_CONNECTIONS,
  upsert_in_flight_pinecone: UPSERT_IN_FLIGHT,
};

progress('raw addPoint');
const raw = new hnswlib.HierarchicalNSW('cosine', DIMS);
raw.initIndex({ maxElements: N, m: M, efConstruction: EF_CONSTRUCTION, randomSeed: 100 });
let t0 = performance.now();
for (let i = 0; i < N; i++) raw.addPoint(Array.from(rows[i]!), i);
const rawAddPerS = Math.round(N / elapsedS(t0));
result.raw_add_vectors_per_s = rawAddPerS;

const rawQueries = queries.map((q) => Array.from(q));
for (const ef of EFS) {
  raw.setEf(ef);
  const measured = measureSync((q) => raw.searchKnn(rawQueries[q]!, K).neighbors);
  result[`raw_qps_ef${ef}`] = measured.qps;
  result[`raw_recall_ef${ef}`] = recallOf(measured.got, truth);
  progress(`raw ef ${ef}: ${measured.qps} qps, recall ${result[`raw_recall_ef${ef}`]}`);
}
raw.setEf(40);
{
  const measured = measureSync((q) => raw.searchKnn(rawQueries[q]!, K, (label) => category(label) < 10).neighbors);
  result.raw_filtered10_qps_ef40 = measured.qps;
  result.raw_filtered10_recall_ef40 = recallOf(measured.got, truthFiltered);
  progress(`raw filtered ef 40: ${measured.qps} qps, recall ${result.raw_filtered10_recall_ef40}`);
}

// ---- the server ---------------------------------------------------------------------------

const serverEnv = (ef: number): Record<string, string> => ({ SVC_VECTOR_API_KEY: VECTOR_KEY, SVC_LOG_LEVEL: 'warn', SVC_VECTOR_EF_SEARCH: String(ef) });

interface Paths {
  readonly rest: (q: number, ef: number, filtered?: boolean) => Promise<number[]>;
  readonly pinecone: (q: number, filtered?: boolean) => Promise<number[]>;
  /** Request URL, headers and the body of every query, for the load generator. */
  readonly load: Record<'rest' | 'pinecone', (ef: number, filtered: boolean) => { url: string; headers: Record<string, string>; bodies: string[] }>;
}

const restBody = (q: number, ef: number, filtered: boolean): string =>
  `{"index":"items_hnsw","top_k":${K},"ef_search":${ef}${filtered ? `,"filter":${JSON.stringify(REST_FILTER)}` : ''},"vector":${queryJson[q]}}`;
const pineconeBody = (q: number, filtered: boolean): string =>
  `{"topK":${K}${filtered ? `,"filter":${JSON.stringify(PINECONE_FILTER)}` : ''},"vector":${queryJson[q]}}`;

async function pineconeHost(server: SvcdbProcess): Promise<string> {
  const model = await get<{ host: string }>(`${server.url}/indexes/bench`, PINECONE_HEADERS);
  return model.host;
}

function paths(server: SvcdbProcess, host: string): Paths {
  return {
    rest: async (q, ef, filtered = false) => {
      const answer = await post<{ results: { id: string }[] }>(`${server.url}/api/v1/vectors/search`, REST_HEADERS, restBody(q, ef, filtered));
      return checkAnswer(
        answer.results.map((r) => Number(r.id)),
        'REST search',
      );
    },
    pinecone: async (q, filtered = false) => {
      const answer = await post<{ matches: { id: string }[] }>(`${host}/query`, PINECONE_HEADERS, pineconeBody(q, filtered));
      return checkAnswer(
        answer.matches.map((m) => Number(m.id)),
        'Pinecone query',
      );
    },
    load: {
      rest: (ef, filtered) => ({
        url: `${server.url}/api/v1/vectors/search`,
        headers: REST_HEADERS,
        bodies: queries.map((_v, q) => restBody(q, ef, filtered)),
      }),
      pinecone: (_ef, filtered) => ({ url: `${host}/query`, headers: PINECONE_HEADERS, bodies: queries.map((_v, q) => pineconeBody(q, filtered)) }),
    },
  };
}

async function sql(server: SvcdbProcess, text: string): Promise<void> {
  await post(`${server.url}/api/v1/query`, REST_HEADERS, JSON.stringify({ sql: text, timeout_ms: 600_000 }));
}

/** Loads rows through `send`, one request per BATCH, `inFlight` requests at a time; vectors/s. */
async function upsertAll(what: string, inFlight: number, send: (from: number, to: number) => Promise<void>): Promise<number> {
  progress(`${what}: upserting ${N} vectors, ${inFlight} request(s) in flight`);
  const started = performance.now();
  let next = 0;
  let done = 0;
  const worker = async (): Promise<void> => {
    while (next < N) {
      const at = next;
      next += BATCH;
      await send(at, Math.min(at + BATCH, N));
      done += 1;
      if (done % 20 === 0) progress(`${what}: ${done * BATCH} (${Math.round((done * BATCH) / elapsedS(started))}/s)`);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return Math.round(N / elapsedS(started));
}

const dataDir = await mkdtemp(nodePath.join(os.tmpdir(), 'svcdb-bench-vec-http-'));
let server: SvcdbProcess | undefined;
// Killed (SIGTERM, Ctrl-C): stop the server and remove the data dir (hundreds of MB) before exiting.
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    progress(`${signal}: stopping the server and removing ${dataDir}`);
    interrupted = true;
    void (async () => {
      await stopAllProcesses();
      await rm(dataDir, { recursive: true, force: true });
      process.exit(signal === 'SIGTERM' ? 143 : 130);
    })();
  });
}
try {
  server = await startSvcdbProcess(API_KEY, serverEnv(40), { dataDir, keepDataDir: true });
  const first = server;

  await sql(first, `CREATE TABLE items (id TEXT PRIMARY KEY, embedding VECTOR(${DIMS}), metadata JSONB)`);
  await sql(first, `CREATE INDEX items_hnsw ON items USING hnsw (embedding vector_cosine_ops) WITH (m = ${M}, ef_construction = ${EF_CONSTRUCTION})`);
  const restUpsert = await upsertAll('REST', 1, async (from, to) => {
    const vectors = rows.slice(from, to).map((v, j) => `{"id":"${from + j}","vector":${vectorJson(v)},"metadata":{"cat":${category(from + j)}}}`);
    const answer = await post<{ upserted_count: number }>(
      `${first.url}/api/v1/vectors/upsert`,
      REST_HEADERS,
      `{"table":"items","vectors":[${vectors.join(',')}]}`,
    );
    if (answer.upserted_count !== to - from) throw new Error(`REST upsert: upserted_count ${answer.upserted_count}, expected ${to - from}`);
  });
  result.rest_upsert_vectors_per_s = restUpsert;

  const created = await post<{ host: string }>(
    `${first.url}/indexes`,
    PINECONE_HEADERS,
    JSON.stringify({ name: 'bench', dimension: DIMS, metric: 'cosine', spec: { serverless: { cloud: 'aws', region: 'us-east-1' } } }),
  );
  const host = created.host;
  progress(`Pinecone index host ${host}`);
  const pineconeUpsert = await upsertAll('Pinecone', UPSERT_IN_FLIGHT, async (from, to) => {
    const vectors = rows.slice(from, to).map((v, j) => `{"id":"${from + j}","values":${vectorJson(v)},"metadata":{"cat":${category(from + j)}}}`);
    const answer = await post<{ upsertedCount: number }>(`${host}/vectors/upsert`, PINECONE_HEADERS, `{"namespace":"","vectors":[${vectors.join(',')}]}`);
    if (answer.upsertedCount !== to - from) throw new Error(`Pinecone upsert: upsertedCount ${answer.upsertedCount}, expected ${to - from}`);
  });
  result.pinecone_upsert_vectors_per_s = pineconeUpsert;
  result.rest_upsert_ratio = ratio(restUpsert, rawAddPerS);
  result.pinecone_upsert_ratio = ratio(pineconeUpsert, rawAddPerS);

  for (const ef of EFS) {
    progress(`restarting with SVC_VECTOR_EF_SEARCH=${ef}`);
    t0 = performance.now();
    await server.stop();
    server = undefined;
    result[`stop_ms_ef${ef}`] = Math.round(performance.now() - t0);
    t0 = performance.now();
    server = await startSvcdbProcess(API_KEY, serverEnv(ef), { dataDir, keepDataDir: true, readyTimeoutMs: 600_000 });
    result[`start_ms_ef${ef}`] = Math.round(performance.now() - t0);
    const path = paths(server, await pineconeHost(server));
    // The first query after ready shows what a restart left undone (an index loaded lazily, caches cold).
    for (const [name, search] of [
      ['rest', (q: number) => path.rest(q, ef)],
      ['pinecone', (q: number) => path.pinecone(q)],
    ] as const) {
      t0 = performance.now();
      await search(0);
      result[`${name}_first_query_ms_ef${ef}`] = Math.round(performance.now() - t0);
      for (let q = 1; q < Math.min(WARMUP_QUERIES, Q); q++) await search(q);
    }
    progress(
      `ef ${ef}: stop ${result[`stop_ms_ef${ef}`]} ms, start to ready ${result[`start_ms_ef${ef}`]} ms, first query REST ${result[`rest_first_query_ms_ef${ef}`]} ms, Pinecone ${result[`pinecone_first_query_ms_ef${ef}`]} ms`,
    );

    const rawQps = result[`raw_qps_ef${ef}`]!;
    for (const [name, search] of [
      ['rest', (q: number) => path.rest(q, ef)],
      ['pinecone', (q: number) => path.pinecone(q)],
    ] as const) {
      const sequential = await measure(search, 1);
      const concurrent = await measure(search, CONCURRENCY);
      result[`${name}_recall_ef${ef}`] = recallOf(sequential.got, truth);
      result[`${name}_recall_conc_ef${ef}`] = recallOf(concurrent.got, truth);
      result[`${name}_qps_seq_ef${ef}`] = sequential.qps;
      result[`${name}_qps_conc_ef${ef}`] = concurrent.qps;
      result[`${name}_qps_seq_ratio_ef${ef}`] = ratio(sequential.qps, rawQps);
      result[`${name}_qps_conc_ratio_ef${ef}`] = ratio(concurrent.qps, rawQps);
      const load = path.load[name](ef, false);
      const loaded = await measureLoad(load.url, load.headers, load.bodies);
      result[`${name}_qps_load_ef${ef}`] = loaded;
      result[`${name}_qps_load_ratio_ef${ef}`] = ratio(loaded, rawQps);
      progress(
        `${name} ef ${ef}: recall ${result[`${name}_recall_ef${ef}`]}, ${sequential.qps} qps sequential, ${concurrent.qps} qps with ${CONCURRENCY} in flight, ${loaded} under load (raw ${rawQps})`,
      );
    }

    if (ef === 40) {
      const rawFilteredQps = result.raw_filtered10_qps_ef40!;
      for (const [name, search] of [
        ['rest', (q: number) => path.rest(q, ef, true)],
        ['pinecone', (q: number) => path.pinecone(q, true)],
      ] as const) {
        const sequential = await measure(search, 1);
        const concurrent = await measure(search, CONCURRENCY);
        result[`${name}_filtered10_recall_ef40`] = recallOf(sequential.got, truthFiltered);
        result[`${name}_filtered10_qps_seq_ef40`] = sequential.qps;
        result[`${name}_filtered10_qps_conc_ef40`] = concurrent.qps;
        result[`${name}_filtered10_qps_seq_ratio_ef40`] = ratio(sequential.qps, rawFilteredQps);
        result[`${name}_filtered10_qps_conc_ratio_ef40`] = ratio(concurrent.qps, rawFilteredQps);
        const load = path.load[name](ef, true);
        const loaded = await measureLoad(load.url, load.headers, load.bodies);
        result[`${name}_filtered10_qps_load_ef40`] = loaded;
        result[`${name}_filtered10_qps_load_ratio_ef40`] = ratio(loaded, rawFilteredQps);
        progress(
          `${name} filtered (10%) ef 40: recall ${result[`${name}_filtered10_recall_ef40`]}, ${sequential.qps} qps sequential, ${concurrent.qps} qps with ${CONCURRENCY} in flight, ${loaded} under load (raw ${rawFilteredQps})`,
        );
      }
    }
  }
  result.total_s = Math.round(elapsedS(benchStarted));
  printBenchResult({ bench: 'vector-http', ...result });
} finally {
  await server?.stop();
  await rm(dataDir, { recursive: true, force: true });
}
