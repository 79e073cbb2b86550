/**
 * Single-row durable inserts in process (no HTTP): BENCH_SINGLE_WRITERS (14, about the records per
 * fdatasync the HTTP bench sees at 50 connections) concurrent writers insert one row each per
 * statement for BENCH_SINGLE_S (5) seconds after BENCH_SINGLE_WARMUP_S (3), as POST rows makes them
 * (insertJson) and as a prepared `INSERT ... VALUES ($1, $2, $3)` (execute). Prints inserts/s, the
 * process's CPU per insert (every thread: the fdatasyncs and LevelDB's writes are in the thread
 * pool) and records per fdatasync: CPU per insert is the steady figure on a shared machine.
 * BENCH_SINGLE_CASES=row,sql,direct picks the cases (direct: the INSERT as POST /query runs it, SqlEngine.preparedInsert).
 */
import { silentLogger } from '../core/logger.js';
import { DEFAULT_SQL_LIMITS, SqlEngine, typeSystem } from '../query/index.js';
import { openStack, tempDir, type Stack } from '../test/helpers/stack.js';
import { printBenchResult, progress, round2 } from './lib/print-result.js';

const WRITERS = Number(process.env.BENCH_SINGLE_WRITERS ?? 14);
const SECONDS = Number(process.env.BENCH_SINGLE_S ?? 5);
const WARMUP_S = Number(process.env.BENCH_SINGLE_WARMUP_S ?? 3);
const CASES = (process.env.BENCH_SINGLE_CASES ?? 'row,sql,direct').split(',');
const OPTIONS = { timeoutMs: 60_000, maxRows: 100_000, tenant: 'default' };

interface Figures {
  insertsPerSec: number;
  cpuUsPerInsert: number;
  recordsPerFdatasync: number;
}

/** `insert` run by WRITERS writers, each one statement at a time, for `seconds`. */
async function load(stack: Stack, insert: () => Promise<unknown>, seconds: number): Promise<Figures> {
  const until = performance.now() + seconds * 1000;
  let inserts = 0;
  const writer = async (): Promise<void> => {
    while (performance.now() < until) {
      await insert();
      inserts += 1;
    }
  };
  const fsyncsBefore = stack.log.stats().fsyncCount;
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: WRITERS }, writer));
  const used = process.cpuUsage(cpu);
  const wallS = (performance.now() - started) / 1000;
  const fsyncs = stack.log.stats().fsyncCount - fsyncsBefore;
  return {
    insertsPerSec: Math.round(inserts / wallS),
    cpuUsPerInsert: round2((used.user + used.system) / inserts),
    recordsPerFdatasync: round2(inserts / Math.max(1, fsyncs)),
  };
}

async function main(): Promise<void> {
  const result: { bench: string; [field: string]: string | number } = { bench: 'single-insert', writers: WRITERS };
  for (const name of CASES) {
    // A fresh data dir per case: each starts from an empty table, as the HTTP bench's do.
    const dir = await tempDir('svcdb-bench-single-');
    const stack = await openStack(dir.dir, { segmentSizeBytesMax: 64 * 1024 * 1024 });
    try {
      const engine = new SqlEngine({ projections: stack.projections, types: typeSystem, logger: silentLogger, limits: DEFAULT_SQL_LIMITS });
      await engine.execute('CREATE TABLE ins (id BIGINT PRIMARY KEY, name TEXT NOT NULL, amount DOUBLE PRECISION NOT NULL)', OPTIONS);
      let nextId = 1;
      const insert =
        name === 'row'
          ? () => {
              const id = nextId++;
              return engine.insertJson(
                { schema: null, table: 'ins', rows: [{ id, name: `name-${id}`, amount: id * 1.5 }], returning: [], onConflict: null },
                OPTIONS,
              );
            }
          : () => {
              const id = nextId++;
              const sql = 'INSERT INTO ins (id, name, amount) VALUES ($1, $2, $3)';
              const options = { ...OPTIONS, params: [id, `name-${id}`, id * 1.5] };
              // 'direct': as POST /query runs it (the prepared INSERT straight to its insert once bound).
              return (name === 'direct' ? engine.preparedInsert(sql, options) : undefined) ?? engine.execute(sql, options);
            };
      await load(stack, insert, WARMUP_S);
      const figures = await load(stack, insert, SECONDS);
      result[`${name}_inserts_per_s`] = figures.insertsPerSec;
      result[`${name}_cpu_us_per_insert`] = figures.cpuUsPerInsert;
      result[`${name}_records_per_fdatasync`] = figures.recordsPerFdatasync;
      progress(`${name}: ${JSON.stringify(figures)}`);
    } finally {
      await stack.close();
      await dir.remove();
    }
  }
  printBenchResult(result);
}

await main();
