/**
 * Multi-row inserts in process (no HTTP, no JSON body parse): BENCH_MANY_STATEMENTS (20) bulk inserts of
 * BENCH_MANY_ROWS (10,000) rows as the REST bulk route makes them (insertJson), then as many
 * 1,000-row `INSERT INTO v VALUES ...` statements through the SQL engine, one at a time, durable.
 * Prints rows/s, CPU and wall time per statement, and the log's fdatasync latency on this disk
 * (the part of a statement's wall time that is waiting, not work).
 * BENCH_MANY_CASES=bulk,values picks the cases.
 */
import { open, rm } from 'node:fs/promises';
import path from 'node:path';
import { silentLogger } from '../core/logger.js';
import { DEFAULT_SQL_LIMITS, SqlEngine, typeSystem } from '../query/index.js';
import { openStack, tempDir } from '../test/helpers/stack.js';
import { printBenchResult, progress, round2 } from './lib/print-result.js';

const STATEMENTS = Number(process.env.BENCH_MANY_STATEMENTS ?? 20);
const BULK_ROWS = Number(process.env.BENCH_MANY_ROWS ?? 10_000);
const VALUES_ROWS = 1000;
const CASES = new Set((process.env.BENCH_MANY_CASES ?? 'bulk,values').split(','));

interface Timing {
  rowsPerSec: number;
  cpuMsPerStatement: number;
  wallMsPerStatement: number;
}

async function timed(statements: number, rows: number, run: (i: number) => Promise<void>): Promise<Timing> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < statements; i++) await run(i);
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return {
    rowsPerSec: Math.round((statements * rows) / (wallMs / 1000)),
    cpuMsPerStatement: round2((used.user + used.system) / 1000 / statements),
    wallMsPerStatement: round2(wallMs / statements),
  };
}

/** Median time of an fdatasync after a write of `bytes` to a file in `dir`. */
async function fdatasyncMs(dir: string, bytes: number, times: number): Promise<number> {
  const file = path.join(dir, 'fdatasync.tmp');
  const handle = await open(file, 'w');
  const samples: number[] = [];
  try {
    const block = Buffer.alloc(bytes, 7);
    for (let i = 0; i < times; i++) {
      await handle.write(block);
      const started = performance.now();
      await handle.datasync();
      samples.push(performance.now() - started);
    }
  } finally {
    await handle.close();
    await rm(file, { force: true });
  }
  samples.sort((a, b) => a - b);
  return round2(samples[Math.floor(samples.length / 2)]!);
}

async function main(): Promise<void> {
  const dir = await tempDir('svcdb-bench-many-');
  const stack = await openStack(dir.dir, { segmentSizeBytesMax: 64 * 1024 * 1024, readBatchBytesMax: 4 * 1024 * 1024 });
  const engine = new SqlEngine({ projections: stack.projections, types: typeSystem, logger: silentLogger, limits: DEFAULT_SQL_LIMITS });
  const options = { timeoutMs: 60_000, maxRows: 100_000, tenant: 'default' };
  const result: { bench: string; [field: string]: string | number } = { bench: 'many-insert' };
  const put = (name: string, t: Timing): void => {
    result[`${name}_rows_per_s`] = t.rowsPerSec;
    result[`${name}_cpu_ms_per_statement`] = t.cpuMsPerStatement;
    result[`${name}_wall_ms_per_statement`] = t.wallMsPerStatement;
  };
  try {
    await engine.execute('CREATE TABLE bulk (id BIGINT PRIMARY KEY, name TEXT NOT NULL, amount DOUBLE PRECISION NOT NULL)', options);
    await engine.execute('CREATE TABLE v (id BIGINT PRIMARY KEY, name TEXT NOT NULL, amount DOUBLE PRECISION NOT NULL)', options);
    if (CASES.has('bulk')) {
      const bodies = Array.from({ length: STATEMENTS }, (_, s) =>
        JSON.stringify(
          Array.from({ length: BULK_ROWS }, (_, i) => {
            const id = s * BULK_ROWS + i + 1;
            return { id, name: `name-${id}`, amount: id * 1.5 };
          }),
        ),
      );
      // The route parses its body: each statement parses its own text here, as the server would.
      const bulk = await timed(STATEMENTS, BULK_ROWS, async (s) => {
        const rows = JSON.parse(bodies[s]!) as Record<string, unknown>[];
        await engine.insertJson({ schema: null, table: 'bulk', rows, returning: [], onConflict: null }, options);
      });
      put('bulk', bulk);
      progress(`bulk: ${JSON.stringify(bulk)}`);
    }
    if (CASES.has('values')) {
      const texts = Array.from({ length: STATEMENTS }, (_, s) => {
        const values: string[] = [];
        for (let i = 0; i < VALUES_ROWS; i++) {
          const id = s * VALUES_ROWS + i + 1;
          values.push(`(${id}, 'name-${id}', ${id * 1.5})`);
        }
        return `INSERT INTO v VALUES ${values.join(', ')}`;
      });
      const values = await timed(STATEMENTS, VALUES_ROWS, async (s) => {
        await engine.execute(texts[s]!, options);
      });
      put('values_1000', values);
      progress(`values_1000: ${JSON.stringify(values)}`);
    }
    result.fdatasync_ms_600k = await fdatasyncMs(stack.layout.logDir, 600 * 1024, 10);
    result.fdatasync_ms_60k = await fdatasyncMs(stack.layout.logDir, 60 * 1024, 10);
  } finally {
    await stack.close();
    await dir.remove();
  }
  printBenchResult(result);
}

await main();
