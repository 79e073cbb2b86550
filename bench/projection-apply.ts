/**
 * Projection apply: rows/s for small rows through the whole write path (sequencer -> log append
 * with group-committed fdatasync -> tables projection apply -> acknowledged), against raw
 * classic-level batch writes of the same keys and values in the same run.
 *
 * Fair by construction: the baseline gets the batch shape svcdb's apply has (consecutive
 * transactions coalesced into one LevelDB batch of up to APPLY_BATCH_BYTES, the projection's read
 * batch) and the same number in flight; the two alternate (baseline first in even rounds, svcdb
 * first in odd ones), and each figure is the mean over the rounds.
 * Env: BENCH_ROWS (default 1,000,000), BENCH_TXN_ROWS rows per transaction (default 1000),
 * BENCH_CONCURRENCY transactions (baseline: batches) in flight (default 8: a server has many
 * clients), BENCH_ROUNDS (default 2).
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
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
/** The server's default logReadBatchBytesMax: the most one apply batch (one LevelDB batch) covers. */
const APPLY_BATCH_BYTES = 4 * 1024 * 1024;

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
  const stack = await openStack(dir, { segmentSizeBytesMax: 64 * 1024 * 1024, readBatchBytesMax: APPLY_BATCH_BYTES });
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

/** Consecutive transactions coalesced into batches of up to APPLY_BATCH_BYTES of keys and values. */
function baselineBatches(txns: RowChange[][]): RowChange[][] {
  const batches: RowChange[][] = [];
  let current: RowChange[] = [];
  let bytes = 0;
  for (const changes of txns) {
    const size = changes.reduce((n, c) => n + c.key.length + c.after!.length, 0);
    if (current.length > 0 && bytes + size > APPLY_BATCH_BYTES) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(...changes);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

async function runBaseline(txns: RowChange[][]): Promise<number> {
  const { dir, remove } = await tempDir('svcdb-bench-level-');
  // The same LevelDB options as the projection store: the ratio measures svcdb, not tuning.
  const db = new ClassicLevel<Uint8Array, Uint8Array>(path.join(dir, 'db'), STORE_OPTIONS);
  await db.open();
  try {
    const batches = baselineBatches(txns);
    const started = performance.now();
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < batches.length) {
        const changes = batches[next++]!;
        await db.batch(changes.map((c) => ({ type: 'put' as const, key: keys.rowKey(1, c.key), value: c.after! })));
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    return performance.now() - started;
  } finally {
    await db.close();
    await remove();
  }
}

progress(`building ${ROWS} rows`);
const txns = buildTransactions();
const svcdbRates: number[] = [];
const baselineRates: number[] = [];
const runOne = async (side: 'baseline' | 'svcdb', round: number): Promise<void> => {
  progress(`round ${round + 1}/${ROUNDS}: ${side === 'baseline' ? 'baseline: raw classic-level batches' : 'svcdb: sequencer + log + apply'}`);
  if (side === 'baseline') baselineRates.push(ROWS / ((await runBaseline(txns)) / 1000));
  else svcdbRates.push(ROWS / ((await runSvcdb(txns)) / 1000));
};
for (let round = 0; round < ROUNDS; round++) {
  const order: ('baseline' | 'svcdb')[] = round % 2 === 0 ? ['baseline', 'svcdb'] : ['svcdb', 'baseline'];
  for (const side of order) await runOne(side, round);
}
const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const rowsPerSec = mean(svcdbRates);
const baselineRowsPerSec = mean(baselineRates);
printBenchResult({
  bench: 'projection-apply',
  rows: ROWS,
  rowsPerTxn: TXN_ROWS,
  concurrency: CONCURRENCY,
  applyBatchBytes: APPLY_BATCH_BYTES,
  rounds: ROUNDS,
  rowsPerSec: Math.round(rowsPerSec),
  baselineRowsPerSec: Math.round(baselineRowsPerSec),
  rowsPerSecByRound: svcdbRates.map(Math.round).join(' '),
  baselineRowsPerSecByRound: baselineRates.map(Math.round).join(' '),
  ratio: round2(rowsPerSec / baselineRowsPerSec),
  goal: 0.6,
});
