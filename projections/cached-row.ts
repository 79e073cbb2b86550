/**
 * A row key's image as the point-read cache keeps it (undefined: no row has the key), with one memo
 * slot: a reader that turns the image into something (a shaped row, its JSON text) keeps that here,
 * under an owner object of its own (its projection or plan), and finds it again on the next read of
 * the key, until a write of the key drops the entry. A slot, not a WeakMap by image: a WeakMap entry
 * per cached row cost more at each fill (ephemeron bookkeeping in every GC) than it saved per hit.
 */
export class CachedRow {
  /** Who made `memo` (compared by identity); null: nothing memoized. */
  memoOwner: object | null = null;
  memo: unknown = undefined;

  constructor(readonly image: Uint8Array | undefined) {}
}
