/**
 * Renders webhook templates in a worker thread with a bounded heap and a time limit per render
 * (template-worker.ts): a template that grows a string without end or runs too long fails its
 * event (LIMIT_EXCEEDED, the event is dead-lettered) and the worker is replaced; the server's own
 * heap and event loop are never at stake. One worker per process, started on first use.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { SvcError, type ErrorCode } from '../../core/errors.js';

const here = fileURLToPath(import.meta.url);
/** Compiled JavaScript always: beside this file in dist/, or from dist/ when loaded as TypeScript (vitest). */
const WORKER_FILE = here.endsWith('.ts')
  ? path.join(path.dirname(here), '..', '..', 'dist', 'sinks', 'webhooks', 'template-worker.js')
  : path.join(path.dirname(here), 'template-worker.js');

/** The worker's heap: far above any sane template's need, far below the server's. */
const WORKER_HEAP_MB = 64;
/** One render's time limit. */
const RENDER_TIMEOUT_MS = 2_000;

interface Pending {
  resolve(text: string): void;
  reject(error: SvcError): void;
  timer: NodeJS.Timeout;
}

let worker: Worker | null = null;
const pending = new Map<number, Pending>();
let nextId = 1;

function failAll(error: SvcError): void {
  for (const [id, p] of pending) {
    clearTimeout(p.timer);
    p.reject(error);
    pending.delete(id);
  }
}

function workerNow(): Worker {
  if (worker) return worker;
  if (!existsSync(WORKER_FILE)) throw new SvcError('INTERNAL_ERROR', `the template worker ${WORKER_FILE} is missing: run npm run build`);
  const w = new Worker(WORKER_FILE, { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 } });
  w.unref();
  w.on('message', (message: { id: number; text?: string; error?: { code: ErrorCode; message: string } }) => {
    const p = pending.get(message.id);
    if (!p) return;
    pending.delete(message.id);
    clearTimeout(p.timer);
    if (message.error) p.reject(new SvcError(message.error.code, message.error.message, { field: 'transform.template' }));
    else p.resolve(message.text ?? '');
  });
  const gone = (why: string) => () => {
    if (worker === w) worker = null;
    failAll(new SvcError('LIMIT_EXCEEDED', `template: ${why}`, { field: 'transform.template' }));
  };
  w.on('error', (error) => gone(`the render failed (${(error as Error).message}); templates get ${WORKER_HEAP_MB} MiB`)());
  w.on('exit', gone('the template worker stopped'));
  worker = w;
  return w;
}

/** Renders `text` with `variables` in the worker. */
export function renderTemplate(text: string, variables: Record<string, unknown>): Promise<string> {
  const w = workerNow();
  const id = nextId++;
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      pending.delete(id);
      reject(new SvcError('LIMIT_EXCEEDED', `template: a render took longer than ${RENDER_TIMEOUT_MS} ms`, { field: 'transform.template' }));
      // A render cannot be interrupted inside the thread: the thread goes, the next render starts a new one.
      if (worker === w) worker = null;
      void w.terminate();
    }, RENDER_TIMEOUT_MS);
    pending.set(id, { resolve, reject, timer });
    w.postMessage({ id, text, variables });
  });
}
