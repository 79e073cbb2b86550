/**
 * Parse + bind per statement (issue 15's performance clause), on parser-spike's corpus: the differential
 * fuzzer's statements (seeds 1..BENCH_PB_SEEDS, invalid ones left out) over its schema, and the statements of
 * test/sql/*.slt, each file on a fresh engine with its statements run in order (so its tables exist). Only
 * single SELECTs svcdb parses and binds count. Per statement, in one pass:
 * - cold: the first time the text is seen: parseSql, then prepareQuery (bind + optimize), each timed, so the
 *   baseline (parse alone) and parse + bind come from the same call;
 * - cached, plan: the engine's path for a SELECT text sent again (its plan cache hit, PlanCache.get);
 * - cached, parse: a parse-cache hit then bind + optimize (the path once DDL invalidated the plan, or for a
 *   statement the plan cache does not keep); before the parse cache existed, a parse and a bind.
 * Prints ONE JSON line: p50/p99 in µs. It runs on the tree before the libpg-query switch too (the adapter reads
 * either statement shape). Env: BENCH_PB_SEEDS (default 10), BENCH_PB_STATEMENTS per seed (default 300),
 * BENCH_PB_REPS (default 5); BENCH_PB_WRITE_SET=file writes the texts measured (one JSON string a line),
 * BENCH_PB_ONLY=file measures only those texts (the same statements on two trees).
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import type { CatalogState } from '../projections/index.js';
import { newBindContext, PlanCache, prepareQuery } from '../query/prepare.js';
import { parseSql } from '../query/parse/index.js';
import { typeSystem } from '../query/index.js';
import { openSql, type SqlHarness } from '../test/query/helpers.js';
import { generateStatements } from '../test/sql/fuzz/generate.js';
import { DATA_SQL, TABLE_DDL } from '../test/sql/fuzz/schema.js';
import { parseSlt } from '../test/sql/runner/index.js';
import { machineDescription, progress } from './lib/print-result.js';

const SEEDS = Number(process.env.BENCH_PB_SEEDS ?? 10);
const PER_SEED = Number(process.env.BENCH_PB_STATEMENTS ?? 300);
const REPS = Number(process.env.BENCH_PB_REPS ?? 5);
const ONLY = process.env.BENCH_PB_ONLY
  ? new Set(
      readFileSync(process.env.BENCH_PB_ONLY, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as string),
    )
  : null;
const measured: string[] = [];
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** A parsed statement in either shape: the owned AST (body.kind 'query') or node-sql-parser's (ast.type 'select'). */
interface AnyStatement {
  readonly text: string;
  readonly explain: unknown;
  readonly body?: { readonly kind: string; readonly query?: unknown };
  readonly ast?: { readonly type?: string } | null;
  readonly custom?: unknown;
}
type Prepare = (query: unknown, ctx: unknown, catalog: CatalogState) => unknown;
type NewContext = (types: unknown, catalog: CatalogState, tenant: string, statement: unknown) => unknown;

/** The query of a single plain SELECT, or null. */
function selectOf(statements: readonly AnyStatement[], sql: string): unknown {
  const only = statements.length === 1 ? statements[0]! : null;
  if (only === null || only.text !== sql.trim().replace(/;\s*$/, '') || only.explain) return null;
  if (only.body !== undefined) return only.body.kind === 'query' ? only.body.query : null;
  return only.ast?.type === 'select' && !only.custom ? only.ast : null;
}

interface Timings {
  parse: number[];
  bind: number[];
  parseBind: number[];
  planHit: number[];
  parseHitBind: number[];
}

// A variable, so the bench compiles on a tree without the module (before the switch).
const PARSE_CACHE_MODULE = '../query/parse-cache.js';

/** The parse cache when this tree has one (it came after the switch). */
async function parseCache(): Promise<{ parse(sql: string): readonly unknown[] } | null> {
  try {
    const mod = (await import(PARSE_CACHE_MODULE)) as { ParseCache: new (n: number) => { parse(sql: string): readonly unknown[] } };
    return new mod.ParseCache(100_000);
  } catch {
    return null;
  }
}

/** Times one statement cold, then cached; false when it is not a SELECT svcdb binds. */
function measure(sql: string, catalog: CatalogState, cache: { parse(sql: string): readonly unknown[] } | null, t: Timings): boolean {
  if (ONLY !== null && !ONLY.has(sql)) return false;
  const prepare = prepareQuery as unknown as Prepare;
  const context = newBindContext as unknown as NewContext;
  let statements: AnyStatement[];
  const t0 = performance.now();
  try {
    statements = parseSql(sql) as unknown as AnyStatement[];
  } catch {
    return false;
  }
  const t1 = performance.now();
  const query = selectOf(statements, sql);
  if (query === null) return false;
  let prepared: unknown;
  const t2 = performance.now();
  try {
    prepared = prepare(query, context(typeSystem, catalog, 'default', statements[0]), catalog);
  } catch {
    return false;
  }
  const t3 = performance.now();
  measured.push(sql);
  t.parse.push(t1 - t0);
  t.bind.push(t3 - t2);
  t.parseBind.push(t1 - t0 + (t3 - t2));
  const plans = new PlanCache(16);
  plans.set(sql, prepared as never);
  cache?.parse(sql);
  for (let rep = 0; rep < REPS; rep++) {
    const a = performance.now();
    plans.get(sql, catalog);
    const b = performance.now();
    const again = (cache ? cache.parse(sql) : parseSql(sql)) as unknown as AnyStatement[];
    prepare(selectOf(again, sql), context(typeSystem, catalog, 'default', again[0]), catalog);
    const c = performance.now();
    t.planHit.push(b - a);
    t.parseHitBind.push(c - b);
  }
  return true;
}

const run = (h: SqlHarness, sql: string) => h.engine.execute(sql, { params: [], timeoutMs: 30_000, maxRows: 10_000, tenant: 'default' });

async function fuzzCorpus(t: Timings, cache: Awaited<ReturnType<typeof parseCache>>): Promise<number> {
  const h = await openSql();
  let n = 0;
  try {
    // The fuzzer's tables svcdb can hold (array columns it refuses: statements on them do not bind and are left out).
    for (const sql of [...TABLE_DDL, ...DATA_SQL]) await run(h, sql).catch(() => undefined);
    const seen = new Set<string>();
    for (let seed = 1; seed <= SEEDS; seed++) {
      for (const s of generateStatements(seed, PER_SEED)) {
        if (seen.has(s.sql) || s.params.length > 0 || s.category === 'invalid') continue;
        seen.add(s.sql);
        if (measure(s.sql, h.stack.projections.catalog, cache, t)) n++;
      }
    }
  } finally {
    await h.close();
  }
  return n;
}

async function sltCorpus(t: Timings, cache: Awaited<ReturnType<typeof parseCache>>): Promise<number> {
  const dir = path.join(repoRoot, 'test', 'sql');
  let n = 0;
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.slt'))
    .sort()) {
    const h = await openSql();
    try {
      for (const record of parseSlt(readFileSync(path.join(dir, file), 'utf8'))) {
        if (record.kind === 'halt') break;
        if (measure(record.sql, h.stack.projections.catalog, cache, t)) n++;
        await run(h, record.sql).catch(() => undefined);
      }
    } finally {
      await h.close();
    }
  }
  return n;
}

const micros = (ms: number): number => Math.round(ms * 1000 * 10) / 10;
function percentiles(values: number[]): { p50Us: number; p99Us: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number): number => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!);
  return { p50Us: micros(at(0.5)), p99Us: micros(at(0.99)) };
}

async function main(): Promise<void> {
  const t: Timings = { parse: [], bind: [], parseBind: [], planHit: [], parseHitBind: [] };
  const cache = await parseCache();
  parseSql('SELECT 1'); // module and WebAssembly start-up out of the figures
  const started = Date.now();
  const fuzz = await fuzzCorpus(t, cache);
  progress(`fuzz: ${fuzz} SELECTs, ${Math.round((Date.now() - started) / 1000)} s`);
  const slt = await sltCorpus(t, cache);
  progress(`slt: ${slt} SELECTs, ${Math.round((Date.now() - started) / 1000)} s`);
  const line = {
    bench: 'parse-bind',
    parser: cache ? 'libpg-query (owned AST)' : 'node-sql-parser (before the switch)',
    statements: fuzz + slt,
    fuzzStatements: fuzz,
    sltStatements: slt,
    reps: REPS,
    baselineParseCold: percentiles(t.parse),
    bindCold: percentiles(t.bind),
    parseBindCold: percentiles(t.parseBind),
    cachedPlanHit: percentiles(t.planHit),
    cachedParseHitBind: percentiles(t.parseHitBind),
    parseCache: cache !== null,
    loadAverage1m: Math.round(os.loadavg()[0]! * 100) / 100,
    machine: machineDescription(),
    date: new Date().toISOString(),
  };
  if (process.env.BENCH_PB_WRITE_SET) writeFileSync(process.env.BENCH_PB_WRITE_SET, measured.map((m) => JSON.stringify(m)).join('\n'));
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

await main();
