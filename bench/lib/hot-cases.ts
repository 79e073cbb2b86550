/**
 * The cases of bench/hot-paths.ts. Each writes its figures into `context.result` (flat keys,
 * `<case>_<what>`), svcdb and the fastify + pg + PostgreSQL baseline measured back to back.
 */
import { PGlite } from '@electric-sql/pglite';
import { load, ratioOf, rssMiB, slope, type Load, type RequestShape } from './load.js';
import { progress } from './print-result.js';
import { httpSql, svcdbTarget, type MixedPick, type Target } from './hot-targets.js';
import type { CaseProfile, SvcdbHost } from './svcdb-host.js';
import { replayFigures, vectorFigures } from './hot-children.js';

export const CASE_NAMES = ['get_row', 'point_select', 'insert_row', 'insert_sql', 'bulk_insert', 'values_1000', 'mixed', 'memory', 'replay', 'vector'] as const;
export type CaseName = (typeof CASE_NAMES)[number];

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
/** Seconds of load before each measured one (both sides alike): not measured. */
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 2);
const CONNECTIONS = 50;
const MIXED_CONNECTIONS = 32;
const BULK_ROWS = 10_000;
const BULK_REQUESTS = Number(process.env.BENCH_BULK_REQUESTS ?? 20);
const VALUES_ROWS = 1000;
const VALUES_STATEMENTS = Number(process.env.BENCH_VALUES_STATEMENTS ?? 20);
/**
 * Requests (statements) of the same shape sent before the measured ones, on every side alike and
 * not measured, as the load cases' BENCH_WARMUP_S: the first 10,000-row request of a server compiles
 * the bulk path (200–800 ms on this VM), one request in twenty-one.
 */
const BULK_WARMUP_REQUESTS = Number(process.env.BENCH_BULK_WARMUP ?? 2);
const VALUES_WARMUP_STATEMENTS = Number(process.env.BENCH_VALUES_WARMUP ?? 2);
const MEMORY_S = Number(process.env.BENCH_MEMORY_S ?? 600);
const MEMORY_SAMPLE_S = Number(process.env.BENCH_MEMORY_SAMPLE_S ?? Math.max(1, Math.round(MEMORY_S / 30)));

export interface CaseContext {
  /** null when only standalone cases run. */
  readonly svcdb: SvcdbHost | null;
  /** null when PostgreSQL is skipped. */
  readonly pg: Target | null;
  readonly fastifyUrl: string | null;
  readonly tableRows: number;
  readonly mixedRows: number;
  readonly result: Record<string, string | number | boolean | null>;
  onProfile(name: string, profile: CaseProfile): Promise<void>;
}

/** Ids handed to inserts, per server, so no two inserts of a run collide (ins, bulk and s). */
const nextIds = new Map<string, number>();
function takeId(key: string, start = 1): number {
  const id = nextIds.get(key) ?? start;
  nextIds.set(key, id + 1);
  return id;
}

/** Baselines measured once per run and shared by the cases that compare with them. */
const baselineCache = new Map<string, Promise<Load>>();
function fastifyBaseline(context: CaseContext, which: 'hello' | 'echo'): Promise<Load> | null {
  if (context.fastifyUrl === null) return null;
  const url = context.fastifyUrl;
  if (!baselineCache.has(which)) {
    progress(`fastify ${which === 'hello' ? 'hello world' : 'JSON POST'}`);
    const request: RequestShape =
      which === 'hello'
        ? { method: 'GET', path: '/' }
        : {
            method: 'POST',
            path: '/echo',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ row: { id: 1, name: 'name-1', amount: 1.5 } }),
          };
    baselineCache.set(which, load(`fastify ${which}`, url, request, CONNECTIONS, DURATION_S, WARMUP_S));
  }
  return baselineCache.get(which)!;
}

/** Runs `svcdbPart` (profiled in profile mode) and `pgPart`, in the given order. */
async function both<T>(
  context: CaseContext,
  name: string,
  pgFirst: boolean,
  svcdbPart: (t: Target) => Promise<T>,
  pgPart: (t: Target) => Promise<T>,
): Promise<[T, T | null]> {
  const runSvcdb = async (): Promise<T> => {
    const { value, profile } = await context.svcdb!.forCase(name, (server) => svcdbPart(svcdbTarget(server.url)));
    if (profile) await context.onProfile(name, profile);
    return value;
  };
  const runPg = async (): Promise<T | null> => (context.pg ? pgPart(context.pg) : null);
  if (pgFirst) {
    const pg = await runPg();
    return [await runSvcdb(), pg];
  }
  const svcdb = await runSvcdb();
  return [svcdb, await runPg()];
}

function record(context: CaseContext, name: string, svcdb: Load, pg: Load | null, baseline: Load | null, baselineName: string): void {
  const r = context.result;
  r[`${name}_svcdb_rps`] = svcdb.reqPerSec;
  r[`${name}_svcdb_p99_ms`] = svcdb.p99Ms;
  r[`${name}_pg_rps`] = pg?.reqPerSec ?? null;
  r[`${name}_pg_p99_ms`] = pg?.p99Ms ?? null;
  r[`${name}_vs_pg`] = ratioOf(svcdb.reqPerSec, pg?.reqPerSec);
  if (baselineName !== '') {
    r[`${name}_${baselineName}_rps`] = baseline?.reqPerSec ?? null;
    r[`${name}_vs_${baselineName}`] = ratioOf(svcdb.reqPerSec, baseline?.reqPerSec);
  }
  progress(
    `${name}: svcdb ${svcdb.reqPerSec} req/s (p99 ${svcdb.p99Ms} ms), fastify+pg ${pg?.reqPerSec ?? '-'} req/s (p99 ${pg?.p99Ms ?? '-'} ms), ratio ${r[`${name}_vs_pg`]}` +
      (baselineName === '' ? '' : `; ${baselineName} ${baseline?.reqPerSec ?? '-'} req/s, ratio ${r[`${name}_vs_${baselineName}`]}`),
  );
}

async function requestCase(
  context: CaseContext,
  name: CaseName,
  pgFirst: boolean,
  shape: (t: Target) => RequestShape,
  baselineName: 'hello' | 'echo',
): Promise<void> {
  const baseline = await fastifyBaseline(context, baselineName);
  const measure = (t: Target): Promise<Load> => load(`${name} ${t.name}`, t.url, shape(t), CONNECTIONS, DURATION_S, WARMUP_S);
  const [svcdb, pg] = await both(context, name, pgFirst, measure, measure);
  record(context, name, svcdb, pg, baseline, baselineName);
}

async function bulkCase(context: CaseContext, pgFirst: boolean): Promise<void> {
  const measure = async (t: Target): Promise<Load> => {
    // The bodies are made before the clock starts (as values_1000's statements): the client's
    // 10,000 objects and JSON.stringify per request are not the server's work.
    const requests = Array.from({ length: BULK_WARMUP_REQUESTS + BULK_REQUESTS }, () =>
      t.bulk(
        'bulk',
        Array.from({ length: BULK_ROWS }, () => {
          const id = takeId(`${t.name}:bulk`);
          return { id, name: `name-${id}`, amount: id * 1.5 };
        }),
      ),
    );
    const send = async (request: (typeof requests)[number]): Promise<void> => {
      const response = await fetch(`${t.url}${request.path}`, { method: 'POST', headers: request.headers, body: request.body });
      if (response.status !== 201) throw new Error(`bulk insert ${t.name}: ${response.status} ${await response.text()}`);
      await response.arrayBuffer();
    };
    for (const request of requests.slice(0, BULK_WARMUP_REQUESTS)) await send(request);
    const started = performance.now();
    for (const request of requests.slice(BULK_WARMUP_REQUESTS)) await send(request);
    const rowsPerSec = Math.round((BULK_REQUESTS * BULK_ROWS) / ((performance.now() - started) / 1000));
    return { reqPerSec: rowsPerSec, p50Ms: 0, p99Ms: 0, requests: BULK_REQUESTS, timeouts: 0 };
  };
  const [svcdb, pg] = await both(context, 'bulk_insert', pgFirst, measure, measure);
  context.result.bulk_insert_svcdb_rows_per_s = svcdb.reqPerSec;
  context.result.bulk_insert_pg_rows_per_s = pg?.reqPerSec ?? null;
  context.result.bulk_insert_vs_pg = ratioOf(svcdb.reqPerSec, pg?.reqPerSec);
  progress(`bulk_insert: svcdb ${svcdb.reqPerSec} rows/s, fastify+pg ${pg?.reqPerSec ?? '-'} rows/s (goal >= 250,000 rows/s)`);
}

function valuesStatement(statement: number): string {
  const values: string[] = [];
  for (let i = 0; i < VALUES_ROWS; i++) {
    const id = statement * VALUES_ROWS + i + 1;
    values.push(`(${id}, 'name-${id}', ${id * 1.5})`);
  }
  return `INSERT INTO v VALUES ${values.join(', ')}`;
}

/** 1,000-row VALUES over POST /api/v1/query (durable) vs the same statements on PGlite in this process (in memory). */
async function valuesCase(context: CaseContext, pgFirst: boolean): Promise<void> {
  const statements = Array.from({ length: VALUES_STATEMENTS }, (_, i) => valuesStatement(i));
  // Not measured, on both sides alike. Ids at or below 0, under the measured ones: those still go
  // in above every stored key, as into the empty table (ids above them would make every measured
  // key one to look up).
  const warmup = Array.from({ length: VALUES_WARMUP_STATEMENTS }, (_, i) => valuesStatement(-(i + 1)));
  const overSvcdb = async (): Promise<number> => {
    const { value, profile } = await context.svcdb!.forCase('values_1000', async (server) => {
      const target = svcdbTarget(server.url);
      await httpSql(target, 'DELETE FROM v');
      for (const sql of warmup) await httpSql(target, sql);
      const started = performance.now();
      for (const sql of statements) await httpSql(target, sql);
      return performance.now() - started;
    });
    if (profile) await context.onProfile('values_1000', profile);
    return value;
  };
  const onPglite = async (): Promise<number> => {
    const db = new PGlite();
    try {
      await db.exec('CREATE TABLE v (id BIGINT PRIMARY KEY, name TEXT NOT NULL, amount DOUBLE PRECISION NOT NULL)');
      for (const sql of warmup) await db.exec(sql);
      const started = performance.now();
      for (const sql of statements) await db.exec(sql);
      return performance.now() - started;
    } finally {
      await db.close();
    }
  };
  const pgliteMs = pgFirst ? await onPglite() : null;
  const svcdbMs = await overSvcdb();
  const pgliteMsFinal = pgliteMs ?? (await onPglite());
  const rows = VALUES_ROWS * VALUES_STATEMENTS;
  context.result.values_1000_svcdb_rows_per_s = Math.round(rows / (svcdbMs / 1000));
  context.result.values_1000_pglite_rows_per_s = Math.round(rows / (pgliteMsFinal / 1000));
  context.result.values_1000_vs_pglite = ratioOf(pgliteMsFinal, svcdbMs);
  progress(`values_1000: svcdb ${context.result.values_1000_svcdb_rows_per_s} rows/s, PGlite ${context.result.values_1000_pglite_rows_per_s} rows/s`);
}

function mixedPick(context: CaseContext, target: string): MixedPick {
  return {
    kind: () => Math.floor(Math.random() * 3) as 0 | 1 | 2,
    newId: () => takeId(`${target}:s`, context.mixedRows + 1),
    existingId: () => 1 + Math.floor(Math.random() * context.mixedRows),
    n: () => Math.floor(Math.random() * 1000),
  };
}

async function mixedCase(context: CaseContext, pgFirst: boolean): Promise<void> {
  const measure = (t: Target): Promise<Load> => load(`mixed ${t.name}`, t.url, t.mixed(mixedPick(context, t.name)), MIXED_CONNECTIONS, DURATION_S, WARMUP_S);
  const [svcdb, pg] = await both(context, 'mixed', pgFirst, measure, measure);
  record(context, 'mixed', svcdb, pg, null, '');
}

/** svcdb's RSS sampled every MEMORY_SAMPLE_S over MEMORY_S seconds of the mixed load. */
async function memoryCase(context: CaseContext): Promise<void> {
  const { value: curve } = await context.svcdb!.forCase('memory', async (server) => {
    const points: [number, number][] = [[0, rssMiB(server.pid)]];
    const started = performance.now();
    const timer = setInterval(() => points.push([Math.round((performance.now() - started) / 1000), rssMiB(server.pid)]), MEMORY_SAMPLE_S * 1000);
    try {
      const target = svcdbTarget(server.url);
      const loaded = await load('memory (mixed) svcdb', target.url, target.mixed(mixedPick(context, 'svcdb')), MIXED_CONNECTIONS, MEMORY_S, 0, true);
      context.result.memory_req_per_s = loaded.reqPerSec;
      context.result.memory_timeouts = loaded.timeouts;
    } finally {
      clearInterval(timer);
    }
    points.push([Math.round((performance.now() - started) / 1000), rssMiB(server.pid)]);
    return points;
  });
  const perMinute = slope(curve.map(([s, mib]) => [s / 60, mib] as const));
  const secondHalf = curve.filter(([s]) => s >= MEMORY_S / 2);
  context.result.memory_s = MEMORY_S;
  context.result.memory_rss_curve = JSON.stringify(curve);
  context.result.memory_rss_slope_mib_per_min = Math.round(perMinute * 100) / 100;
  context.result.memory_rss_slope_second_half_mib_per_min = Math.round(slope(secondHalf.map(([s, mib]) => [s / 60, mib] as const)) * 100) / 100;
  progress(`memory: ${JSON.stringify(curve)}; slope ${context.result.memory_rss_slope_mib_per_min} MiB/min`);
}

/** Runs one case; `pgFirst` alternates which server goes first. */
export async function runCase(name: CaseName, context: CaseContext, pgFirst: boolean): Promise<void> {
  const rowId = (): number => 1 + Math.floor(Math.random() * context.tableRows);
  const insertRow = (t: string) => (): { id: number; name: string; amount: number } => {
    const id = takeId(`${t}:ins`);
    return { id, name: `name-${id}`, amount: id * 1.5 };
  };
  switch (name) {
    case 'get_row':
      return requestCase(context, name, pgFirst, (t) => t.getRow('t', rowId), 'hello');
    case 'point_select':
      return requestCase(context, name, pgFirst, (t) => t.pointSelect(rowId), 'hello');
    case 'insert_row':
      return requestCase(context, name, pgFirst, (t) => t.insertRow(insertRow(t.name)), 'echo');
    case 'insert_sql':
      return requestCase(context, name, pgFirst, (t) => t.insertSql(insertRow(t.name)), 'echo');
    case 'bulk_insert':
      return bulkCase(context, pgFirst);
    case 'values_1000':
      return valuesCase(context, pgFirst);
    case 'mixed':
      return mixedCase(context, pgFirst);
    case 'memory':
      return memoryCase(context);
    case 'replay':
      return replayFigures(context.svcdb, context.result);
    case 'vector':
      return vectorFigures(context.result);
  }
}
