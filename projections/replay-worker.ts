/**
 * A replay worker thread: decodes log records and computes their row and index key/value effects
 * beside the main thread, which only hands them to LevelDB (replay-pool.ts posts the work).
 * Messages are handled in the order they come, so a catalog sent before a chunk applies to it.
 */
import { parentPort } from 'node:worker_threads';
import { assert } from '../core/errors.js';
import { WorkerCatalog } from './replay-chunk.js';
import { writeTables } from './replay-direct.js';
import type { ReplayRequest, ReplayResponse } from './replay-pool.js';

const catalog = new WorkerCatalog();
const port = parentPort;
assert(port, 'replay-worker.ts runs as a worker thread');

port.on('message', (request: ReplayRequest) => {
  if (request.kind === 'catalog') {
    catalog.reset(request.defs);
    return;
  }
  if (request.kind === 'tables') {
    const { runs, dir, firstNumber, tableBytes } = request.part;
    writeTables(runs, dir, firstNumber, tableBytes).then(
      (tables) => port.postMessage({ id: request.id, ok: true, tables } satisfies ReplayResponse),
      (error: unknown) => port.postMessage({ id: request.id, ok: false, message: (error as Error).message ?? String(error) } satisfies ReplayResponse),
    );
    return;
  }
  try {
    const { chunk, transfer } = catalog.prepare({ bytes: request.bytes, ends: request.ends }, request.firstLsn);
    port.postMessage({ id: request.id, ok: true, chunk } satisfies ReplayResponse, transfer);
  } catch (error) {
    port.postMessage({ id: request.id, ok: false, message: (error as Error).message ?? String(error) } satisfies ReplayResponse);
  }
});
