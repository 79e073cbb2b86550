import { compareKeys } from '../core/key-encoding.js';
import type { PendingOverlay } from './pending-overlay.js';
import type { StateStore } from './state-store.js';

export interface KeyRange {
  readonly gte: Uint8Array;
  readonly lt: Uint8Array;
  readonly reverse?: boolean;
}

/** A key and its value laid over a base range; a null value hides the base entry. */
export interface OverlayEntry {
  readonly key: Uint8Array;
  readonly value: Uint8Array | null;
}

/**
 * Store entries in a range with the pending overlay laid over them: pending puts added or
 * replacing, pending deletes hidden. The overlay copy and the store snapshot are taken in the same
 * tick, so an apply finishing mid-scan cannot make a row vanish or appear twice.
 */
export async function* mergedRange(store: StateStore, overlay: PendingOverlay, range: KeyRange, batchSize: number): AsyncIterable<[Uint8Array, Uint8Array][]> {
  const pending = overlay.range(range.gte, range.lt);
  if (range.reverse) pending.reverse();
  const snapshot = store.snapshot();
  try {
    const base = store.entries({ gte: range.gte, lt: range.lt, reverse: range.reverse ?? false, batchSize, snapshot });
    yield* overlaid(base, pending, range.reverse ?? false);
  } finally {
    await snapshot.close();
  }
}

/**
 * Batches of `base` (in key order, or reversed) with `pending` (same order, same key form) laid
 * over them: a pending value replaces or adds an entry, a pending null hides one.
 */
export async function* overlaid(
  base: AsyncIterable<[Uint8Array, Uint8Array][]>,
  pending: readonly OverlayEntry[],
  reverse: boolean,
): AsyncIterable<[Uint8Array, Uint8Array][]> {
  const direction = reverse ? -1 : 1;
  let next = 0;
  for await (const batch of base) {
    if (pending.length === next) {
      yield batch;
      continue;
    }
    const out: [Uint8Array, Uint8Array][] = [];
    for (const entry of batch) {
      while (next < pending.length && direction * compareKeys(pending[next]!.key, entry[0]) < 0) {
        const p = pending[next++]!;
        if (p.value) out.push([p.key, p.value]);
      }
      if (next < pending.length && compareKeys(pending[next]!.key, entry[0]) === 0) {
        const p = pending[next++]!;
        if (p.value) out.push([p.key, p.value]);
      } else {
        out.push(entry);
      }
    }
    if (out.length > 0) yield out;
  }
  const rest: [Uint8Array, Uint8Array][] = [];
  for (; next < pending.length; next++) {
    const p = pending[next]!;
    if (p.value) rest.push([p.key, p.value]);
  }
  if (rest.length > 0) yield rest;
}
