/**
 * The parser spike of issue 15, after the switch: svcdb's parseSql (libpg-query and the translation to the owned AST; before it, node-sql-parser with
 * its token rewrites and AST templates) against libpg-query's parseSync (PostgreSQL's own grammar,
 * WebAssembly), on the differential fuzzer's statements and the statements of test/sql/*.slt.
 * Only statements PostgreSQL accepts count (each is run on PGlite inside a rolled-back transaction;
 * .slt statements in file order, so their tables exist). Prints ONE JSON line per parser:
 * acceptance of those statements, the process's first parse (module and WebAssembly start-up),
 * per-statement time of a statement never parsed before ("cold") and of a statement parsed again
 * right after ("steady"; the engine itself skips a repeated text through its parse cache), p50/p99 in µs. BENCH_SPIKE_PARSER=svcdb|libpg measures one
 * parser per process (a fair first parse).
 * Env: BENCH_SPIKE_SEEDS (default 10), BENCH_SPIKE_STATEMENTS per seed (default 300), BENCH_SPIKE_REPS (default 5).
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { PgSide } from '../test/sql/fuzz/engines.js';
import { generateStatements } from '../test/sql/fuzz/generate.js';
import { DATA_SQL, TABLE_DDL } from '../test/sql/fuzz/schema.js';
import { parseSlt } from '../test/sql/runner/index.js';
import { machineDescription, progress } from './lib/print-result.js';

const SEEDS = Number(process.env.BENCH_SPIKE_SEEDS ?? 10);
const PER_SEED = Number(process.env.BENCH_SPIKE_STATEMENTS ?? 300);
const REPS = Number(process.env.BENCH_SPIKE_REPS ?? 5);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

interface Sample {
  readonly sql: string;
  readonly source: 'fuzz' | 'slt';
}

/** The fuzzer's distinct statements PostgreSQL accepts (run in a transaction that is rolled back). */
async function fuzzStatements(pg: PgSide): Promise<Sample[]> {
  for (const sql of [...TABLE_DDL, ...DATA_SQL]) await pg.run(sql);
  const seen = new Set<string>();
  const out: Sample[] = [];
  for (let seed = 1; seed <= SEEDS; seed++) {
    for (const s of generateStatements(seed, PER_SEED)) {
      if (seen.has(s.sql) || s.params.length > 0) continue;
      seen.add(s.sql);
      await pg.run('BEGIN');
      const outcome = await pg.run(s.sql);
      await pg.run('ROLLBACK');
      if (outcome.kind === 'rows') out.push({ sql: s.sql, source: 'fuzz' });
    }
  }
  return out;
}

/** Statements of test/sql/*.slt that PostgreSQL runs without error, each file on a fresh schema. */
async function sltStatements(pg: PgSide): Promise<Sample[]> {
  const dir = path.join(repoRoot, 'test', 'sql');
  const out: Sample[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.slt'))
    .sort()) {
    await pg.run('DROP SCHEMA public CASCADE');
    await pg.run('CREATE SCHEMA public');
    for (const record of parseSlt(readFileSync(path.join(dir, file), 'utf8'))) {
      if (record.kind === 'halt') break;
      const outcome = await pg.run(record.sql);
      if (outcome.kind === 'rows') out.push({ sql: record.sql, source: 'slt' });
    }
  }
  return out;
}

interface Parser {
  readonly name: string;
  /** Loads the parser (module import, WebAssembly) and parses one statement: the process's first parse. */
  start(first: string): Promise<void>;
  cold(sql: string): void;
  steady(sql: string): void;
}

const svcdbParser = (): Parser => {
  let parseSql: ((sql: string) => unknown) | undefined;
  return {
    name: 'svcdb parseSql (libpg-query + translation to the owned AST)',
    async start(first) {
      ({ parseSql } = await import('../query/parse/index.js'));
      parseSql(first);
    },
    cold: (sql) => void parseSql!(sql),
    steady: (sql) => void parseSql!(sql),
  };
};

const pgParser = (): Parser => {
  let parseSync: ((sql: string) => unknown) | undefined;
  return {
    name: 'libpg-query parseSync',
    async start(first) {
      const lib = await import('libpg-query');
      await lib.loadModule();
      parseSync = lib.parseSync;
      parseSync(first);
    },
    cold: (sql) => void parseSync!(sql),
    steady: (sql) => void parseSync!(sql),
  };
};

const micros = (ms: number): number => Math.round(ms * 1000 * 10) / 10;
function percentile(sorted: readonly number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/** Times one parser over the samples: acceptance, first parse, cold and steady per statement. */
async function measure(parser: Parser, samples: readonly Sample[]): Promise<Record<string, unknown>> {
  const t0 = performance.now();
  await parser.start('SELECT 1');
  const firstParseMs = performance.now() - t0;
  const cold: number[] = [];
  const accepted = { fuzz: 0, slt: 0 };
  const rejected: string[] = [];
  const acceptedSql: string[] = [];
  for (const s of samples) {
    const t = performance.now();
    try {
      parser.cold(s.sql);
      cold.push(performance.now() - t);
      accepted[s.source] += 1;
      acceptedSql.push(s.sql);
    } catch {
      rejected.push(s.sql);
    }
  }
  const steady: number[] = [];
  for (const sql of acceptedSql) {
    parser.steady(sql); // the first call fills svcdb's template cache (1,024 shapes: round-robin over all would thrash it)
    for (let rep = 0; rep < REPS; rep++) {
      const t = performance.now();
      parser.steady(sql);
      steady.push(performance.now() - t);
    }
  }
  cold.sort((a, b) => a - b);
  steady.sort((a, b) => a - b);
  const total = { fuzz: samples.filter((s) => s.source === 'fuzz').length, slt: samples.filter((s) => s.source === 'slt').length };
  progress(`${parser.name}: rejected ${rejected.length}, e.g.\n  ${rejected.slice(0, 12).join('\n  ')}`);
  return {
    parser: parser.name,
    acceptance: Math.round(((accepted.fuzz + accepted.slt) / samples.length) * 10_000) / 10_000,
    acceptanceFuzz: Math.round((accepted.fuzz / Math.max(1, total.fuzz)) * 10_000) / 10_000,
    acceptanceSlt: Math.round((accepted.slt / Math.max(1, total.slt)) * 10_000) / 10_000,
    firstParseMs: Math.round(firstParseMs * 10) / 10,
    coldP50Us: micros(percentile(cold, 0.5)),
    coldP99Us: micros(percentile(cold, 0.99)),
    steadyP50Us: micros(percentile(steady, 0.5)),
    steadyP99Us: micros(percentile(steady, 0.99)),
  };
}

async function main(): Promise<void> {
  const pg = await PgSide.open();
  const samples = [...(await fuzzStatements(pg)), ...(await sltStatements(pg))];
  await pg.close();
  progress(`${samples.length} statements PostgreSQL accepts`);
  const which = process.env.BENCH_SPIKE_PARSER; // measure one parser per process for a fair first parse
  const parsers = [svcdbParser(), pgParser()].filter((p) => which === undefined || p.name.startsWith(which));
  const results = [];
  for (const parser of parsers) results.push(await measure(parser, samples));
  const line = {
    bench: 'parser-spike',
    statements: samples.length,
    fuzzStatements: samples.filter((s) => s.source === 'fuzz').length,
    sltStatements: samples.filter((s) => s.source === 'slt').length,
    parsers: results,
    machine: machineDescription(),
    date: new Date().toISOString(),
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

await main();
