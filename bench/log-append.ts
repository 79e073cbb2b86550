/**
 * Log append throughput under group commit, against raw fs in the same run.
 *   log:      64 concurrent writers, each looping append(1 KiB) + await durable ('commit' policy).
 *   baseline: the same records written by one loop as batches of 64 (the concurrency):
 *             one write of the concatenated batch + one fdatasync, via fs/promises.
 * The two alternate in rounds of BENCH_RECORDS / 10, so load from elsewhere hits both alike.
 * Goal: log >= 0.8 x baseline. Records: BENCH_RECORDS (default 100000). MB = 10^6 bytes of payload.
 */
import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../core/logger.js';
import { MIB } from '../core/units.js';
import { openLog, type Log } from '../log/index.js';
import { printBenchResult, progress, round2 } from './lib/print-result.js';

const RECORD_BYTES = 1024;
const WRITERS = 64;
const GOAL = 0.8;

/** Rounds the two sides alternate in, so a burst of load from elsewhere hits both alike. */
const ROUNDS = 10;

function recordsFromEnv(): number {
  const raw = process.env.BENCH_RECORDS;
  const records = raw === undefined || raw === '' ? 100_000 : Number(raw);
  if (!Number.isSafeInteger(records) || records < WRITERS * ROUNDS) {
    throw new Error(`BENCH_RECORDS must be an integer >= ${WRITERS * ROUNDS}, got ${raw}`);
  }
  return records;
}

function makePayload(): Buffer {
  const payload = Buffer.alloc(RECORD_BYTES);
  for (let i = 0; i < RECORD_BYTES; i++) payload[i] = (i * 131) & 0xff;
  return payload;
}

/** Appends records with WRITERS concurrent writers; returns elapsed ms. */
async function logRound(log: Log, records: number, payload: Buffer): Promise<number> {
  let issued = 0;
  const started = performance.now();
  const writer = async (): Promise<void> => {
    while (issued < records) {
      issued++;
      await log.append(payload).durable;
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, writer));
  return performance.now() - started;
}

/** Writes records as batches of WRITERS: one write + one fdatasync each; returns elapsed ms. */
async function baselineRound(fh: FileHandle, records: number, payload: Buffer): Promise<number> {
  const started = performance.now();
  for (let written = 0; written < records; written += WRITERS) {
    const count = Math.min(WRITERS, records - written);
    await fh.write(Buffer.concat(Array.from({ length: count }, () => payload)));
    await fh.datasync();
  }
  return performance.now() - started;
}

async function main(): Promise<void> {
  const records = recordsFromEnv();
  const payload = makePayload();
  const root = await mkdtemp(join(tmpdir(), 'svcdb-bench-log-'));
  const log = await openLog({
    dir: join(root, 'log'),
    segmentSizeBytesMax: 64 * MIB,
    durability: 'commit',
    fsyncIntervalMs: 10,
    readBatchBytesMax: 4 * MIB,
    indexIntervalBytes: 64 * 1024,
    logger: silentLogger,
  });
  const fh = await open(join(root, 'baseline.bin'), 'a');
  try {
    // Warm-up of both paths (JIT, file system), not measured.
    await logRound(log, 2_000, payload);
    await baselineRound(fh, 2_000, payload);
    const statsBefore = log.stats();
    let logMs = 0;
    let baselineMs = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const count = Math.floor(records / ROUNDS) + (round < records % ROUNDS ? 1 : 0);
      // Alternate which side goes first.
      if (round % 2 === 0) baselineMs += await baselineRound(fh, count, payload);
      logMs += await logRound(log, count, payload);
      if (round % 2 === 1) baselineMs += await baselineRound(fh, count, payload);
      progress(`round ${round + 1}/${ROUNDS}: log ${logMs.toFixed(0)} ms, baseline ${baselineMs.toFixed(0)} ms so far`);
    }
    const stats = log.stats();
    const flushes = stats.flushCount - statsBefore.flushCount;
    progress(`log: ${stats.fsyncCount - statsBefore.fsyncCount} fdatasyncs, ${(records / flushes).toFixed(1)} records per flush`);
    const perSec = (ms: number): number => records / (ms / 1000);
    const mbPerSec = (ms: number): number => (perSec(ms) * RECORD_BYTES) / 1e6;
    printBenchResult({
      bench: 'log-append',
      records,
      recordsPerSec: Math.round(perSec(logMs)),
      mbPerSec: round2(mbPerSec(logMs)),
      baselineRecordsPerSec: Math.round(perSec(baselineMs)),
      baselineMbPerSec: round2(mbPerSec(baselineMs)),
      ratio: round2(baselineMs / logMs),
      goal: GOAL,
    });
  } finally {
    await log.close();
    await fh.close();
    await rm(root, { recursive: true, force: true });
  }
}

await main();
