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
  /** What `memo` holds, as its maker estimated it: counted against the cache's bound. */
  memoBytes = 0;

  /**
   * @param account where memo bytes are counted (the cache holding this entry); null for an entry
   * the cache does not keep, or no longer keeps (dropped by a write or when the cache started over).
   */
  constructor(
    readonly image: Uint8Array | undefined,
    public account: MemoAccount | null = null,
  ) {}

  /**
   * Keeps `memo`, made by `owner`, in the slot; `bytes` estimates what it holds (its text's length,
   * an object's worth): the cache counts it against its bound, so a wide row's JSON cannot grow
   * memory past it (the cache may start over at once, dropping this entry too).
   */
  remember(owner: object, memo: unknown, bytes: number): void {
    const delta = bytes - this.memoBytes;
    this.memoOwner = owner;
    this.memo = memo;
    this.memoBytes = bytes;
    this.account?.memoChanged(delta);
  }
}

/** What a memo's objects hold besides the bytes its maker counts (its object, the strings' headers). */
export const MEMO_OVERHEAD_BYTES = 64;

/** The cache's side of CachedRow.remember. */
export interface MemoAccount {
  memoChanged(deltaBytes: number): void;
}
