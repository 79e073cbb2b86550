/**
 * The cases of bench/hot-paths.ts. Each writes its figures into `context.result` (flat keys,
 * `<case>_<what>`). The load cases (get_row, point_select, insert_row, insert_sql, mixed) measure
 * svcdb, fastify + pg + PostgreSQL and the fastify baseline interleaved in rounds (rounds.ts);
 * bulk_insert and values_1000, whose two sides take a few seconds together, back to back.
 */
import { PGlite } from '@electric-sql/pglite';
import { load, ratioOf, rssMiB, slope, type Load, type RequestShape } from './load.js';
import { measureInRounds, ratiosPerRound, type Side, type SideFigures } from './rounds.js';
import { progress, type BenchValue } from './print-result.js';
import { httpSql, svcdbTarget, type MixedPick, type Target } from './hot-targets.js';
import type { CaseProfile, SvcdbHost } from './svcdb-host.js';
import { replayFigures, vectorFigures } from './hot-children.js';

export const CASE_NAMES = ['get_row', 'point_select', 'insert_row', 'insert_sql', 'bulk_insert', 'values_1000', 'mixed', 'memory', 'replay', 'vector'] as const;
export type CaseName = (typeof CASE_NAMES)[number];

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
/** Seconds of load before each measured one (both sides alike): not measured. */
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 2);
/**
 * Rounds of the request cases and mixed (rounds.ts): each side's BENCH_DURATION_S is split into this
 * many loads (whole seconds), the sides taking turns, so a ratio compares loads of the same minutes.
 * 5: 2 s loads at the default 10 s, 1 s loads at the usual BENCH_DURATION_S=5.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = 50;
const MIXED_CONNECTIONS = 32;
const BULK_ROWS = 10_000;
const BULK_REQUESTS = Number(process.env.BENCH_BULK_REQUESTS ?? 20);
const VALUES_ROWS = 1000;
/**
 * 200: at ~150,000-230,000 rows/s twenty statements were ~0.1 s of work, and one scavenge more or
 * less on either side moved the ratio from 1.0x to 1.8x between runs; two hundred give ~1 s.
 */
const VALUES_STATEMENTS = Number(process.env.BENCH_VALUES_STATEMENTS ?? 200);
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
  readonly result: Record<string, BenchValue>;
  onProfile(name: string, profile: CaseProfile): Promise<void>;
}

/** Ids handed to inserts, per server, so no two inserts of a run collide (ins, bulk and s). */
const nextIds = new Map<string, number>();
function takeId(key: string, start = 1): number {
  const id = nextIds.get(key) ?? start;
  nextIds.set(key, id + 1);
  return id;
}

/** The fastify baseline side of a case: hello world (GET /) or JSON POST (/echo), as the cases compare. */
function baselineSide(url: string, which: 'hello' | 'echo'): Side {
  const request: RequestShape =
    which === 'hello'
      ? { method: 'GET', path: '/' }
      : {
          method: 'POST',
          path: '/echo',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ row: { id: 1, name: 'name-1', amount: 1.5 } }),
        };
  return { name: which, url, request };
}

/**
 * Measures a load case's sides in rounds (rounds.ts): svcdb, fastify + pg when PostgreSQL runs, and
 * the fastify baseline when the case has one and baselines run. All of it runs inside svcdb's
 * forCase, so in profile mode one profiled svcdb process serves every round of the case (it idles
 * while the other sides run; idle is left out of the profile's shares).
 */
async function roundsCase(
  context: CaseContext,
  name: CaseName,
  offset: number,
  shape: (t: Target) => RequestShape,
  connections: number,
  baselineName: 'hello' | 'echo' | '',
): Promise<void> {
  const { value: figures, profile } = await context.svcdb!.forCase(name, (server) => {
    const sides: Side[] = [{ name: 'svcdb', url: server.url, request: shape(svcdbTarget(server.url)) }];
    if (context.pg) sides.push({ name: 'pg', url: context.pg.url, request: shape(context.pg) });
    if (baselineName !== '' && context.fastifyUrl !== null) sides.push(baselineSide(context.fastifyUrl, baselineName));
    return measureInRounds(name, sides, {
      connections,
      totalS: DURATION_S,
      rounds: ROUNDS,
      warmupS: WARMUP_S,
      offset,
      onRound: (round, order, rates) => progress(`${name} round ${round + 1}: ${order.map((side) => `${side} ${rates.get(side)} req/s`).join(', ')}`),
    });
  });
  if (profile) await context.onProfile(name, profile);
  record(context, name, figures, baselineName);
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

/**
 * A load case's keys. The keys of earlier runs keep their meaning (a side's rate: its requests over
 * its measured seconds; its p99 over all its requests); the `_rounds` lists give each round's
 * figures, so the spread shows. A side that did not run (no PostgreSQL, BENCH_BASELINES=0) is null.
 */
function record(context: CaseContext, name: string, figures: ReadonlyMap<string, SideFigures>, baselineName: string): void {
  const r = context.result;
  const svcdb = figures.get('svcdb')!;
  const pg = figures.get('pg');
  const baseline = baselineName === '' ? undefined : figures.get(baselineName);
  const vsPg = ratioOf(svcdb.reqPerSec, pg?.reqPerSec);
  const vsPgRounds = ratiosPerRound(svcdb.roundRates, pg?.roundRates);
  r[`${name}_rounds`] = svcdb.roundRates.length;
  r[`${name}_svcdb_rps`] = svcdb.reqPerSec;
  r[`${name}_svcdb_p50_ms`] = svcdb.p50Ms;
  r[`${name}_svcdb_p99_ms`] = svcdb.p99Ms;
  r[`${name}_pg_rps`] = pg?.reqPerSec ?? null;
  r[`${name}_pg_p50_ms`] = pg?.p50Ms ?? null;
  r[`${name}_pg_p99_ms`] = pg?.p99Ms ?? null;
  r[`${name}_vs_pg`] = vsPg;
  r[`${name}_vs_pg_rounds`] = vsPgRounds;
  r[`${name}_svcdb_p99_ms_rounds`] = svcdb.roundP99Ms;
  r[`${name}_pg_p99_ms_rounds`] = pg?.roundP99Ms ?? null;
  const list = (values: readonly (number | null)[] | null): string => (values === null ? '-' : values.join(' / '));
  let line = `${name}: svcdb ${svcdb.reqPerSec} req/s (p99 ${svcdb.p99Ms} ms), fastify+pg ${pg?.reqPerSec ?? '-'} req/s (p99 ${pg?.p99Ms ?? '-'} ms), ratio ${vsPg} (rounds ${list(vsPgRounds)})`;
  if (baselineName !== '') {
    const vsBaseline = ratioOf(svcdb.reqPerSec, baseline?.reqPerSec);
    const vsBaselineRounds = ratiosPerRound(svcdb.roundRates, baseline?.roundRates);
    r[`${name}_${baselineName}_rps`] = baseline?.reqPerSec ?? null;
    r[`${name}_${baselineName}_rps_rounds`] = baseline?.roundRates ?? null;
    r[`${name}_vs_${baselineName}`] = vsBaseline;
    r[`${name}_vs_${baselineName}_rounds`] = vsBaselineRounds;
    line += `; ${baselineName} ${baseline?.reqPerSec ?? '-'} req/s, ratio ${vsBaseline} (rounds ${list(vsBaselineRounds)})`;
  }
  progress(line);
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

/**
 * Runs one case. `index` (the case's place in the run) picks who goes first: the first round's
 * rotation in the load cases, svcdb or the baseline (alternately) in bulk_insert and values_1000.
 */
export async function runCase(name: CaseName, context: CaseContext, index: number): Promise<void> {
  const pgFirst = index % 2 === 1;
  const rowId = (): number => 1 + Math.floor(Math.random() * context.tableRows);
  const insertRow = (t: string) => (): { id: number; name: string; amount: number } => {
    const id = takeId(`${t}:ins`);
    return { id, name: `name-${id}`, amount: id * 1.5 };
  };
  switch (name) {
    case 'get_row':
      return roundsCase(context, name, index, (t) => t.getRow('t', rowId), CONNECTIONS, 'hello');
    case 'point_select':
      return roundsCase(context, name, index, (t) => t.pointSelect(rowId), CONNECTIONS, 'hello');
    case 'insert_row':
      return roundsCase(context, name, index, (t) => t.insertRow(insertRow(t.name)), CONNECTIONS, 'echo');
    case 'insert_sql':
      return roundsCase(context, name, index, (t) => t.insertSql(insertRow(t.name)), CONNECTIONS, 'echo');
    case 'bulk_insert':
      return bulkCase(context, pgFirst);
    case 'values_1000':
      return valuesCase(context, pgFirst);
    case 'mixed':
      return roundsCase(context, name, index, (t) => t.mixed(mixedPick(context, t.name)), MIXED_CONNECTIONS, '');
    case 'memory':
      return memoryCase(context);
    case 'replay':
      return replayFigures(context.svcdb, context.result);
    case 'vector':
      return vectorFigures(context.result);
  }
}
