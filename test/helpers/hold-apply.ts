import type { LogEntry } from '../../log/index.js';
import type { Projections } from '../../projections/index.js';

/**
 * Holds `which` projection's apply until the returned function is called (then the held batches
 * run, in order): while it is held, a row write is still answered (once durable) and the read
 * barrier (projections/read-barrier.ts) is behind. Held, not replaced: the projection's applyBatch
 * is the real one, called once the gate opens (as a bulk upsert of vectors into an hnsw index keeps
 * the vector apply busy for seconds).
 */
export function holdApply(projections: Projections, which: 'vectors' | 'tables'): () => void {
  const consumer = projections[which];
  const applyBatch = consumer.applyBatch.bind(consumer);
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  consumer.applyBatch = async (entries: readonly LogEntry[]) => {
    await gate;
    return applyBatch(entries);
  };
  return () => {
    consumer.applyBatch = applyBatch;
    open();
  };
}

/** `p`'s outcome, or 'pending' when it has none within `ms`. */
export async function within<T>(p: Promise<T>, ms: number): Promise<T | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'pending'>((resolve) => (timer = setTimeout(() => resolve('pending'), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}
