/**
 * Projection apply: rows/s for small rows through the whole write path (sequencer -> log append
 * with group-committed fdatasync -> tables projection apply -> acknowledged), against raw
 * classic-level batch writes of the same keys and values in the same run.
 * Env: BENCH_ROWS (default 1,000,000), BENCH_TXN_ROWS rows per transaction (default 1000),
 * BENCH_CONCURRENCY transactions in flight (default 8: a server has many clients).
 */
import { ClassicLevel } from 'classic-level';
import path from 'node:path';
import { keys, STORE_OPTIONS } from '../projections/index.js';
import { itemImage, itemKey, itemsTable, openStack, tempDir, txn } from '../test/helpers/stack.js';
import type { RowChange } from '../core/log-records.js';
import { printBenchResult, progress, round2 } from './lib/print-result.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const TXN_ROWS = Number(process.env.BENCH_TXN_ROWS ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);

const table = itemsTable(1);

/** The same rows for both sides: pre-encoded so both measure storage, not row building. */
function buildTransactions(): RowChange[][] {
  const txns: RowChange[][] = [];
  for (let first = 0; first < ROWS; first += TXN_ROWS) {
    const changes: RowChange[] = [];
    for (let id = first; id < Math.min(ROWS, first + TXN_ROWS); id++) {
      const row = { id: BigInt(id), name: `user-${id}`, score: id % 1000 };
      changes.push({ kind: 'row', tableId: 1, op: 'insert', key: itemKey(row.id), before: null, after: itemImage(table, row) });
    }
    txns.push(changes);
  }
  return txns;
}

async function runSvcdb(txns: RowChange[][]): Promise<number> {
  const { dir, remove } = await tempDir('svcdb-bench-apply-');
  // The server's defaults: 64 MiB segments, 4 MiB read batches.
  const stack = await openStack(dir, { segmentSizeBytesMax: 64 * 1024 * 1024, readBatchBytesMax: 4 * 1024 * 1024 });
  try {
    await stack.projections.sequencer.submit(async () => ({ record: txn([{ kind: 'put_table', table }]), result: null }));
    const started = performance.now();
    let next = 0;
    let done = 0;
    const worker = async (): Promise<void> => {
      while (next < txns.length) {
        const changes = txns[next++]!;
        await stack.projections.sequencer.submit(async () => ({ record: txn(changes), result: null }));
        done += changes.length;
        if (done % 200_000 < TXN_ROWS) progress(`svcdb: ${done} rows`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const elapsedMs = performance.now() - started;
    if (stack.projections.catalog.table(1)!.stats.rowCount !== ROWS) throw new Error('row count mismatch');
    return elapsedMs;
  } finally {
    await stack.close();
    await remove();
  }
}

async function runBaseline(txns: RowChange[][]): Promise<number> {
  const { dir, remove } = await tempDir('svcdb-bench-level-');
  // The same LevelDB options as the projection store: the ratio measures svcdb, not tuning.
  const db = new ClassicLevel<Uint8Array, Uint8Array>(path.join(dir, 'db'), STORE_OPTIONS);
  await db.open();
  try {
    const started = performance.now();
    for (const changes of txns) {
      await db.batch(changes.map((c) => ({ type: 'put' as const, key: keys.rowKey(1, c.key), value: c.after! })));
    }
    return performance.now() - started;
  } finally {
    await db.close();
    await remove();
  }
}

progress(`building ${ROWS} rows`);
const txns = buildTransactions();
progress('baseline: raw classic-level batches');
const baselineMs = await runBaseline(txns);
progress('svcdb: sequencer + log + apply');
const svcdbMs = await runSvcdb(txns);
const rowsPerSec = ROWS / (svcdbMs / 1000);
const baselineRowsPerSec = ROWS / (baselineMs / 1000);
printBenchResult({
  bench: 'projection-apply',
  rows: ROWS,
  rowsPerTxn: TXN_ROWS,
  concurrency: CONCURRENCY,
  rowsPerSec: Math.round(rowsPerSec),
  baselineRowsPerSec: Math.round(baselineRowsPerSec),
  ratio: round2(rowsPerSec / baselineRowsPerSec),
  goal: 0.6,
});
