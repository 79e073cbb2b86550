/** An entry of a cache that evicts by second chance (CLOCK): whether it was used since it was put or last moved. */
export interface SecondChanceSlot {
  used: boolean;
}

/**
 * Drops one entry of `entries` (kept in insertion order): the oldest not used since it was last
 * moved; a used one loses its mark and moves to the back (each moves at most once a round, so this
 * ends). A hit only sets the mark: moving it at every hit (an LRU's delete and set) would leave a
 * deleted entry in the hot key's hash chain each time until V8 rebuilds the Map.
 */
export function evictSecondChance<K>(entries: Map<K, SecondChanceSlot>): void {
  for (const [key, slot] of entries) {
    entries.delete(key);
    if (!slot.used) return;
    slot.used = false;
    entries.set(key, slot);
  }
}
