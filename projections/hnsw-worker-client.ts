import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { SvcError } from '../core/errors.js';
import type { HnswCommand, HnswRequest, HnswRequestMessage, HnswResponse, HnswResponseMessage } from './hnsw-protocol.js';

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
 * worker anyway: it runs commands one at a time, in order.
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
      for (const response of responses) this.settle(response);
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
    const message: HnswRequestMessage = this.outbox;
    const transfer = this.outboxTransfer;
    this.outbox = [];
    this.outboxTransfer = [];
    for (const request of message) if (request.id !== 0) this.unanswered += 1;
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

  private settle(response: HnswResponse): void {
    const waiter = this.pending.get(response.id);
    if (!waiter) return;
    this.pending.delete(response.id);
    this.unanswered -= 1;
    if (this.pending.size === 0) this.worker.unref();
    if (response.ok) waiter.resolve(response.value);
    else waiter.reject(new SvcError('STORAGE_UNAVAILABLE', `hnsw index: ${response.message}`, {}));
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
