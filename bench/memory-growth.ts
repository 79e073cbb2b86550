/**
 * Where the mixed load's memory goes, in process: the SQL engine over a fresh data dir, the table
 * `s (id BIGINT PRIMARY KEY, n INTEGER NOT NULL)` preloaded with 10,000 rows, then BENCH_CONNS (32)
 * clients each running in turn a single-row insert (as POST rows makes it), a read by key of a
 * preloaded row and the aggregate `SELECT count(*), max(n) FROM s WHERE n > $1` (hot-paths'
 * memory case without HTTP). Prints the JS heap after two GCs (and RSS) every BENCH_SAMPLE_ROWS
 * inserted rows, the heap's growth per inserted row over the second half, and the scan cache's
 * counters. Run with `node --expose-gc`.
 * Env: BENCH_INSERTS (100,000), BENCH_SAMPLE_ROWS (25,000), BENCH_CONNS (32),
 * BENCH_SCAN_CACHE_ROWS_MAX / BENCH_SCAN_CACHE_BYTES_MAX (the engine's defaults; rows 0 turns the cache off).
 */
import { readFileSync } from 'node:fs';
import { silentLogger } from '../core/logger.js';
import { DEFAULT_SQL_LIMITS, SqlEngine, typeSystem } from '../query/index.js';
import { openStack, tempDir } from '../test/helpers/stack.js';
import { printBenchResult, progress, round2 } from './lib/print-result.js';

const PRELOAD = 10_000;
const INSERTS = Number(process.env.BENCH_INSERTS ?? 100_000);
const SAMPLE_ROWS = Number(process.env.BENCH_SAMPLE_ROWS ?? 25_000);
const CONNS = Number(process.env.BENCH_CONNS ?? 32);
const limitsFromEnv = (): Record<string, number> => {
  const out: Record<string, number> = {};
  if (process.env.BENCH_SCAN_CACHE_ROWS_MAX !== undefined) out.scanCacheRowsMax = Number(process.env.BENCH_SCAN_CACHE_ROWS_MAX);
  if (process.env.BENCH_SCAN_CACHE_BYTES_MAX !== undefined) out.scanCacheBytesMax = Number(process.env.BENCH_SCAN_CACHE_BYTES_MAX);
  return out;
};

const MIB = 1024 * 1024;

/** A field of /proc/self/status in MiB (RssAnon: malloc and V8; RssFile: mapped files, LevelDB's tables). */
function statusMiB(field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'));
  return match ? round2(Number(match[1]) / 1024) : NaN;
}

function heapAfterGc(): { heapMiB: number; heapTotalMiB: number; rssMiB: number; anonMiB: number; fileMiB: number; externalMiB: number } {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  gc();
  gc();
  const m = process.memoryUsage();
  // external includes arrayBuffers
  return {
    heapMiB: round2(m.heapUsed / MIB),
    heapTotalMiB: round2(m.heapTotal / MIB),
    rssMiB: round2(m.rss / MIB),
    anonMiB: statusMiB('RssAnon'),
    fileMiB: statusMiB('RssFile'),
    externalMiB: round2(m.external / MIB),
  };
}

async function main(): Promise<void> {
  const dir = await tempDir('svcdb-bench-memory-');
  const stack = await openStack(dir.dir, { segmentSizeBytesMax: 64 * MIB });
  const engine = new SqlEngine({
    projections: stack.projections,
    types: typeSystem,
    logger: silentLogger,
    limits: { ...DEFAULT_SQL_LIMITS, ...limitsFromEnv() },
  });
  const options = { timeoutMs: 30_000, maxRows: 10_000, tenant: 'default' };
  const q = (sql: string, params: unknown[] = []) => engine.execute(sql, { ...options, params });
  const samples: [number, number, number, number][] = [];
  try {
    await q('CREATE TABLE s (id BIGINT PRIMARY KEY, n INTEGER NOT NULL)');
    await q(`INSERT INTO s SELECT g, g % 1000 FROM generate_series(1, ${PRELOAD}) g`);
    const def = stack.projections.catalog.tableByName('default', 'public', 's')!.def;
    await q('SELECT count(*), max(n) FROM s WHERE n > $1', [0]);
    let nextId = PRELOAD + 1;
    let inserted = 0;
    let nextSample = 0;
    const sample = (): void => {
      const m = heapAfterGc();
      samples.push([inserted, m.heapMiB, m.rssMiB, m.externalMiB]);
      const cache = engine.scanCacheStats() as { rows: number; bytes?: number };
      const tail = stack.log.stats() as { tailCacheBytes?: number; tailCacheRecords?: number };
      const point = stack.projections.store.rowCacheSize();
      const level = round2((stack.projections.store.memoryBytes?.() ?? NaN) / MIB);
      const counted =
        `scan cache ${cache.rows} rows ${round2((cache.bytes ?? NaN) / MIB)} MiB; tail cache ${tail.tailCacheRecords} records ${round2((tail.tailCacheBytes ?? NaN) / MIB)} MiB; ` +
        `point cache ${point.rows} rows ${round2(point.bytes / MIB)} MiB; LevelDB memtables + block cache ${level} MiB`;
      progress(
        `${inserted} rows: heap ${m.heapMiB} MiB (V8 holds ${m.heapTotalMiB}), external ${m.externalMiB} MiB, rss ${m.rssMiB} MiB (anon ${m.anonMiB}, files ${m.fileMiB}); ${counted}`,
      );
      nextSample += SAMPLE_ROWS;
    };
    sample();
    const started = performance.now();
    let pausing: Promise<void> | null = null;
    const client = async (c: number): Promise<void> => {
      for (let i = c; inserted < INSERTS; i++) {
        if (pausing) await pausing;
        const kind = i % 3;
        if (kind === 0) {
          const id = nextId++;
          await engine.insertJson({ schema: null, table: 's', rows: [{ id, n: id % 1000 }], returning: ['*'], onConflict: null }, options);
          inserted += 1;
          if (inserted >= nextSample && !pausing) {
            // Every client stops at its next statement while the heap is measured.
            pausing = new Promise((resolve) => setTimeout(resolve, 50)).then(() => {
              sample();
              pausing = null;
            });
          }
        } else if (kind === 1) await engine.readByKey({ table: def, key: [String(1 + Math.floor(Math.random() * PRELOAD))], columns: ['id', 'n'] });
        else await q('SELECT count(*), max(n) FROM s WHERE n > $1', [Math.floor(Math.random() * 1000)]);
      }
    };
    await Promise.all(Array.from({ length: CONNS }, (_, c) => client(c)));
    const seconds = (performance.now() - started) / 1000;
    const last = pausing as Promise<void> | null; // a sample the last insert started
    if (last) await last;
    sample();
    const half = samples.filter(([rows]) => rows >= INSERTS / 2);
    const [r0, h0] = half[0]!;
    const [r1, h1] = half[half.length - 1]!;
    printBenchResult({
      bench: 'memory-growth',
      inserts: INSERTS,
      conns: CONNS,
      statementsPerSecond: round2((inserted * 3) / seconds),
      heapCurve: JSON.stringify(samples.map(([rows, heap]) => [rows, heap])),
      rssCurve: JSON.stringify(samples.map(([rows, , rss]) => [rows, rss])),
      externalCurve: JSON.stringify(samples.map(([rows, , , ext]) => [rows, ext])),
      heapBytesPerRowSecondHalf: r1 > r0 ? Math.round(((h1 - h0) * MIB) / (r1 - r0)) : 0,
      ...engine.scanCacheStats(),
    });
  } finally {
    await stack.close();
    await dir.remove();
  }
}

await main();
