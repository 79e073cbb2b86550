/**
 * The hot-paths cases that reuse other benchmarks or the CLI in a child process: replay
 * (bench/replay.ts, then `svcdb replay` on the run's data dir) and vector search under load
 * (bench/vector-http.ts). Their one JSON line is read back; their progress goes to stderr.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { progress, type BenchValue } from './print-result.js';
import { httpSql, svcdbTarget } from './hot-targets.js';
import type { SvcdbHost } from './svcdb-host.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const REPLAY_RECORDS = Number(process.env.BENCH_REPLAY_RECORDS ?? 200_000);
const REPLAY_RECORD_ROWS = 5;

/** Runs `node script args` with `env` added; resolves with its stdout when it exits 0. */
function runNode(script: string, args: readonly string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const kill = (): void => void child.kill('SIGTERM');
    process.once('exit', kill);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      process.off('exit', kill);
      if (code === 0) resolve(stdout);
      else reject(new Error(`${path.basename(script)} exited with ${code ?? signal}`));
    });
  });
}

/** The last JSON line of a bench's stdout. */
function benchJson(stdout: string): Record<string, unknown> {
  const line = stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(line) as Record<string, unknown>;
}

/**
 * bench/replay.ts twice: REPLAY_RECORDS single-row records (the shape of a single-row insert workload: the
 * records/s goal) and REPLAY_RECORDS x 5-row records (the rows/s goal; its records/s is printed too), then
 * `svcdb replay` on the svcdb data dir of this run (when there is one).
 */
export async function replayFigures(svcdb: SvcdbHost | null, result: Record<string, BenchValue>): Promise<void> {
  const replayOf = async (rowsPerRecord: number): Promise<Record<string, unknown>> => {
    progress(`replay: bench/replay.ts, ${REPLAY_RECORDS} records x ${rowsPerRecord} rows`);
    const env = { BENCH_RECORDS: String(REPLAY_RECORDS), BENCH_RECORD_ROWS: String(rowsPerRecord) };
    return benchJson(await runNode(path.join(here, '..', 'replay.js'), [], env));
  };
  const single = await replayOf(1);
  result.replay_single_records_per_s = single.recordsPerSec as number;
  progress(`replay: single-row records ${single.recordsPerSec} records/s (goal >= 200,000)`);
  const replay = await replayOf(REPLAY_RECORD_ROWS);
  result.replay_records = replay.records as number;
  result.replay_records_per_s = replay.recordsPerSec as number;
  result.replay_rows_per_s = replay.rowsPerSec as number;
  progress(`replay: ${REPLAY_RECORD_ROWS}-row records ${replay.recordsPerSec} records/s, ${replay.rowsPerSec} rows/s (goal >= 500,000 rows/s)`);
  if (svcdb === null) return;

  // The CLI on a data dir written by a real server: whatever this run's cases put there.
  const target = svcdbTarget((await svcdb.running()).url);
  let rows = 0;
  for (const table of ['t', 'ins', 'bulk', 's', 'v']) {
    const answer = (await httpSql(target, `SELECT count(*) AS n FROM ${table}`)) as { data: { n: number }[] };
    rows += Number(answer.data[0]!.n);
  }
  await svcdb.stop();
  progress(`replay: svcdb replay on the run's data dir (${rows} rows in its tables)`);
  const started = performance.now();
  const out = await runNode(path.join(here, '..', '..', 'bin', 'svcdb.js'), ['replay'], { SVC_DATA_DIR: svcdb.dataDir, SVC_LOG_LEVEL: 'warn' });
  const wallS = (performance.now() - started) / 1000;
  const match = /replayed (\d+) records in ([\d.]+) s/.exec(out);
  if (!match) throw new Error(`svcdb replay: unexpected output ${out}`);
  const records = Number(match[1]);
  const seconds = Number(match[2]);
  result.replay_cli_records = records;
  result.replay_cli_rows = rows;
  result.replay_cli_records_per_s = Math.round(records / seconds);
  result.replay_cli_rows_per_s = Math.round(rows / seconds);
  result.replay_cli_wall_s = Math.round(wallS * 100) / 100;
  progress(
    `svcdb replay: ${records} records, ${rows} rows in ${seconds} s (${result.replay_cli_records_per_s} records/s, ${result.replay_cli_rows_per_s} rows/s)`,
  );
}

/** bench/vector-http.ts in a child: at ef 40, QPS under autocannon load (REST and Pinecone) against raw hnswlib-node, and recall. */
export async function vectorFigures(result: Record<string, BenchValue>): Promise<void> {
  progress('vector: bench/vector-http.ts (BENCH_VECTORS etc. pass through)');
  const vector = benchJson(await runNode(path.join(here, '..', 'vector-http.js'), [], {}));
  for (const key of [
    'vectors',
    'raw_qps_ef40',
    'raw_recall_ef40',
    'rest_qps_load_ef40',
    'rest_qps_load_ratio_ef40',
    'rest_recall_ef40',
    'pinecone_qps_load_ef40',
    'pinecone_qps_load_ratio_ef40',
    'pinecone_recall_ef40',
  ]) {
    const value = vector[key];
    result[`vector_${key}`] = typeof value === 'number' ? value : null;
  }
  progress(
    `vector ef 40: REST ${vector.rest_qps_load_ef40} qps under load (${vector.rest_qps_load_ratio_ef40}x raw ${vector.raw_qps_ef40}), recall ${vector.rest_recall_ef40} (raw ${vector.raw_recall_ef40})`,
  );
}
