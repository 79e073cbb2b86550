import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { SvcError } from '../core/errors.js';
import type { LogEntry } from '../log/index.js';
import { PROJECTION_LIMITS } from './limits.js';
import { packPayloads, WorkerCatalog, type PreparedChunk } from './replay-chunk.js';
import type { TablesPart, WrittenTable } from './replay-direct.js';

export type ReplayRequest =
  | { readonly kind: 'catalog'; readonly defs: readonly Uint8Array[] }
  | { readonly kind: 'prepare'; readonly id: number; readonly firstLsn: number; readonly bytes: Uint8Array; readonly ends: Uint32Array }
  | { readonly kind: 'tables'; readonly id: number; readonly part: TablesPart };

export type ReplayResponse =
  | { readonly id: number; readonly ok: true; readonly chunk: PreparedChunk }
  | { readonly id: number; readonly ok: true; readonly tables: WrittenTable[] }
  | { readonly id: number; readonly ok: false; readonly message: string };

const here = fileURLToPath(import.meta.url);
/** Compiled JavaScript, as for the hnsw worker: beside this file in dist/, or dist/ at the root under vitest. */
const WORKER_FILE = here.endsWith('.ts')
  ? path.join(path.dirname(here), '..', 'dist', 'projections', 'replay-worker.js')
  : path.join(path.dirname(here), 'replay-worker.js');

/** Prepares chunks of replayed records (decode + key/value effects) in log order. */
export interface Preparer {
  /** Threads preparing at once (how many chunks are worth sending ahead). */
  readonly size: number;
  /** Later chunks are prepared against these table definitions (catalog-codec bytes). */
  setCatalog(defs: readonly Uint8Array[]): void;
  prepare(entries: readonly LogEntry[]): Promise<PreparedChunk>;
  /** Writes part of replay's tables on another thread (replay-direct.ts); absent: the main thread writes them all. */
  readonly writeTables?: (part: TablesPart) => Promise<WrittenTable[]>;
  /** Most records in one chunk (absent: PROJECTION_LIMITS.replayChunkRecordsMax). */
  readonly chunkRecordsMax?: number;
  close(): Promise<void>;
}

/**
 * The preparer for a small log (or a single core): on the main thread, as the workers would,
 * sparing the start of a worker thread (tens of milliseconds) when there is little to replay.
 */
export function startPreparer(recordCount: number): Preparer {
  const threads = Math.min(PROJECTION_LIMITS.replayWorkersMax, availableParallelism() - 1);
  if (threads < 1 || recordCount < PROJECTION_LIMITS.replayWorkerRecordsMin) return new InThreadPreparer();
  // One worker (two cores) and a large log: the main thread prepares chunks too (SharedPreparer).
  if (threads === 1 && recordCount >= SHARED_RECORDS_MIN) return new SharedPreparer(ReplayPool.start(1));
  return ReplayPool.start(threads);
}

/**
 * Records from which the main thread shares the chunks with one worker. Below, its share does not
 * pay for warming up the decoding code on a second thread: `svcdb replay` of a server's 50,025-record
 * log took 0.15-0.3 CPU-s more with it, where a 200k-record log of 5-row records took the busiest
 * thread 0.1-0.3 CPU-s less (1.15-1.25 -> 0.95-1.12 s) for 0.1-0.35 s more in all.
 */
const SHARED_RECORDS_MIN = 100_000;
/** Chunks of this many records at most when the main thread prepares some: finer shares balance the two threads. */
const SHARED_CHUNK_RECORDS_MAX = 16_384;
/** Chunks queued per worker from which the main thread prepares the next chunk itself. */
const SHARED_WORKER_QUEUE = 2;

/**
 * One worker and the main thread both preparing chunks (two cores). With the worker alone, every
 * chunk waited for it while the main thread, which reads the log and hands the chunks on, was idle
 * about half of the replay (5-row records: the worker ~1.35 CPU-s, the main thread ~0.6 over a
 * 1M-row replay). A chunk goes to the worker unless it has SHARED_WORKER_QUEUE queued already;
 * then the main thread prepares it at once, while the worker works through its queue: each
 * thread takes as much as it has time for, whatever the records' shape or the machine's load.
 */
export class SharedPreparer implements Preparer {
  readonly chunkRecordsMax = SHARED_CHUNK_RECORDS_MAX;
  /** Chunks the main thread prepared (tests). */
  preparedHere = 0;
  private readonly inThread = new InThreadPreparer();

  constructor(private readonly pool: ReplayPool) {}

  /** The workers and the main thread. */
  get size(): number {
    return this.pool.size + 1;
  }

  setCatalog(defs: readonly Uint8Array[]): void {
    this.pool.setCatalog(defs);
    this.inThread.setCatalog(defs);
  }

  prepare(entries: readonly LogEntry[]): Promise<PreparedChunk> {
    if (this.pool.queued < SHARED_WORKER_QUEUE * this.pool.size) return this.pool.prepare(entries);
    this.preparedHere += 1;
    return this.inThread.prepare(entries);
  }

  readonly writeTables = (part: TablesPart): Promise<WrittenTable[]> => this.pool.writeTables(part);

  close(): Promise<void> {
    return this.pool.close();
  }
}

export class InThreadPreparer implements Preparer {
  readonly size = 1;
  private readonly catalog = new WorkerCatalog();

  setCatalog(defs: readonly Uint8Array[]): void {
    this.catalog.reset(defs);
  }

  prepare(entries: readonly LogEntry[]): Promise<PreparedChunk> {
    return Promise.resolve(this.catalog.prepareEntries(entries));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

interface Pending {
  resolve(result: PreparedChunk | WrittenTable[]): void;
  reject(error: unknown): void;
}

/**
 * Worker threads that prepare replayed records (decode + key/value effects), round robin: one per
 * core but the one the main thread (and LevelDB) keeps busy, within the limit. Each
 * worker answers in the order it was asked; the caller awaits chunks in log order.
 */
export class ReplayPool implements Preparer {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private nextWorker = 0;
  private failure: SvcError | null = null;

  private constructor(private readonly workers: readonly Worker[]) {
    for (const worker of workers) {
      worker.on('message', (response: ReplayResponse) => this.settle(response));
      worker.on('error', (error) => this.fail(error));
      worker.on('exit', (code) => this.fail(new Error(`a replay worker exited with code ${code}`)));
    }
  }

  static start(threads: number): ReplayPool {
    if (!existsSync(WORKER_FILE)) {
      throw new SvcError('STORAGE_UNAVAILABLE', `the replay worker ${WORKER_FILE} is missing: run \`npm run build\` first`, { file: WORKER_FILE });
    }
    return new ReplayPool(Array.from({ length: threads }, () => new Worker(WORKER_FILE)));
  }

  get size(): number {
    return this.workers.length;
  }

  /** Requests sent and not answered yet. */
  get queued(): number {
    return this.pending.size;
  }

  setCatalog(defs: readonly Uint8Array[]): void {
    for (const worker of this.workers) worker.postMessage({ kind: 'catalog', defs } satisfies ReplayRequest);
  }

  /** Prepares these consecutive records on the next worker. */
  prepare(entries: readonly LogEntry[]): Promise<PreparedChunk> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    const worker = this.workers[this.nextWorker++ % this.workers.length]!;
    const { bytes, ends } = packPayloads(entries);
    return new Promise<PreparedChunk>((resolve, reject) => {
      this.pending.set(id, { resolve: (result) => resolve(result as PreparedChunk), reject });
      const request: ReplayRequest = { kind: 'prepare', id, firstLsn: entries[0]!.lsn, bytes, ends };
      worker.postMessage(request, [bytes.buffer as ArrayBuffer, ends.buffer as ArrayBuffer]);
    });
  }

  /** On the first worker (by then idle: every chunk is prepared); the runs' buffers are moved to it. */
  readonly writeTables = (part: TablesPart): Promise<WrittenTable[]> => {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise<WrittenTable[]>((resolve, reject) => {
      this.pending.set(id, { resolve: (result) => resolve(result as WrittenTable[]), reject });
      const request: ReplayRequest = { kind: 'tables', id, part };
      this.workers[0]!.postMessage(request, [...new Set(part.runs.map((run) => run.buf.buffer as ArrayBuffer))]);
    });
  };

  async close(): Promise<void> {
    this.failure ??= new SvcError('STORAGE_UNAVAILABLE', 'the replay workers are closed', {});
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }

  private settle(response: ReplayResponse): void {
    const waiter = this.pending.get(response.id);
    if (!waiter) return;
    this.pending.delete(response.id);
    if (response.ok) waiter.resolve('chunk' in response ? response.chunk : response.tables);
    else waiter.reject(new SvcError('STORAGE_UNAVAILABLE', `replay worker: ${response.message}`, {}));
  }

  private fail(cause: unknown): void {
    this.failure ??= new SvcError('STORAGE_UNAVAILABLE', `a replay worker stopped: ${(cause as Error).message ?? String(cause)}`, {}, cause);
    for (const waiter of this.pending.values()) waiter.reject(this.failure);
    this.pending.clear();
  }
}
