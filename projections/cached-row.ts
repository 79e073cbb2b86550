import { keyText as latin1 } from '../core/key-text.js';

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
   * the cache does not keep, or no longer keeps (dropped by a write, past the bound or when the cache started over).
   */
  constructor(
    readonly image: Uint8Array | undefined,
    public account: MemoAccount | null = null,
  ) {}

  /**
   * Keeps `memo`, made by `owner`, in the slot; `bytes` estimates what it holds (its text's length,
   * an object's worth): the cache counts it against its bound, so a wide row's JSON cannot grow
   * memory past it (the cache may drop its oldest entries at once, this one among them).
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

/** A character V8 cannot keep in a one-byte string: a string holding one is two bytes a character. */
const TWO_BYTE_CHAR = /[\u0100-\uffff]/;

/** The bytes V8 keeps a string's characters in: one a character, two when any is past U+00FF. */
export const stringBytes = (text: string): number => (TWO_BYTE_CHAR.test(text) ? 2 * text.length : text.length);

/** The cache's side of CachedRow.remember. */
export interface MemoAccount {
  memoChanged(deltaBytes: number): void;
}

/**
 * What one cached row counts against the cache's bound besides its key and image bytes and its memo
 * (counted as made: CachedRow.remember): the Map entry, the key text, the CachedRow and the image's
 * Buffer (its own backing store). Measured: 100,000 rows of (bigint, text, double) read by GET added
 * 677 bytes each to the heap and external memory, 59 of them key and image (a memo of ~60 bytes).
 */
const ROW_CACHE_ENTRY_OVERHEAD_BYTES = 600;

/** What one cached row counts against the bound, its memo apart. */
export const entryBytes = (keyBytes: number, image: Uint8Array | undefined): number => keyBytes + (image?.length ?? 0) + ROW_CACHE_ENTRY_OVERHEAD_BYTES;

/**
 * The value of a key a write dropped from the point-read cache: the key stays, its value is set over
 * when it is read again. Deleting it and setting it again would leave a deleted entry in that key's
 * hash chain each time until V8 rebuilds the Map, which it does only once the Map's capacity is used
 * up: a row updated and read in turn in a table of 100,000 cached rows made each look-up walk up to
 * ~150,000 deleted entries (0.5 ms; bench/hot-row.ts). Counted as its key and the Map's slot.
 */
export const DROPPED = new CachedRow(undefined);

/** A dropped key's slot: the Map entry and the key text. */
export const droppedSlotBytes = (keyBytes: number): number => keyBytes + DROPPED_SLOT_OVERHEAD_BYTES;
const DROPPED_SLOT_OVERHEAD_BYTES = 64;

/**
 * A key's bytes as a string of the same length (one char per byte): a Map key that compares as the
 * bytes do (the point-read cache's key: getRowSyncByName takes it). The one function core/key-text.ts
 * keyText, which query/dml's maps use too (imported under this name above: a binding this file can call).
 */
export { latin1 };
