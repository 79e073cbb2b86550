/**
 * Hot paths (issue 16): svcdb against fastify + pg + PostgreSQL 15 (and fastify's hello world and
 * JSON POST) on the same machine in the same run, each server in its own process, autocannon in
 * this one. svcdb is `svcdb serve` with durable commits; PostgreSQL runs from a temp dir with
 * fsync and synchronous_commit on (bench/lib/postgres.ts); the baseline routes are
 * bench/lib/pg-baseline.ts (pg.Pool of 16). Tables: t with BENCH_TABLE_ROWS rows (default 100,000),
 * s with BENCH_MIXED_ROWS (default 10,000) for the mixed load.
 *
 * Cases (BENCH_CASES=a,b,c selects; default all):
 *   get_row       GET /tables/t/rows/{id}, 50 connections          vs pg, vs hello world
 *   point_select  POST /query SELECT * FROM t WHERE id = $1, 50     vs pg, vs hello world
 *   insert_row    POST /tables/ins/rows, one durable row, 50        vs pg (+p99), vs JSON POST
 *   insert_sql    POST /query INSERT ... VALUES ($1, $2, $3), 50    vs pg (+p99), vs JSON POST
 *   bulk_insert   BENCH_BULK_REQUESTS (20) x 10,000 rows, one request at a time: rows/s vs pg (unnest arrays);
 *                 bodies made before the clock, after BENCH_BULK_WARMUP (2) requests not measured
 *   values_1000   BENCH_VALUES_STATEMENTS (200) INSERTs of 1,000-row VALUES over POST /query vs PGlite in process,
 *                 after BENCH_VALUES_WARMUP (2) statements not measured (on both)
 *   mixed         32 connections, one autocannon whose setupRequest picks at random: ⅓ insert into s,
 *                 ⅓ GET s by id, ⅓ SELECT count(*), max(n) FROM s WHERE n > $1    vs pg on the same mix
 *   memory        svcdb RSS every BENCH_MEMORY_SAMPLE_S over BENCH_MEMORY_S (600) s of the mixed load: curve, slope
 *   replay        bench/replay.ts in a child, twice: BENCH_REPLAY_RECORDS (default 200,000) single-row records
 *                 (records/s) and as many 5-row records (1M rows: rows/s), then `svcdb replay` (the CLI) on this
 *                 run's svcdb data dir
 *   vector        bench/vector-http.ts in a child: REST and Pinecone QPS under load at ef 40 vs raw hnswlib-node
 * Interleaved rounds (bench/lib/rounds.ts): the machine's pace moves within minutes, so the sides of each load case
 * (get_row, point_select, insert_row, insert_sql: svcdb, fastify+pg and the fastify hello world or JSON POST; mixed:
 * svcdb and fastify+pg) take turns. Each side gets one BENCH_WARMUP_S (default 2) warm-up of the case's load, not
 * measured, then BENCH_ROUNDS (default 5) loads of whole seconds adding up to BENCH_DURATION_S (default 10; fewer
 * rounds when it has fewer seconds); which side goes first rotates every round (and the first round's order from case
 * to case). A side's rate is its requests over its measured seconds; its p50/p99 are taken over all its requests
 * (autocannon's hdr histograms of the rounds merged); `<case>_vs_pg_rounds`, `<case>_vs_hello_rounds` etc. give each
 * round's ratio. bulk_insert and values_1000 (a few seconds for both sides) run each side once, back to back, which
 * side first alternating from case to case. BENCH_BASELINES=0 runs svcdb alone (no PostgreSQL, no fastify): one load
 * of BENCH_DURATION_S per case, nothing to interleave. BENCH_PROFILE=1: each svcdb case runs in a fresh server
 * process with --cpu-prof (one process for all the rounds of the case; idle while the other sides run), and its top BENCH_PROFILE_TOP (25) self-time functions are printed (and
 * written as markdown to BENCH_PROFILE_MD when set). Any non-2xx answer voids a case: `<case>_void` says why, the
 * other cases run, the exit code is 1.
 * One JSON line on stdout; progress on stderr.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runCase, type CaseContext, type CaseName, CASE_NAMES } from './lib/hot-cases.js';
import { printBenchResult, progress, type BenchValue } from './lib/print-result.js';
import { postgresAvailable, startPostgres, type PostgresCluster } from './lib/postgres.js';
import { startFastifyBaseline, startPgBaseline, stopAllProcesses, stopChildrenOnSignals, type ChildServer } from './lib/processes.js';
import { API_KEY, loadPostgres, loadSvcdb, pgTarget, svcdbTarget } from './lib/hot-targets.js';
import { startSvcdbHost, type CaseProfile, type SvcdbHost } from './lib/svcdb-host.js';

const TABLE_ROWS = Number(process.env.BENCH_TABLE_ROWS ?? 100_000);
const MIXED_ROWS = Number(process.env.BENCH_MIXED_ROWS ?? 10_000);
const PROFILE = process.env.BENCH_PROFILE === '1';
const PROFILE_TOP = Number(process.env.BENCH_PROFILE_TOP ?? 25);
const PROFILE_MD = process.env.BENCH_PROFILE_MD;
/** BENCH_BASELINES=0: svcdb alone (no PostgreSQL, no fastify), for a quick look at one case. */
const BASELINES = process.env.BENCH_BASELINES !== '0';
/** Cases that need no server of this process (they run their own). */
const STANDALONE: readonly CaseName[] = ['vector'];
/** Cases that compare with PostgreSQL or fastify (the others need svcdb alone). */
const WITH_BASELINES: readonly CaseName[] = ['get_row', 'point_select', 'insert_row', 'insert_sql', 'bulk_insert', 'mixed'];

function selectedCases(): CaseName[] {
  const wanted = process.env.BENCH_CASES?.split(',').map((c) => c.trim()) ?? [];
  const unknown = wanted.filter((c) => !(CASE_NAMES as readonly string[]).includes(c));
  if (unknown.length > 0) throw new Error(`unknown BENCH_CASES ${unknown.join(', ')}; known: ${CASE_NAMES.join(', ')}`);
  return wanted.length === 0 ? [...CASE_NAMES] : CASE_NAMES.filter((c) => wanted.includes(c));
}

/** The profiles as markdown: per case, a table by self time and one of svcdb's own functions by total time. */
function profilesMarkdown(profiles: ReadonlyMap<string, CaseProfile>, header: string): string {
  const parts = [header];
  const table = (rows: readonly { where: string; selfMs: number; percent: number }[], what: string): string =>
    [
      `| ${what} ms | % of busy | function (file:line) |`,
      '|---:|---:|---|',
      ...rows.map((f) => `| ${f.selfMs} | ${f.percent} | ${f.where.replaceAll('|', '\\|')} |`),
    ].join('\n');
  for (const [name, profile] of profiles) {
    parts.push(
      `## ${name}`,
      '',
      table(profile.self, 'self'),
      '',
      `svcdb's own functions by total time (self + callees):`,
      '',
      table(profile.total, 'total'),
      '',
    );
  }
  return parts.join('\n');
}

async function main(): Promise<void> {
  const cases = selectedCases();
  const needsServers = cases.some((c) => !STANDALONE.includes(c));
  const result: Record<string, BenchValue> = { cases: cases.join(',') };
  let postgres: PostgresCluster | null = null;
  let pgServer: ChildServer | null = null;
  let fastify: ChildServer | null = null;
  let svcdb: SvcdbHost | null = null;
  const profileDir = PROFILE ? await mkdtemp(path.join(os.tmpdir(), 'svcdb-bench-prof-')) : undefined;
  const profiles = new Map<string, CaseProfile>();
  try {
    if (needsServers) {
      if (!BASELINES || !cases.some((c) => WITH_BASELINES.includes(c))) {
        result.postgres = BASELINES ? 'not needed by these cases' : 'skipped: BENCH_BASELINES=0';
      } else if (postgresAvailable()) {
        postgres = await startPostgres(progress);
        await loadPostgres(postgres, TABLE_ROWS, MIXED_ROWS);
        pgServer = await startPgBaseline(postgres.host, postgres.port, postgres.user);
        result.postgres = postgres.runAs;
      } else {
        progress('PostgreSQL binaries missing: the PostgreSQL baseline is skipped');
        result.postgres = 'skipped: binaries missing';
      }
      if (BASELINES && cases.some((c) => WITH_BASELINES.includes(c))) fastify = await startFastifyBaseline();
      svcdb = await startSvcdbHost({ apiKey: API_KEY, profileDir, top: PROFILE_TOP });
      await loadSvcdb(svcdbTarget((await svcdb.running()).url), TABLE_ROWS, MIXED_ROWS);
    }
    const context: CaseContext = {
      svcdb,
      pg: pgServer ? pgTarget(pgServer.url) : null,
      fastifyUrl: fastify?.url ?? null,
      tableRows: TABLE_ROWS,
      mixedRows: MIXED_ROWS,
      result,
      onProfile: async (name, profile) => {
        profiles.set(name, profile);
        progress(`-- profile ${name}: top ${profile.self.length} functions by self time`);
        for (const f of profile.self) progress(`  ${String(f.selfMs).padStart(8)} ms ${String(f.percent).padStart(5)}%  ${f.where}`);
        progress(`-- profile ${name}: svcdb's own functions by total time (self + callees)`);
        for (const f of profile.total) progress(`  ${String(f.selfMs).padStart(8)} ms ${String(f.percent).padStart(5)}%  ${f.where}`);
        if (PROFILE_MD !== undefined) {
          const header = `# CPU profiles of svcdb serve (bench/hot-paths.ts, BENCH_PROFILE=1)\n\n${new Date().toISOString()}, load average ${os
            .loadavg()
            .map((l) => l.toFixed(2))
            .join(
              ' ',
            )}, BENCH_DURATION_S=${process.env.BENCH_DURATION_S ?? 10}; self time per function, % of the non-idle samples; samples taken while the case ran, every thread of the server (main, HNSW worker).\n`;
          await writeFile(PROFILE_MD, profilesMarkdown(profiles, header));
        }
      },
    };
    for (const [index, name] of cases.entries()) {
      progress(`== ${name}`);
      try {
        await runCase(name, context, index);
      } catch (error) {
        // A void case (a non-2xx answer, a failed child) says why; the other cases still run.
        if (interrupted) throw error;
        progress(`${name} is void: ${(error as Error).stack ?? String(error)}`);
        result[`${name}_void`] = (error as Error).message.slice(0, 500);
        process.exitCode = 1;
      }
    }
  } finally {
    await svcdb?.close();
    await pgServer?.stop();
    await fastify?.stop();
    await postgres?.stop();
    if (profileDir !== undefined) await rm(profileDir, { recursive: true, force: true });
  }
  printBenchResult({ bench: 'hot-paths', ...result });
}

/** Set on SIGTERM/SIGINT: a case failing then is the interruption, not a void case. */
let interrupted = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => (interrupted = true));
stopChildrenOnSignals(progress);
await main().catch(async (error: unknown) => {
  progress(`hot-paths failed: ${(error as Error).stack ?? String(error)}`);
  await stopAllProcesses();
  process.exitCode = 1;
});
