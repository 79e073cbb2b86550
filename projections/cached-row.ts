import { keyText as latin1 } from '../core/key-text.js';

/**
 * The CachedRow made last and the bytes it was made from, until its `image` is first asked for: the
 * store's read hands out a Buffer of its own (classic-level copies the value out of LevelDB: nothing
 * else holds it), so the first reader may have it instead of a copy made from the entry's text. One
 * at a time, taken once: no Buffer stays held past the next entry made (an entry nobody decodes, a
 * cached miss or a read that found its answer kept, pins at most one image until then).
 */
let freshEntry: CachedRow | null = null;
let freshImage: Uint8Array | undefined;

/**
 * A row key's image as the point-read cache keeps it (undefined: no row has the key), with one memo
 * slot: a reader that turns the image into something (a shaped row, its JSON text) keeps that here,
 * under an owner object of its own (its projection or plan), and finds it again on the next read of
 * the key, until a write of the key drops the entry. A slot, not a WeakMap by image: a WeakMap entry
 * per cached row cost more at each fill (ephemeron bookkeeping in every GC) than it saved per hit.
 */
export class CachedRow {
  /**
   * The image as text, one char per byte (latin1; undefined: no row has the key). A one-byte V8
   * string costs its length and a 16-byte header, where the Buffer a LevelDB read hands out costs
   * ~330 bytes besides its bytes (the Uint8Array, its own ArrayBuffer, the native backing store and
   * its bookkeeping: measured, 100,000 bench rows held by the cache): kept as text, the same bound
   * holds about a third more rows, and GC has no backing store per cached row to track.
   */
  private readonly imageText: string | undefined;

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
    image: Uint8Array | undefined,
    public account: MemoAccount | null = null,
  ) {
    this.imageText = image === undefined ? undefined : latin1(image);
    freshEntry = this;
    freshImage = image;
  }

  /** Whether a row has the key (the image is not undefined): no bytes are made to tell. */
  get found(): boolean {
    return this.imageText !== undefined;
  }

  /** The image's length in bytes (0: no row). */
  get imageBytes(): number {
    return this.imageText === undefined ? 0 : this.imageText.length;
  }

  /**
   * The image's bytes (undefined: no row has the key), made anew at each call from the kept text:
   * a reader decodes it once and keeps what it made in the memo slot. Its own copy: a reader may keep
   * views of it (a decoded value) or change it without touching the entry. The first call on the
   * entry made last gets the very bytes it was made from instead (freshImage): a first read of a row
   * then copies it once (the store's value to the kept text), not twice (and the text back to bytes).
   */
  get image(): Uint8Array | undefined {
    if (freshEntry === this) {
      const bytes = freshImage;
      freshEntry = null;
      freshImage = undefined;
      return bytes;
    }
    return this.imageText === undefined ? undefined : Buffer.from(this.imageText, 'latin1');
  }

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
 * text header. Measured (200,000 rows of (bigint, text, double), 13-byte keys, 46-byte images, read
 * by getRowSync, LevelDB's block cache warmed first): 180 bytes of heap each, no external memory
 * (RSS 180-192), 59 of them key and image; the rest counted with room for the Map's spare capacity
 * (it doubles as it grows). The image as a LevelDB Buffer was 315 bytes of heap and ~300 native
 * (RSS 514-623 a row): the constant was 600 then.
 */
const ROW_CACHE_ENTRY_OVERHEAD_BYTES = 160;

/** What one cached row counts against the bound, its memo apart. */
export const entryBytes = (keyBytes: number, entry: CachedRow): number => keyBytes + entry.imageBytes + ROW_CACHE_ENTRY_OVERHEAD_BYTES;

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
