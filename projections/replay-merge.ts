/**
 * One key order across replay's sorted runs (each chunk's WriteBatch from replay-sort.ts, oldest
 * first): the state they leave when applied in order, as a stream of entries for the table writer
 * (replay-tables.ts). For a key in several runs the newest run's op wins; a delete that wins
 * drops the key (the tables hold the whole state, so nothing older is left for it to hide).
 */
import { TAG_DEL } from './replay-sort.js';
import type { TableBuilder } from './replay-tables.js';

/** Where one run stands: the entry at `at` (its tag, key and value), up to `end`. */
interface Cursor {
  readonly buf: Uint8Array;
  readonly end: number;
  at: number;
  next: number;
  tag: number;
  keyAt: number;
  keyLength: number;
  valueAt: number;
  valueLength: number;
}

/** A run: WriteBatch entries (tag, varint key length, key, for a put varint value length and value) in strictly increasing key order. */
export interface SortedRun {
  readonly buf: Uint8Array;
  readonly from: number;
  readonly end: number;
}

/** Merges runs (index order: oldest first) into table builders; a binary heap of cursors, the newest first among equal keys. */
export class RunMerger {
  private readonly cursors: Cursor[] = [];
  private readonly heap: number[] = [];
  /** runnerUp()'s cursor, -1 once the heap changed. */
  private runner = -1;
  /** The bytes the last key passed shares with the runner-up's (-1: not known since the heap changed). */
  private runnerCommon = -1;
  /** The bytes the next key shares with the last one added to the builder (-1: not known). */
  private sharedHint = -1;

  constructor(runs: readonly SortedRun[]) {
    for (const run of runs) {
      const cursor: Cursor = { buf: run.buf, end: run.end, at: run.from, next: run.from, tag: 0, keyAt: 0, keyLength: 0, valueAt: 0, valueLength: 0 };
      this.cursors.push(cursor);
      if (parse(cursor)) this.push(this.cursors.length - 1);
    }
  }

  /**
   * Adds the next entries to `builder` until it is full or every run is done; false once every run is done.
   * While the winning run's next key still comes before every other run's entry (rows of one chunk are
   * mostly a range of keys no other chunk has), it stays on top: one key comparison per entry, no heap
   * work (the second run on the heap is found once per change of the heap, not per entry).
   */
  fill(builder: TableBuilder): boolean {
    const heap = this.heap;
    const cursors = this.cursors;
    while (heap.length > 0) {
      const winner = cursors[heap[0]!]!;
      const { buf, keyAt, keyLength } = winner;
      const added = winner.tag !== TAG_DEL;
      if (added) builder.add(buf, keyAt, keyLength, winner.valueAt, winner.valueLength, this.sharedHint);
      winner.at = winner.next;
      const more = parse(winner);
      if (more) {
        // The bytes the next key shares with the one just passed (m): the builder's prefix compression
        // starts from it, and it settles most comparisons with the runner-up without reading its key.
        const m = commonPrefix(buf, keyAt, keyLength, winner.keyAt, winner.keyLength);
        this.sharedHint = added ? m : -1;
        if (heap.length === 1) {
          if (builder.full) return true;
          continue;
        }
        // Strictly below the runner-up: also above the key just added (a run's keys increase), so no other run holds that key.
        if (this.belowRunnerUp(winner, m)) {
          if (builder.full) return true;
          continue;
        }
      } else {
        const last = heap.pop()!;
        if (heap.length > 0) heap[0] = last;
      }
      this.runnerCommon = -1;
      this.sharedHint = -1;
      this.runner = -1;
      if (heap.length > 0) this.siftDown(0);
      // Older ops of the same key come next (the newest sorts first among equals): dropped.
      while (heap.length > 0) {
        const top = cursors[heap[0]!]!;
        if (compareBytes(top.buf, top.keyAt, top.keyLength, buf, keyAt, keyLength) !== 0) break;
        this.advanceTop();
      }
      if (builder.full) return heap.length > 0;
    }
    return false;
  }

  /**
   * The winner's new key (which shares m bytes with the key it passed) comes before the runner-up's.
   * With L the bytes the passed key shared with the runner-up's (it came before it): m > L means the
   * new key also differs from it at byte L, where the passed key did (below, sharing L); m < L means
   * it differs from the passed key (upwards) where the runner-up's still agreed (above). Only m = L
   * needs the keys compared, from byte L.
   */
  private belowRunnerUp(winner: Cursor, m: number): boolean {
    const common = this.runnerCommon;
    if (common >= 0 && m > common) return true;
    if (common >= 0 && m < common) return false;
    const runner = this.runnerUp();
    const order = compareFrom(winner.buf, winner.keyAt, winner.keyLength, runner.buf, runner.keyAt, runner.keyLength, common < 0 ? 0 : common);
    this.runnerCommon = lastCommon;
    return order < 0;
  }

  /** The cursor that would be on top without the top one (the heap has two or more); kept until the heap changes. */
  private runnerUp(): Cursor {
    if (this.runner < 0) {
      const heap = this.heap;
      this.runner = heap.length > 2 && this.before(heap[2]!, heap[1]!) ? heap[2]! : heap[1]!;
    }
    return this.cursors[this.runner]!;
  }

  private advanceTop(): void {
    const heap = this.heap;
    const cursor = this.cursors[heap[0]!]!;
    cursor.at = cursor.next;
    if (!parse(cursor)) {
      const last = heap.pop()!;
      if (heap.length === 0) return;
      heap[0] = last;
    }
    this.siftDown(0);
  }

  private push(run: number): void {
    const heap = this.heap;
    heap.push(run);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(heap[i]!, heap[parent]!)) break;
      const swap = heap[i]!;
      heap[i] = heap[parent]!;
      heap[parent] = swap;
      i = parent;
    }
  }

  private siftDown(i: number): void {
    const heap = this.heap;
    const n = heap.length;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) return;
      const right = left + 1;
      const child = right < n && this.before(heap[right]!, heap[left]!) ? right : left;
      if (!this.before(heap[child]!, heap[i]!)) return;
      const swap = heap[i]!;
      heap[i] = heap[child]!;
      heap[child] = swap;
      i = child;
    }
  }

  /** Run a's entry comes before run b's: a smaller key, or the same key from a newer run. */
  private before(a: number, b: number): boolean {
    const x = this.cursors[a]!;
    const y = this.cursors[b]!;
    const order = compareBytes(x.buf, x.keyAt, x.keyLength, y.buf, y.keyAt, y.keyLength);
    return order < 0 || (order === 0 && a > b);
  }
}

/** Reads the entry at cursor.at; false at the run's end. */
function parse(cursor: Cursor): boolean {
  const { buf } = cursor;
  let at = cursor.at;
  if (at >= cursor.end) return false;
  cursor.tag = buf[at++]!;
  let length = 0;
  for (let shift = 0; ; shift += 7) {
    const byte = buf[at++]!;
    length += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) break;
  }
  cursor.keyAt = at;
  cursor.keyLength = length;
  at += length;
  if (cursor.tag === TAG_DEL) {
    cursor.valueAt = at;
    cursor.valueLength = 0;
    cursor.next = at;
    return true;
  }
  length = 0;
  for (let shift = 0; ; shift += 7) {
    const byte = buf[at++]!;
    length += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) break;
  }
  cursor.valueAt = at;
  cursor.valueLength = length;
  cursor.next = at + length;
  return true;
}

/** The bytes buf[aAt, +aLength) and buf[bAt, +bLength) share from the start. */
function commonPrefix(buf: Uint8Array, aAt: number, aLength: number, bAt: number, bLength: number): number {
  const limit = aLength < bLength ? aLength : bLength;
  let i = 0;
  while (i < limit && buf[aAt + i] === buf[bAt + i]) i += 1;
  return i;
}

/** compareFrom's bytes in common (from the start) of the two keys it compared. */
let lastCommon = 0;

/** compareBytes of two keys known to agree on their first `from` bytes; sets lastCommon. */
function compareFrom(a: Uint8Array, aAt: number, aLength: number, b: Uint8Array, bAt: number, bLength: number, from: number): number {
  const common = aLength < bLength ? aLength : bLength;
  let i = from;
  while (i < common && a[aAt + i] === b[bAt + i]) i += 1;
  lastCommon = i;
  return i < common ? a[aAt + i]! - b[bAt + i]! : aLength - bLength;
}

/** LevelDB's bytewise order of a[aAt, +aLength) and b[bAt, +bLength). */
export function compareBytes(a: Uint8Array, aAt: number, aLength: number, b: Uint8Array, bAt: number, bLength: number): number {
  const common = aLength < bLength ? aLength : bLength;
  for (let i = 0; i < common; i++) {
    const d = a[aAt + i]! - b[bAt + i]!;
    if (d !== 0) return d;
  }
  return aLength - bLength;
}
