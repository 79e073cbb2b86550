/**
 * The hnsw worker thread: owns every hnsw graph of one vector projection, so graph inserts and
 * searches (milliseconds of native CPU each) run beside the event loop instead of on it.
 * Commands come in order from hnsw-worker-client.ts; each is answered when it asks to be.
 */
import { parentPort } from 'node:worker_threads';
import { assert } from '../core/errors.js';
import { HnswIndex } from './hnsw-adapter.js';
import {
  DELETE_OP,
  REUSE_OP,
  type HnswCommand,
  type HnswRequest,
  type HnswRequestMessage,
  type HnswResponse,
  type HnswResponseMessage,
  type HnswSearchResult,
} from './hnsw-protocol.js';

const graphs = new Map<number, HnswIndex>();
/** Buffers of the answers being gathered, moved with them to the main thread. */
let transfers: ArrayBuffer[] = [];
/** The first failure of a command nobody awaits, reported by the next answer. */
let unreported: string | null = null;

function graph(indexId: number): HnswIndex {
  const found = graphs.get(indexId);
  assert(found, `hnsw index ${indexId} has no graph in the worker`);
  return found;
}

function apply(indexId: number, ops: Uint8Array, labels: Float64Array, vectors: Float32Array): void {
  const hnsw = graph(indexId);
  const dims = hnsw.options.dimensions;
  let at = 0;
  for (let i = 0; i < ops.length; i++) {
    if (ops[i] === DELETE_OP) {
      hnsw.markDeleted(labels[i]!);
      continue;
    }
    const reuse = ops[i] === REUSE_OP;
    if (!reuse && hnsw.slotCount >= hnsw.capacity) hnsw.resize({ elementCountMax: hnsw.capacity * 2 });
    hnsw.add({ vector: vectors.subarray(at, at + dims), label: labels[i]!, reuseDeletedSlot: reuse });
    at += dims;
  }
}

async function run(command: HnswCommand): Promise<unknown> {
  switch (command.kind) {
    case 'create':
      graphs.set(command.indexId, HnswIndex.create(command.options));
      return null;
    case 'read': {
      const hnsw = HnswIndex.read(command.file, command.options);
      graphs.set(command.indexId, hnsw);
      return hnsw.slotCount;
    }
    case 'apply':
      apply(command.indexId, command.ops, command.labels, command.vectors);
      return null;
    case 'drop':
      graphs.delete(command.indexId);
      return null;
    case 'search': {
      const hits = graphs.get(command.indexId)?.search({ vector: command.vector, k: command.k, ef: command.ef }) ?? [];
      const labels = new Float64Array(hits.length);
      const distances = new Float64Array(hits.length);
      hits.forEach((h, i) => {
        labels[i] = h.label;
        distances[i] = h.distance;
      });
      transfers.push(labels.buffer, distances.buffer);
      const found: HnswSearchResult = { labels, distances };
      return found;
    }
    case 'write': {
      const hnsw = graphs.get(command.indexId);
      if (!hnsw) return false;
      await hnsw.write(command.file);
      return true;
    }
    case 'sync':
      return null;
  }
}

/** Runs one request; its answer, or null when none is wanted (id 0: a failure waits for the next answer). */
async function answer(request: HnswRequest): Promise<HnswResponse | null> {
  try {
    const value = await run(request.command);
    if (request.id === 0) return null;
    return unreported !== null ? { id: request.id, ok: false, message: unreported } : { id: request.id, ok: true, value };
  } catch (error) {
    const message = (error as Error).message ?? String(error);
    if (request.id === 0) {
      unreported ??= message;
      return null;
    }
    return { id: request.id, ok: false, message };
  }
}

const port = parentPort;
assert(port !== null, 'hnsw-worker.js runs as a worker thread');
/**
 * Answers gathered longer than this go back at once: a batch of cheap searches shares one message
 * (one wake-up of the main thread), but an expensive one (a wide beam) does not hold back the
 * answers finished before it.
 */
const ANSWER_HOLD_MS = 0.2;

// One command at a time, in order: a write's await must not let a later add overtake it. The
// answers to one message go back together unless gathering them took longer than ANSWER_HOLD_MS.
let queue: Promise<void> = Promise.resolve();
const send = (responses: HnswResponseMessage): void => {
  const moved = transfers;
  transfers = [];
  port.postMessage(responses, moved);
};
port.on('message', (requests: HnswRequestMessage) => {
  queue = queue.then(async () => {
    const responses: HnswResponse[] = [];
    let since = performance.now();
    for (const request of requests) {
      // A graph write takes a while: the answers before it do not wait for it.
      if (request.command.kind === 'write' && responses.length > 0) send(responses.splice(0));
      const response = await answer(request);
      if (response === null) continue;
      responses.push(response);
      const now = performance.now();
      if (now - since >= ANSWER_HOLD_MS) {
        send(responses.splice(0));
        since = now;
      }
    }
    if (responses.length > 0) send(responses);
  });
});
