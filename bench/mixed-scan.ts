/**
 * Mixed load on one growing table, in process (no HTTP): CONNS concurrent clients, each running in
 * turn a single-row INSERT, a read by primary key and `SELECT count(*), max(n) FROM s WHERE n > $1`
 * (issue 16's mix). Prints statements/s and the mean latency of each kind, and the scan cache's
 * counters: with every write making the next scan cold, the scan dominates.
 * Env: BENCH_ROWS preloaded rows (default 10,000), BENCH_CONNS (32), BENCH_SECONDS (5),
 * BENCH_SCAN_CACHE_ROWS_MAX (the engine's default; 0 turns the cache off, as a baseline),
 * BENCH_REST=1: inserts and reads by key as the REST routes make them (insertJson, readByKey), not SQL.
 * Also prints the event loop's delay (p50/p99/max, ms): a scan that holds the loop delays every other request.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { silentLogger } from '../core/logger.js';
import { DEFAULT_SQL_LIMITS, SqlEngine, typeSystem } from '../query/index.js';
import { openStack, tempDir } from '../test/helpers/stack.js';
import { printBenchResult, progress, round2 } from './lib/print-result.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 10_000);
const CONNS = Number(process.env.BENCH_CONNS ?? 32);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const REST = process.env.BENCH_REST === '1';
const CACHE_ROWS = process.env.BENCH_SCAN_CACHE_ROWS_MAX === undefined ? DEFAULT_SQL_LIMITS.scanCacheRowsMax : Number(process.env.BENCH_SCAN_CACHE_ROWS_MAX);

async function main(): Promise<void> {
  const dir = await tempDir('svcdb-bench-mixed-');
  const stack = await openStack(dir.dir);
  const engine = new SqlEngine({
    projections: stack.projections,
    types: typeSystem,
    logger: silentLogger,
    limits: { ...DEFAULT_SQL_LIMITS, scanCacheRowsMax: CACHE_ROWS },
  });
  const options = { timeoutMs: 30_000, maxRows: 10_000, tenant: 'default' };
  const q = (sql: string, params: unknown[] = []) => engine.execute(sql, { ...options, params });
  try {
    await q('CREATE TABLE s (id BIGINT PRIMARY KEY, n INTEGER NOT NULL, note TEXT)');
    const def = stack.projections.catalog.tableByName('default', 'public', 's')?.def;
    for (let first = 0; first < ROWS; first += 1000) {
      const values = Array.from({ length: Math.min(1000, ROWS - first) }, (_, i) => `(${first + i}, ${(first + i) % 1000}, 'row ${first + i}')`);
      await q(`INSERT INTO s (id, n, note) VALUES ${values.join(', ')}`);
    }
    progress(`preloaded ${ROWS} rows`);
    await q('SELECT count(*), max(n) FROM s WHERE n > $1', [0]); // warm: the steady state is measured, not the first read
    let nextId = ROWS;
    const kinds = ['insert', 'point', 'scan'] as const;
    const time = { insert: 0, point: 0, scan: 0 };
    const count = { insert: 0, point: 0, scan: 0 };
    const endMs = Date.now() + SECONDS * 1000;
    const client = async (c: number): Promise<void> => {
      for (let i = c; Date.now() < endMs; i++) {
        const kind = kinds[i % 3]!;
        const start = performance.now();
        if (kind === 'insert') {
          const id = nextId++;
          if (REST) {
            const row = { id, n: id % 1000, note: `row ${id}` };
            await engine.insertJson({ schema: null, table: 's', rows: [row], returning: ['*'], onConflict: null }, options);
          } else await q('INSERT INTO s (id, n, note) VALUES ($1, $2, $3)', [id, id % 1000, `row ${id}`]);
        } else if (kind === 'point') {
          const id = Math.floor(Math.random() * ROWS);
          if (REST) await engine.readByKey({ table: def!, key: [String(id)], columns: ['id', 'n', 'note'] });
          else await q('SELECT id, n, note FROM s WHERE id = $1', [id]);
        } else await q('SELECT count(*), max(n) FROM s WHERE n > $1', [Math.floor(Math.random() * 1000)]);
        time[kind] += performance.now() - start;
        count[kind] += 1;
      }
    };
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const started = performance.now();
    await Promise.all(Array.from({ length: CONNS }, (_, c) => client(c)));
    const seconds = (performance.now() - started) / 1000;
    delay.disable();
    const total = count.insert + count.point + count.scan;
    const mean = (kind: (typeof kinds)[number]): number => round2(time[kind] / Math.max(1, count[kind]));
    printBenchResult({
      bench: 'mixed-scan',
      preloadRows: ROWS,
      conns: CONNS,
      scanCacheRowsMax: CACHE_ROWS,
      statementsPerSecond: round2(total / seconds),
      insertMeanMs: mean('insert'),
      pointMeanMs: mean('point'),
      scanMeanMs: mean('scan'),
      rest: REST,
      loopDelayP50Ms: round2(delay.percentile(50) / 1e6),
      loopDelayP99Ms: round2(delay.percentile(99) / 1e6),
      loopDelayMaxMs: round2(delay.max / 1e6),
      ...engine.scanCacheStats(),
    });
  } finally {
    await stack.close();
    await dir.remove();
  }
}

await main();
