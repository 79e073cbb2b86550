import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { SvcError } from '../core/errors.js';
import {
  SEARCH_PARAMS,
  type HnswCommand,
  type HnswRequest,
  type HnswRequestMessage,
  type HnswResponseMessage,
  type HnswSearchesResponse,
  type HnswSearchResult,
} from './hnsw-protocol.js';

const here = fileURLToPath(import.meta.url);
/**
 * The worker always runs compiled JavaScript: beside this file in dist/, or, when this module is
 * loaded as TypeScript (vitest), from dist/ at the project root (npm test builds first).
 */
const WORKER_FILE = here.endsWith('.ts')
  ? path.join(path.dirname(here), '..', 'dist', 'projections', 'hnsw-worker.js')
  : path.join(path.dirname(here), 'hnsw-worker.js');

interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * The main thread's handle on the hnsw worker thread (hnsw-worker.ts). Commands run in the order
 * they are posted. `post` does not wait (a failure is reported by the next `call`); `call` resolves
 * with the command's answer. After the worker fails, every call fails: the projection stops.
 * Calls wait in an outbox until the event loop's check phase (setImmediate), so the searches of all
 * the requests read in one round of I/O cross to the worker in one message; `post` sends the
 * outbox first, so the order of commands is the order of the calls. While calls sent earlier are
 * still unanswered (the worker is busy with them), new calls wait in the outbox until the last of
 * those answers comes back, then go in one message: under load one message (one wake-up of each
 * thread) carries several searches instead of one per round of I/O. They would have waited for the
 * worker anyway: it runs commands one at a time, in order. Searches next to each other in a message
 * travel packed (one 'searches' command: their vectors in one moved buffer) and are answered packed
 * (HnswSearchesResponse): a few typed arrays per message instead of objects and buffers per search.
 */
export class HnswWorker {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private failure: SvcError | null = null;
  private outbox: HnswRequest[] = [];
  private outboxTransfer: ArrayBuffer[] = [];
  private flushScheduled = false;
  /** Calls sent to the worker and not answered yet. */
  private unanswered = 0;

  private constructor(private readonly worker: Worker) {
    // The worker keeps the process alive only while an answer is awaited.
    worker.unref();
    worker.on('message', (responses: HnswResponseMessage) => {
      for (const response of responses) {
        if ('kind' in response) this.settleSearches(response);
        else if (response.ok) this.settle(response.id, response.value, null);
        else this.settle(response.id, null, response.message);
      }
      // The worker is done with what it was sent: the calls held meanwhile go now, together.
      if (this.unanswered === 0 && !this.flushScheduled) this.flush();
    });
    worker.on('error', (error) => this.fail(error));
    worker.on('exit', (code) => this.fail(new Error(`the hnsw worker exited with code ${code}`)));
  }

  static start(): HnswWorker {
    if (!existsSync(WORKER_FILE)) {
      throw new SvcError('STORAGE_UNAVAILABLE', `the hnsw worker ${WORKER_FILE} is missing: run \`npm run build\` first`, { file: WORKER_FILE });
    }
    return new HnswWorker(new Worker(WORKER_FILE));
  }

  /** Posts a command without waiting; typed arrays in `transfer` move to the worker. */
  post(command: HnswCommand, transfer: readonly ArrayBuffer[] = []): void {
    if (this.failure) throw this.failure;
    this.outbox.push({ id: 0, command });
    this.outboxTransfer.push(...transfer);
    this.flush();
  }

  /** Posts a command and resolves with its answer (or the first failure since the last answer). */
  call<T>(command: HnswCommand, transfer: readonly ArrayBuffer[] = []): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    if (this.pending.size === 0) this.worker.ref();
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.outbox.push({ id, command });
      this.outboxTransfer.push(...transfer);
      if (!this.flushScheduled && this.unanswered === 0) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Sends the outbox as one message (after a failure, its calls were rejected by `fail`). */
  private flush(): void {
    this.flushScheduled = false;
    if (this.outbox.length === 0 || this.failure) return;
    const transfer = this.outboxTransfer;
    for (const request of this.outbox) if (request.id !== 0) this.unanswered += 1;
    const message = packSearches(this.outbox, transfer);
    this.outbox = [];
    this.outboxTransfer = [];
    this.worker.postMessage(message, transfer);
  }

  /** Ends the worker (after the commands posted so far: callers sync first). */
  async close(): Promise<void> {
    // Terminating a worker thread while it still loads hnswlib-node's addon is fatal in Node (napi_throw
    // in the addon's Init, the whole process aborts): one answered round trip first says it has loaded.
    if (!this.failure) await this.call({ kind: 'sync' }).catch(() => undefined);
    this.failure ??= new SvcError('STORAGE_UNAVAILABLE', 'the vector indexes are closed', {});
    await this.worker.terminate();
  }

  /** Settles call `id` with its value, or rejects it with the worker's failure message. */
  private settle(id: number, value: unknown, failure: string | null): void {
    const waiter = this.pending.get(id);
    if (!waiter) return;
    this.pending.delete(id);
    this.unanswered -= 1;
    if (this.pending.size === 0) this.worker.unref();
    if (failure === null) waiter.resolve(value);
    else waiter.reject(new SvcError('STORAGE_UNAVAILABLE', `hnsw index: ${failure}`, {}));
  }

  /** Each search of a packed answer gets its hits: views of the answer's arrays, nearest first. */
  private settleSearches(response: HnswSearchesResponse): void {
    let hit = 0;
    let failure = 0;
    response.counts.forEach((count, i) => {
      const id = response.firstId + i;
      if (count < 0) return this.settle(id, null, response.failures[failure++]!);
      const found: HnswSearchResult = { labels: response.labels.subarray(hit, hit + count), distances: response.distances.subarray(hit, hit + count) };
      hit += count;
      this.settle(id, found, null);
    });
  }

  private fail(cause: unknown): void {
    this.failure ??= new SvcError('STORAGE_UNAVAILABLE', `the hnsw worker stopped: ${(cause as Error).message ?? String(cause)}`, {}, cause);
    for (const waiter of this.pending.values()) waiter.reject(this.failure);
    this.pending.clear();
    this.unanswered = 0;
    this.outbox = [];
    this.outboxTransfer = [];
  }
}

/**
 * The message for `requests`: each run of searches next to each other (consecutive ids: calls
 * posted one after another) becomes one 'searches' command, its vectors copied into one buffer
 * that moves to the worker (added to `transfer`). Everything else goes as it is, in order.
 */
function packSearches(requests: readonly HnswRequest[], transfer: ArrayBuffer[]): HnswRequestMessage {
  const message: HnswRequest[] = [];
  let run: { id: number; command: Extract<HnswCommand, { kind: 'search' }> }[] = [];
  const close = (): void => {
    if (run.length === 0) return;
    const params = new Float64Array(run.length * SEARCH_PARAMS);
    const vectors = new Float32Array(run.reduce((sum, r) => sum + r.command.vector.length, 0));
    let at = 0;
    run.forEach(({ command }, i) => {
      params.set([command.indexId, command.k, command.ef, command.vector.length], i * SEARCH_PARAMS);
      vectors.set(command.vector, at);
      at += command.vector.length;
    });
    message.push({ id: run[0]!.id, command: { kind: 'searches', firstId: run[0]!.id, params, vectors } });
    transfer.push(vectors.buffer);
    run = [];
  };
  for (const request of requests) {
    const command = request.command;
    if (command.kind !== 'search' || request.id === 0) {
      close();
      message.push(request);
      continue;
    }
    if (run.length > 0 && request.id !== run[run.length - 1]!.id + 1) close();
    run.push({ id: request.id, command });
  }
  close();
  return message;
}
