/**
 * SQL on svcdb vs PostgreSQL (PGlite), loaded with the same data in the same run (issue 3):
 * a 6-column fact table of BENCH_ROWS rows (default 1,000,000) with a secondary index, and a
 * 10,000-row dimension table. Each query is timed on both engines, BENCH_REPS times (default 5)
 * after one warm-up, and the median reported with ratio = pgliteMs / svcdbMs (> 1: svcdb ahead).
 *
 * svcdb is a real in-process server (test/helpers/sql-server.ts), timed twice: reached over HTTP
 * (POST /api/v1/query: with HTTP and JSON, as a client sees it; `ratio`) and through its SQL
 * engine in the same process, as PGlite is (`ratioInProcess`). PGlite runs in-process and in
 * memory, without fsync: the baseline is a hard one.
 *
 * Fair by construction: PGlite's tables are ANALYZEd after the load (its planner gets statistics,
 * as a PostgreSQL user would give it); which engine runs a case first alternates from case to case;
 * and every case must return the same number of rows on every engine, or the run fails (exit 1).
 *
 * Env: BENCH_ROWS, BENCH_REPS, BENCH_INSERT_ROWS (default 100,000: the bulk-insert case),
 * BENCH_BATCH_ROWS rows per INSERT statement (default 1000),
 * BENCH_ENGINES=pglite to time PostgreSQL alone (svcdbMs and ratio are then null).
 * Prints one JSON line on stdout; progress on stderr. Exit 1 when POST /api/v1/query is missing.
 */
import { startTestServer, type TestServer } from '../test/helpers/sql-server.js';
import { PgliteEngine, requireQueryRoute, SvcdbHttpEngine, type EngineResult, type SqlEngine } from '../test/sql/runner/index.js';
import { printBenchResult, progress, round2, type BenchResult } from './lib/print-result.js';
import { SvcdbInProcessEngine } from './lib/svcdb-in-process.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const DIM_ROWS = 10_000;
const REPS = Number(process.env.BENCH_REPS ?? 5);
const INSERT_ROWS = Number(process.env.BENCH_INSERT_ROWS ?? 100_000);
const BATCH_ROWS = Number(process.env.BENCH_BATCH_ROWS ?? 1000);
const PGLITE_ONLY = process.env.BENCH_ENGINES === 'pglite';
const LOOKUPS_PER_REP = 200;
/** Loading (not timed) keeps a few statements in flight on svcdb; PGlite takes one at a time. */
const SVCDB_LOAD_IN_FLIGHT = 4;

/** Deterministic data: both engines get exactly the same rows. */
class Lcg {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (Math.imul(this.state, 1664525) + 1013904223) >>> 0;
    return this.state / 4294967296;
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
/** A step coprime with n, so (i * step) mod n is a permutation of 0..n-1 (unique index keys). */
function coprimeStep(n: number): number {
  let step = 1_000_003;
  while (gcd(step, n) !== 1) step += 2;
  return step % n || 1;
}

const FACT_COLUMNS =
  'id BIGINT PRIMARY KEY, dim_id INTEGER NOT NULL, k INTEGER NOT NULL, amount NUMERIC(12,2) NOT NULL, score DOUBLE PRECISION NOT NULL, label TEXT NOT NULL';

/** INSERT statements of `count` fact rows starting at id `first`, BATCH_ROWS per statement. */
function* factInserts(table: string, first: number, count: number, total: number, seed: number): Generator<string> {
  const rng = new Lcg(seed);
  const step = coprimeStep(total);
  for (let start = first; start < first + count; start += BATCH_ROWS) {
    const values: string[] = [];
    for (let id = start; id < Math.min(start + BATCH_ROWS, first + count); id++) {
      const k = (((id - 1) % total) * step) % total;
      const amount = (rng.int(0, 99_999) / 100).toFixed(2);
      const score = rng.int(0, 999_999) / 1_000_000;
      values.push(`(${id}, ${rng.int(1, DIM_ROWS)}, ${k}, ${amount}, ${score}, 'label-${rng.int(0, 99)}')`);
    }
    yield `INSERT INTO ${table} VALUES ${values.join(', ')}`;
  }
}

function* dimInserts(): Generator<string> {
  for (let start = 1; start <= DIM_ROWS; start += BATCH_ROWS) {
    const values: string[] = [];
    for (let id = start; id < Math.min(start + BATCH_ROWS, DIM_ROWS + 1); id++) values.push(`(${id}, 'dim-${id}', 'region-${id % 10}')`);
    yield `INSERT INTO dims VALUES ${values.join(', ')}`;
  }
}

async function must(engine: SqlEngine, sql: string): Promise<Extract<EngineResult, { kind: 'rows' }>> {
  const out = await engine.execute(sql);
  if (out.kind === 'error') throw new Error(`${engine.name}: ${out.message}\n  in: ${sql.slice(0, 200)}`);
  return out;
}

async function runAll(engine: SqlEngine, statements: Iterable<string>, inFlight: number): Promise<void> {
  const pending = new Set<Promise<unknown>>();
  for (const sql of statements) {
    const p: Promise<unknown> = must(engine, sql).finally(() => pending.delete(p));
    pending.add(p);
    if (pending.size >= inFlight) await Promise.race(pending);
  }
  await Promise.all(pending);
}

async function load(engine: SqlEngine, inFlight: number): Promise<void> {
  await must(engine, `CREATE TABLE facts (${FACT_COLUMNS})`);
  await must(engine, 'CREATE INDEX facts_k_idx ON facts (k)');
  await must(engine, 'CREATE TABLE dims (id INTEGER PRIMARY KEY, name TEXT NOT NULL, region TEXT NOT NULL)');
  await runAll(engine, dimInserts(), inFlight);
  let done = 0;
  const everyStatements = Math.max(1, Math.floor(100_000 / BATCH_ROWS));
  const withProgress = function* (): Generator<string> {
    for (const sql of factInserts('facts', 1, ROWS, ROWS, 42)) {
      yield sql;
      done += BATCH_ROWS;
      if ((done / BATCH_ROWS) % everyStatements === 0) progress(`  ${engine.name}: ${Math.min(done, ROWS)} / ${ROWS} rows`);
    }
  };
  await runAll(engine, withProgress(), inFlight);
}

/** One timed operation: `statements(rep)` runs in order; `expectRows` checks the last result's size. */
interface Case {
  readonly name: string;
  readonly statements: (rep: number) => string[];
  /** Divide the elapsed time by this (e.g. per lookup). */
  readonly per?: number;
}

const CASES: readonly Case[] = [
  {
    name: 'point_lookup',
    per: LOOKUPS_PER_REP,
    statements: (rep) => Array.from({ length: LOOKUPS_PER_REP }, (_, i) => `SELECT * FROM facts WHERE id = ${1 + ((rep * 7919 + i * 104_729) % ROWS)}`),
  },
  {
    name: 'index_range_1000',
    statements: (rep) => [
      `SELECT * FROM facts WHERE k BETWEEN ${(rep * 15_485_863) % Math.max(1, ROWS - 1000)} AND ${((rep * 15_485_863) % Math.max(1, ROWS - 1000)) + 999}`,
    ],
  },
  { name: 'full_scan_filter', statements: (rep) => [`SELECT id, amount FROM facts WHERE score < ${(0.001 + rep / 1_000_000).toFixed(6)}`] },
  { name: 'group_by_all_rows', statements: () => ['SELECT label, count(*), sum(amount), avg(score) FROM facts GROUP BY label'] },
  { name: 'join_dim_aggregate', statements: () => ['SELECT d.region, count(*), sum(f.amount) FROM facts f JOIN dims d ON d.id = f.dim_id GROUP BY d.region'] },
  { name: 'order_by_limit_indexed', statements: (rep) => [`SELECT id, k, amount FROM facts WHERE k >= ${rep * 1000} ORDER BY k LIMIT 10`] },
  { name: 'order_by_limit_unindexed', statements: (rep) => [`SELECT id, score FROM facts WHERE id > ${rep} ORDER BY score DESC LIMIT 10`] },
];

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** Median ms of one case on one engine, and the rows its statements returned in rep 1 (to check the engines agree). */
async function timeCase(engine: SqlEngine, c: Case): Promise<{ ms: number; rows: number }> {
  let rows = 0;
  const samples: number[] = [];
  for (let rep = 0; rep <= REPS; rep++) {
    const started = performance.now();
    for (const sql of c.statements(rep)) {
      const out = await must(engine, sql);
      if (rep === 1) rows += out.rows.length;
    }
    if (rep > 0) samples.push((performance.now() - started) / (c.per ?? 1)); // rep 0 warms up
  }
  return { ms: median(samples), rows };
}

/** Bulk insert: INSERT_ROWS rows, BATCH_ROWS per statement, one statement at a time, into a fresh table per rep. */
async function timeBulkInsert(engine: SqlEngine, tablePrefix = 'pg'): Promise<number> {
  const samples: number[] = [];
  const reps = Math.max(1, Math.min(REPS, 3));
  for (let rep = 0; rep < reps; rep++) {
    const table = `facts_insert_${tablePrefix}_${rep}`;
    await must(engine, `CREATE TABLE ${table} (${FACT_COLUMNS})`);
    await must(engine, `CREATE INDEX ${table}_k_idx ON ${table} (k)`);
    const statements = [...factInserts(table, 1, INSERT_ROWS, INSERT_ROWS, 7 + rep)];
    const started = performance.now();
    for (const sql of statements) await must(engine, sql);
    samples.push(performance.now() - started);
  }
  return median(samples);
}

interface Figure {
  svcdbMs: number | null;
  svcdbInProcessMs: number | null;
  pgliteMs: number;
  ratio: number | null;
  ratioInProcess: number | null;
  rows?: number;
}

async function main(): Promise<number> {
  progress(`sql-vs-pglite: ${ROWS} fact rows, ${DIM_ROWS} dimension rows, ${REPS} reps${PGLITE_ONLY ? ' (PGlite only)' : ''}`);
  let server: TestServer | null = null;
  let svcdb: SvcdbHttpEngine | null = null;
  let inProcess: SvcdbInProcessEngine | null = null;
  const pglite = await PgliteEngine.create();
  try {
    if (!PGLITE_ONLY) {
      server = await startTestServer();
      try {
        await requireQueryRoute(server.baseUrl, server.apiKey);
      } catch (error) {
        progress(`sql-vs-pglite: cannot time svcdb: ${(error as Error).message}.\nRun with BENCH_ENGINES=pglite to time PostgreSQL alone.`);
        return 1;
      }
      svcdb = new SvcdbHttpEngine(server.baseUrl, server.apiKey, 600_000);
      inProcess = new SvcdbInProcessEngine(server.sql);
    }
    // PGlite first: its load holds this process's event loop for minutes, long enough for an idle
    // keep-alive connection to svcdb to be closed under the client (ECONNRESET on the next request).
    progress('loading PGlite');
    await load(pglite, 1);
    // Statistics for PostgreSQL's planner, as anyone running it would have (autovacuum does it in time).
    await must(pglite, 'ANALYZE facts');
    await must(pglite, 'ANALYZE dims');
    if (svcdb) {
      progress('loading svcdb');
      await load(svcdb, SVCDB_LOAD_IN_FLIGHT);
    }

    const results: Record<string, Figure> = {};
    for (const [i, c] of CASES.entries()) {
      // Alternate who goes first: PGlite first in even cases, svcdb (in process, then HTTP) in odd ones.
      const runs = new Map<SqlEngine, { ms: number; rows: number }>();
      const order = [pglite, svcdb, inProcess].filter((e): e is NonNullable<typeof e> => e !== null);
      for (const engine of i % 2 === 0 ? order : [...order].reverse()) runs.set(engine, await timeCase(engine, c));
      const pg = runs.get(pglite)!;
      const sv = svcdb ? runs.get(svcdb)! : null;
      const ip = inProcess ? runs.get(inProcess)! : null;
      for (const [name, other] of [
        ['svcdb over HTTP', sv],
        ['svcdb in process', ip],
      ] as const) {
        if (other && other.rows !== pg.rows)
          throw new Error(`${c.name}: ${name} returned ${other.rows} rows, PGlite ${pg.rows}: the engines disagree, so the timings compare nothing`);
      }
      results[c.name] = {
        svcdbMs: sv ? round3(sv.ms) : null,
        svcdbInProcessMs: ip ? round3(ip.ms) : null,
        pgliteMs: round3(pg.ms),
        ratio: sv ? round2(pg.ms / sv.ms) : null,
        ratioInProcess: ip ? round2(pg.ms / ip.ms) : null,
        rows: pg.rows,
      };
      progress(`  ${c.name}: svcdb ${sv ? round3(sv.ms) : '-'} ms (in process ${ip ? round3(ip.ms) : '-'} ms), PGlite ${round3(pg.ms)} ms (${pg.rows} rows)`);
    }
    // The bulk insert goes on from the alternation: svcdb first when the case count is odd.
    const svcdbFirst = CASES.length % 2 === 1;
    const svInsertFirst = svcdbFirst && svcdb ? await timeBulkInsert(svcdb, 'http') : null;
    const ipInsertFirst = svcdbFirst && inProcess ? await timeBulkInsert(inProcess, 'in_process') : null;
    const pgInsert = await timeBulkInsert(pglite);
    const svInsert = svcdbFirst ? svInsertFirst : svcdb ? await timeBulkInsert(svcdb, 'http') : null;
    const ipInsert = svcdbFirst ? ipInsertFirst : inProcess ? await timeBulkInsert(inProcess, 'in_process') : null;
    for (const [name, engine, prefix] of [
      ['PGlite', pglite, 'pg'],
      ['svcdb over HTTP', svcdb, 'http'],
      ['svcdb in process', inProcess, 'in_process'],
    ] as const) {
      if (!engine) continue;
      const counted = await must(engine, `SELECT count(*) AS n FROM facts_insert_${prefix}_0`);
      if (Number(counted.rows[0]![0]) !== INSERT_ROWS)
        throw new Error(`bulk insert: ${name} holds ${String(counted.rows[0]![0])} rows, expected ${INSERT_ROWS}`);
    }
    results[`bulk_insert_${INSERT_ROWS}`] = {
      svcdbMs: svInsert === null ? null : round3(svInsert),
      svcdbInProcessMs: ipInsert === null ? null : round3(ipInsert),
      pgliteMs: round3(pgInsert),
      ratio: svInsert === null ? null : round2(pgInsert / svInsert),
      ratioInProcess: ipInsert === null ? null : round2(pgInsert / ipInsert),
    };
    progress(
      `  bulk_insert_${INSERT_ROWS}: svcdb ${svInsert === null ? '-' : round3(svInsert)} ms (in process ${ipInsert === null ? '-' : round3(ipInsert)} ms), PGlite ${round3(pgInsert)} ms`,
    );

    const line = {
      bench: 'sql-vs-pglite',
      rows: ROWS,
      dimRows: DIM_ROWS,
      insertRows: INSERT_ROWS,
      batchRows: BATCH_ROWS,
      reps: REPS,
      unit: 'ms per operation, median (point_lookup: per lookup)',
      ratioMeaning: 'pgliteMs / svcdbMs (ratioInProcess: pgliteMs / svcdbInProcessMs): above 1 means svcdb is faster',
      svcdbVia: PGLITE_ONLY
        ? null
        : "HTTP POST /api/v1/query to an in-process server (log durability commit); svcdbInProcessMs: the same server's SQL engine called in process",
      pgliteVia: 'in-process PGlite, in memory',
      results,
    };
    // `results` is nested; printBenchResult writes the object as JSON as it is.
    printBenchResult(line as unknown as BenchResult);
    return 0;
  } finally {
    await pglite.close();
    await server?.close();
  }
}

const round3 = (ms: number): number => Math.round(ms * 1000) / 1000;

process.exitCode = await main().catch((error: unknown) => {
  progress(`sql-vs-pglite failed: ${(error as Error).message}`);
  return 1;
});
