/**
 * One row written and read in turn while many others sit in the point-read cache (a counter row, a
 * job's status), in process: BENCH_HOT_ROWS (100,000) rows are written and read once, then
 * BENCH_HOT_CYCLES (200,000) cycles each put the hot row and read it back through getRowSync.
 * Prints µs per cycle (median and worst of windows of 20,000 cycles) against the same cycles with
 * only the hot row cached (the baseline, measured in the same run): a look-up must not grow with
 * the cycles (a key deleted and set again in a large Map did: up to ~0.5 ms per look-up).
 */
import { keys, openStateStore, RowVersionedStore } from '../projections/index.js';
import type { TableId } from '../core/catalog.js';
import { tempDir } from '../test/helpers/stack.js';
import { median, printBenchResult, progress, round2 } from './lib/print-result.js';

const ROWS = Number(process.env.BENCH_HOT_ROWS ?? 100_000);
const CYCLES = Number(process.env.BENCH_HOT_CYCLES ?? 200_000);
const WINDOW = 20_000;
const TABLE = 7 as TableId;

const key = (n: number): Uint8Array => keys.rowKey(TABLE, Buffer.from(String(n).padStart(8, '0')));

/** µs per cycle of each window of WINDOW cycles, with `cached` other rows in the cache. */
async function cycles(cached: number): Promise<number[]> {
  const { dir, remove } = await tempDir('svcdb-hot-row-');
  const store = new RowVersionedStore(await openStateStore(dir));
  try {
    for (let from = 0; from < cached; from += 10_000) {
      const ops = [];
      for (let n = from; n < Math.min(cached, from + 10_000); n++) ops.push({ type: 'put' as const, key: key(n), value: Buffer.from(`row ${n}`) });
      await store.write(ops);
    }
    for (let n = 0; n < cached; n++) store.getRowSync!(TABLE, key(n));
    const hot = key(cached + 1);
    const windows: number[] = [];
    let started = performance.now();
    for (let cycle = 1; cycle <= CYCLES; cycle++) {
      await store.write([{ type: 'put', key: hot, value: Buffer.from(`hot ${cycle}`) }]);
      store.getRowSync!(TABLE, hot);
      if (cycle % WINDOW === 0) {
        const now = performance.now();
        windows.push(((now - started) * 1000) / WINDOW);
        started = now;
        progress(`hot-row: ${cached} cached, ${cycle} cycles, ${round2(windows.at(-1)!)} µs per cycle`);
      }
    }
    return windows;
  } finally {
    await store.close();
    await remove();
  }
}

const small = await cycles(0);
const large = await cycles(ROWS);
printBenchResult({
  bench: 'hot-row',
  cachedRows: ROWS,
  cycles: CYCLES,
  usPerCycleMedian: round2(median(large)),
  usPerCycleWorstWindow: round2(Math.max(...large)),
  baselineUsPerCycleMedian: round2(median(small)),
  baselineUsPerCycleWorstWindow: round2(Math.max(...small)),
  ratioWorst: round2(Math.max(...large) / Math.max(...small)),
});
