/**
 * Replay: records/s (and rows/s) rebuilding every projection from the log, as `svcdb replay`
 * does, with the CPU time it took. Env: BENCH_RECORDS (default 200,000), BENCH_RECORD_ROWS rows per record (default 5;
 * 1 is the shape of a single-row insert workload, records/s; more rows per record measure rows/s);
 * The result also says what the server finds after the swap: LevelDB's level-0 tables and how long the first
 * 200 single puts take (a replay that leaves many level-0 tables stalls them), the process's peak RSS, and the
 * phase split: the end (finishMs: tables written, reopened, read back) against everything before it.
 * BENCH_REPLAY_DIR keeps the data directory there (its log is written once, later runs only replay it:
 * profiles and before/after comparisons on the same log); BENCH_REPLAY_WORKERS sets the replay's worker threads (default: svcdb's choice:
 * on two cores one worker and, from 100,000 records, the main thread sharing the chunks; BENCH_REPLAY_WORKERS=1 is the worker alone).
 */
import { encodeLogRecord, type RowChange } from '../core/log-records.js';
import { silentLogger } from '../core/logger.js';
import { openStateStore, prepareDataDir, rebuildProjections } from '../projections/index.js';
import { STORE_OPTIONS } from '../projections/state-store.js';
import { ClassicLevel } from 'classic-level';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import type { Log } from '../log/index.js';
import { itemImage, itemKey, itemsTable, openLogAt, tempDir, txn } from '../test/helpers/stack.js';
import { printBenchResult, progress } from './lib/print-result.js';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 200_000);
const RECORD_ROWS = Number(process.env.BENCH_RECORD_ROWS ?? 5);
const APPENDS_IN_FLIGHT = 256;

const table = itemsTable(1, { scoreIndexId: 2 });
const kept = process.env.BENCH_REPLAY_DIR;
const { dir, remove } = kept ? { dir: kept, remove: async () => {} } : await tempDir('svcdb-bench-replay-');
try {
  const reuse = kept !== undefined && existsSync(`${kept}/log-written`);
  const layout = await prepareDataDir(dir, { create: true });
  const log = await openLogAt(layout.logDir, { segmentSizeBytesMax: 64 * 1024 * 1024 });
  if (!reuse) await writeLog(log);
  if (kept && !reuse) await mkdir(`${kept}/log-written`);
  const liveStore = await openStateStore(layout.stateDir);
  progress('replaying');
  const threadsStarted = threadCpuMs();
  const started = performance.now();
  const cpuStarted = process.cpuUsage();
  const { records, rows, levelZeroFiles, finishMs, finishCpuMs } = await rebuildProjections({
    log,
    layout,
    liveStore,
    batchBytesMax: 4 * 1024 * 1024,
    logger: silentLogger,
    ...(process.env.BENCH_REPLAY_WORKERS === undefined ? {} : { workerThreads: Number(process.env.BENCH_REPLAY_WORKERS) }),
    onProgress: ({ recordsDone }) => {
      if (recordsDone % 50_000 < 100) progress(`replayed ${recordsDone}`);
    },
  });
  const elapsedSec = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuStarted);
  const cpuSec = (cpu.user + cpu.system) / 1e6;
  const threads = threadCpuMs();
  await log.close();
  const afterSwap = await firstPuts(layout.stateDir);
  printBenchResult({
    bench: 'replay',
    records,
    // From what was replayed (a kept log may have been written with another BENCH_RECORD_ROWS).
    rowsPerRecord: Math.round((rows / Math.max(1, records - 1)) * 100) / 100,
    secondaryIndexes: 1,
    recordsPerSec: Math.round(records / elapsedSec),
    rowsPerSec: Math.round(rows / elapsedSec),
    // CPU seconds of every thread (main, replay workers, LevelDB's): on a busy machine, records per
    // CPU second compares runs better than wall-clock rates do.
    cpuSec: Math.round(cpuSec * 100) / 100,
    recordsPerCpuSec: Math.round(records / cpuSec),
    // The phase split: the end (tables written, store reopened and read back) and everything before it
    // (opening the scratch store, reading, decoding and applying the log), wall and CPU (all threads).
    finishMs,
    finishCpuMs,
    beforeFinishMs: Math.round(elapsedSec * 1000 - finishMs),
    beforeFinishCpuMs: Math.round(cpuSec * 1000 - finishCpuMs),
    // LevelDB's level-0 tables left for the server (past 8 its first writes slow down, at 12 they stop).
    levelZeroFiles,
    serverLevelZeroFiles: afterSwap.levelZeroFiles,
    first200PutsMs: afterSwap.putsMs,
    maxRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    // CPU ms of the busiest threads during the replay (main = the process's first; the others by
    // their kernel name; "ended" = threads gone by the end, the replay's workers): on 2 cores the
    // replay cannot take less wall time than its busiest thread.
    threadCpuMs: busiest(threadsStarted, threads, cpuSec * 1000),
  });
} finally {
  await remove();
}

/**
 * The swapped-in store opened as a server opens it: its level-0 tables, and the time of 200 single
 * puts one after another (keys of a space no projection uses: the next replay drops them).
 */
async function firstPuts(stateDir: string): Promise<{ levelZeroFiles: number; putsMs: number }> {
  const db = new ClassicLevel<Uint8Array, Uint8Array>(stateDir, STORE_OPTIONS);
  await db.open();
  try {
    const levelZeroFiles = Number(db.getProperty('leveldb.num-files-at-level0'));
    const started = performance.now();
    for (let i = 0; i < 200; i++) await db.put(Uint8Array.of(0xe0, i), new Uint8Array(100));
    return { levelZeroFiles, putsMs: Math.round(performance.now() - started) };
  } finally {
    await db.close();
  }
}

/** CPU ms (user + system) of each thread of this process, by task id (Linux /proc; empty elsewhere). */
function threadCpuMs(): Map<string, { name: string; ms: number }> {
  const threads = new Map<string, { name: string; ms: number }>();
  try {
    const ticksPerMs = 100 / 1000; // USER_HZ is 100 on Linux
    for (const tid of readdirSync('/proc/self/task')) {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const name = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' ');
      // Fields 14 and 15 of stat (utime, stime), counted from the state (field 3) after the name.
      threads.set(tid, { name: tid === String(process.pid) ? 'main' : name, ms: (Number(fields[11]) + Number(fields[12])) / ticksPerMs });
    }
  } catch {
    // Not Linux: no per-thread figures.
  }
  return threads;
}

/** The threads that used more than 50 ms between the two readings, busiest first, as "name": ms. */
function busiest(before: Map<string, { name: string; ms: number }>, after: Map<string, { name: string; ms: number }>, totalMs: number): string {
  const used: [string, number][] = [];
  let left = totalMs;
  for (const [tid, { name, ms }] of after) {
    const delta = ms - (before.get(tid)?.ms ?? 0);
    left -= delta;
    if (delta > 50) used.push([name, Math.round(delta)]);
  }
  used.push(['ended', Math.round(left)]);
  return used
    .sort((a, b) => b[1] - a[1])
    .map(([name, ms]) => `${name} ${ms}`)
    .join(', ');
}

/** RECORDS records of RECORD_ROWS new rows each, after the table's definition. */
async function writeLog(log: Log): Promise<void> {
  progress(`writing ${RECORDS} records of ${RECORD_ROWS} rows`);
  await log.append(encodeLogRecord(txn([{ kind: 'put_table', table }]))).durable;
  let inFlight: Promise<void>[] = [];
  for (let r = 0; r < RECORDS; r++) {
    const changes: RowChange[] = [];
    for (let i = 0; i < RECORD_ROWS; i++) {
      const id = BigInt(r * RECORD_ROWS + i);
      changes.push({
        kind: 'row',
        tableId: 1,
        op: 'insert',
        key: itemKey(id),
        before: null,
        after: itemImage(table, { id, name: `user-${id}`, score: Number(id % 1000n) }),
      });
    }
    inFlight.push(log.append(encodeLogRecord(txn(changes))).durable);
    if (inFlight.length >= APPENDS_IN_FLIGHT) {
      await Promise.all(inFlight);
      inFlight = [];
    }
  }
  await Promise.all(inFlight);
}
