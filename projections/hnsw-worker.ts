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
  SEARCH_PARAMS,
  type HnswCommand,
  type HnswRequest,
  type HnswRequestMessage,
  type HnswResponse,
  type HnswSearchResult,
} from './hnsw-protocol.js';

const graphs = new Map<number, HnswIndex>();
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

/** Every command but 'write' (asynchronous) and 'searches' (answered in chunks by searches()). */
function run(command: Exclude<HnswCommand, { kind: 'write' | 'searches' }>): unknown {
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
      const hnsw = graphs.get(command.indexId);
      const room = hnsw === undefined ? 0 : Math.max(0, Math.min(command.k, hnsw.capacity));
      const labels = new Float64Array(room);
      const distances = new Float64Array(room);
      const found = hnsw === undefined ? 0 : hnsw.searchInto(command, labels, distances, 0);
      const value: HnswSearchResult = { labels: labels.subarray(0, found), distances: distances.subarray(0, found) };
      answers.transfers.push(labels.buffer, distances.buffer);
      return value;
    }
    case 'sync':
      return null;
  }
}

const messageOf = (error: unknown): string => (error as Error).message ?? String(error);

/** The answer to a request (null when none is wanted: id 0; its failure waits for the next answer). */
function answered(request: HnswRequest, value: unknown, failure: string | null): HnswResponse | null {
  if (request.id === 0) {
    if (failure !== null) unreported ??= failure;
    return null;
  }
  if (failure !== null) return { id: request.id, ok: false, message: failure };
  return unreported !== null ? { id: request.id, ok: false, message: unreported } : { id: request.id, ok: true, value };
}

function answerNow(request: HnswRequest & { command: Exclude<HnswCommand, { kind: 'write' | 'searches' }> }): HnswResponse | null {
  try {
    return answered(request, run(request.command), null);
  } catch (error) {
    return answered(request, null, messageOf(error));
  }
}

async function answerWrite(request: HnswRequest & { command: Extract<HnswCommand, { kind: 'write' }> }): Promise<HnswResponse | null> {
  try {
    const hnsw = graphs.get(request.command.indexId);
    if (!hnsw) return answered(request, false, null);
    await hnsw.write(request.command.file);
    return answered(request, true, null);
  } catch (error) {
    return answered(request, null, messageOf(error));
  }
}

const port = parentPort;
assert(port !== null, 'hnsw-worker.js runs as a worker thread');
/**
 * How long an answer may wait for the answers after it, so that they go back together (one message,
 * one wake-up of the main thread, for several searches): at ef 40 one search takes ~0.1-0.2 ms, so
 * several share a message (0.2 ms sent most answers alone or in pairs: the main thread woke once or
 * twice per search). A search expected to take the gathered answers past it (a wide beam) goes after
 * they are sent, so it does not hold back the answers finished before it.
 */
const ANSWER_HOLD_MS = 1;

/** The answers gathered since the last message to the main thread, and the buffers they move. */
const answers = {
  responses: [] as HnswResponse[],
  transfers: [] as ArrayBuffer[],
  since: performance.now(),
  /** Whether the answers gathered have waited (or would have, `aheadMs` from now) the hold. */
  due(aheadMs = 0): boolean {
    return performance.now() + aheadMs - this.since >= ANSWER_HOLD_MS;
  },
  send(): void {
    if (this.responses.length > 0) {
      const moved = this.transfers;
      const responses = this.responses;
      this.responses = [];
      this.transfers = [];
      port.postMessage(responses, moved);
    }
    this.since = performance.now();
  },
};

/** Per graph, milliseconds of search per unit of beam (max(ef, k)), a moving average: what the next search is expected to take. */
const msPerBeam = new Map<number, number>();

function expectedMs(indexId: number, beam: number): number {
  return (msPerBeam.get(indexId) ?? 0) * beam;
}

function learn(indexId: number, beam: number, ms: number): void {
  const sample = ms / Math.max(1, beam);
  const known = msPerBeam.get(indexId);
  msPerBeam.set(indexId, known === undefined ? sample : known * 0.8 + sample * 0.2);
}

/**
 * The searches of one 'searches' command, run in order: their answers go back packed (counts,
 * labels and distances of consecutive searches in three typed arrays), a chunk at a time when
 * gathering took ANSWER_HOLD_MS (or the next search would make it), the rest with the message's
 * other answers.
 */
function searches(command: Extract<HnswCommand, { kind: 'searches' }>): void {
  const { params, vectors } = command;
  const count = params.length / SEARCH_PARAMS;
  let room = 0;
  for (let i = 0; i < count; i++) room += Math.max(0, params[i * SEARCH_PARAMS + 1]!);
  const labels = new Float64Array(room);
  const distances = new Float64Array(room);
  const counts = new Int32Array(count);
  const failures: string[] = [];
  const chunk = { search: 0, hit: 0, failure: 0 };
  let hits = 0;
  /** The answers of searches chunk.search..end-1, packed, go with the gathered answers. */
  const gather = (end: number): void => {
    if (end <= chunk.search) return;
    const part = {
      kind: 'searches' as const,
      firstId: command.firstId + chunk.search,
      counts: counts.slice(chunk.search, end),
      labels: labels.slice(chunk.hit, hits),
      distances: distances.slice(chunk.hit, hits),
      failures: failures.slice(chunk.failure),
    };
    answers.responses.push(part);
    answers.transfers.push(part.counts.buffer, part.labels.buffer, part.distances.buffer);
    Object.assign(chunk, { search: end, hit: hits, failure: failures.length });
  };
  let vectorAt = 0;
  for (let i = 0; i < count; i++) {
    const at = i * SEARCH_PARAMS;
    const [indexId, k, ef, dims] = [params[at]!, params[at + 1]!, params[at + 2]!, params[at + 3]!];
    const vector = vectors.subarray(vectorAt, vectorAt + dims);
    vectorAt += dims;
    const beam = Math.max(ef, k);
    if ((i > chunk.search || answers.responses.length > 0) && answers.due(expectedMs(indexId, beam))) {
      gather(i);
      answers.send();
    }
    const started = performance.now();
    try {
      const hnsw = graphs.get(indexId);
      counts[i] = hnsw === undefined ? 0 : hnsw.searchInto({ vector, k, ef }, labels, distances, hits);
      hits += counts[i]!;
    } catch (error) {
      counts[i] = -1;
      failures.push(messageOf(error));
    }
    learn(indexId, beam, performance.now() - started);
    if (unreported !== null && counts[i]! >= 0) {
      hits -= counts[i]!;
      counts[i] = -1;
      failures.push(unreported);
    }
  }
  gather(count);
  if (answers.due()) answers.send();
}

/** Runs one message's requests in order; only a graph write waits (the event loop writes the file). */
async function runMessage(requests: HnswRequestMessage): Promise<void> {
  // The hold counts from the first answer this message gathers, not from the last message sent.
  if (answers.responses.length === 0) answers.since = performance.now();
  for (const request of requests) {
    const command = request.command;
    if (command.kind === 'searches') {
      searches(command);
      continue;
    }
    if (command.kind === 'write') {
      // A graph write takes a while: the answers before it do not wait for it.
      answers.send();
      const response = await answerWrite({ id: request.id, command });
      if (response !== null) answers.responses.push(response);
    } else {
      const response = answerNow({ id: request.id, command });
      if (response !== null) answers.responses.push(response);
    }
    if (answers.due()) answers.send();
  }
  answers.send();
}

// One command at a time, in order: a write's await must not let a later add overtake it. Messages
// that arrive meanwhile wait in `inbox`; one without a write runs start to end synchronously.
const inbox: HnswRequestMessage[] = [];
let running = false;
async function drain(): Promise<void> {
  running = true;
  for (let next = inbox.shift(); next !== undefined; next = inbox.shift()) await runMessage(next);
  running = false;
}
port.on('message', (requests: HnswRequestMessage) => {
  inbox.push(requests);
  if (!running) void drain();
});
