import type { QValue } from '../types/contract.js';
import { Chunk, type Piece } from './chunk.js';

export { Chunk } from './chunk.js';

/** A decoded row (the executor's Row). */
type Row = QValue[];

/** The row at `pk` becomes `row`, or is deleted (null). */
export interface RowPatch {
  readonly pk: Uint8Array;
  readonly row: Row | null;
}

/**
 * Rows a chunk is built with; one is split past twice this, merged into its neighbour below a
 * quarter. A patch copies the chunks it changes (and the list of chunks), so a write costs about
 * CHUNK_ROWS + rows / CHUNK_ROWS copies, whatever the table's size.
 */
export const CHUNK_ROWS = 512;

/**
 * A table's rows in primary-key order, immutable: patched() returns a new TableRows that shares
 * every chunk the patch did not touch, so a reader iterating an older one is never disturbed and
 * the versions kept side by side cost little more than one. Chunks hold the rows compactly
 * (chunk.ts); a row is made when read.
 */
export class TableRows {
  /** What the chunks keep alive, in bytes (Chunk.bytes summed). */
  readonly bytes: number;

  private constructor(
    private readonly chunks: readonly Chunk[],
    /** Rows held. */
    readonly count: number,
  ) {
    let bytes = 0;
    for (const chunk of chunks) bytes += chunk.bytes;
    this.bytes = bytes;
  }

  static readonly empty = new TableRows([], 0);

  /** From rows already sorted by (unique) key; keeps copies of the keys, and of the rows' values as the chunks lay them out. */
  static fromSorted(pks: readonly Uint8Array[], rows: readonly Row[]): TableRows {
    const chunks: Chunk[] = [];
    for (let i = 0; i < pks.length; i += CHUNK_ROWS) {
      const pieces: Piece[] = [];
      for (let j = i; j < Math.min(pks.length, i + CHUNK_ROWS); j++) pieces.push({ pk: pks[j]!, row: rows[j]! });
      chunks.push(Chunk.build(pieces));
    }
    return new TableRows(chunks, pks.length);
  }

  /** The chunks, in key order (a whole-table aggregate reads them directly: aggregate-scan.ts). */
  get chunkList(): readonly Chunk[] {
    return this.chunks;
  }

  /** The row with key `pk` (made now), or null. */
  get(pk: Uint8Array): Row | null {
    const c = this.chunkOf(pk);
    if (c === this.chunks.length) return null;
    const chunk = this.chunks[c]!;
    const i = chunk.lowerBound(pk);
    return i < chunk.count && chunk.compareKey(i, pk) === 0 ? chunk.row(i) : null;
  }

  /** This table with `changes` (sorted by key, one per key) applied; this one stays as it is. */
  patched(changes: readonly RowPatch[]): TableRows {
    if (changes.length === 0) return this;
    const out: Chunk[] = [];
    let count = this.count;
    let next = 0; // the first chunk not yet in `out`
    let i = 0;
    while (i < changes.length) {
      // The chunk the next change falls in: the first whose last key is >= it, else the last one.
      const c = Math.max(next, Math.min(this.chunkOf(changes[i]!.pk), this.chunks.length - 1));
      for (; next < c; next++) out.push(this.chunks[next]!);
      const chunk = this.chunks[c] ?? Chunk.empty;
      const isLast = c >= this.chunks.length - 1;
      const pieces: Piece[] = [];
      let from = 0; // the chunk's first row not yet in `pieces`
      for (; i < changes.length && (isLast || chunk.compareKey(chunk.count - 1, changes[i]!.pk) >= 0); i++) {
        const { pk, row } = changes[i]!;
        const at = chunk.lowerBound(pk);
        const found = at < chunk.count && chunk.compareKey(at, pk) === 0;
        if (at > from) pieces.push({ chunk, from, to: at });
        from = Math.max(from, at);
        if (row === null) {
          if (!found) continue;
          from = at + 1;
          count -= 1;
        } else {
          pieces.push({ pk, row });
          if (found) from = at + 1;
          else count += 1;
        }
      }
      if (from < chunk.count) pieces.push({ chunk, from, to: chunk.count });
      next = c + 1;
      pushChunk(out, pieces);
    }
    for (; next < this.chunks.length; next++) out.push(this.chunks[next]!);
    return new TableRows(out, count);
  }

  /**
   * The rows with gte <= key < lt, in key order (or reversed), at most `batchRows` per batch, made
   * now: callers own what they get.
   */
  *batches(range: { readonly gte?: Uint8Array; readonly lt?: Uint8Array; readonly reverse: boolean }, batchRows: number): Generator<Row[]> {
    const [fromChunk, fromRow] = range.gte ? this.position(range.gte) : [0, 0];
    const [toChunk, toRow] = range.lt ? this.position(range.lt) : [this.chunks.length, 0];
    const spans: [Chunk, number, number][] = [];
    for (let c = fromChunk; c <= toChunk && c < this.chunks.length; c++) {
      const chunk = this.chunks[c]!;
      const start = c === fromChunk ? fromRow : 0;
      const end = c === toChunk ? toRow : chunk.count;
      if (end > start) spans.push([chunk, start, end]);
    }
    if (range.reverse) spans.reverse();
    for (const [chunk, start, end] of spans) {
      for (let s = start; s < end; s += batchRows) {
        if (!range.reverse) yield chunk.rows(s, Math.min(end, s + batchRows));
        else yield chunk.rows(Math.max(start, end - (s - start) - batchRows), end - (s - start)).reverse();
      }
    }
  }

  /** The first chunk whose last key is >= `key` (chunks.length: none). */
  private chunkOf(key: Uint8Array): number {
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const chunk = this.chunks[mid]!;
      if (chunk.compareKey(chunk.count - 1, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** [chunk, row] of the first row whose key is >= `key` ([chunks.length, 0]: past the end). */
  private position(key: Uint8Array): [number, number] {
    const c = this.chunkOf(key);
    return c === this.chunks.length ? [c, 0] : [c, this.chunks[c]!.lowerBound(key)];
  }
}

function rowsOf(pieces: readonly Piece[]): number {
  let n = 0;
  for (const p of pieces) n += 'row' in p ? 1 : p.to - p.from;
  return n;
}

/** Rows from..to - 1 of what `pieces` hold in order, as pieces. */
function slicePieces(pieces: readonly Piece[], from: number, to: number): Piece[] {
  const out: Piece[] = [];
  let at = 0; // position of the current piece's first row
  for (const p of pieces) {
    const n = 'row' in p ? 1 : p.to - p.from;
    const lo = Math.max(from, at);
    const hi = Math.min(to, at + n);
    if (lo < hi) out.push('row' in p ? p : { chunk: p.chunk, from: p.from + lo - at, to: p.from + hi - at });
    at += n;
    if (at >= to) break;
  }
  return out;
}

/**
 * Adds a changed chunk to `out`: dropped when empty, merged into the one before when small, split
 * when large. A split makes chunks of equal size (never a small remainder, which the next write
 * would merge into its neighbour): a run of appends changes one chunk per write.
 */
function pushChunk(out: Chunk[], pieces: Piece[]): void {
  const n = rowsOf(pieces);
  if (n === 0) return;
  const before = out[out.length - 1];
  if (before && n < CHUNK_ROWS / 4 && before.count + n <= CHUNK_ROWS * 2) {
    out[out.length - 1] = Chunk.build([{ chunk: before, from: 0, to: before.count }, ...pieces]);
    return;
  }
  if (n <= CHUNK_ROWS * 2) {
    out.push(Chunk.build(pieces));
    return;
  }
  const parts = Math.round(n / CHUNK_ROWS);
  for (let p = 0; p < parts; p++) out.push(Chunk.build(slicePieces(pieces, Math.floor((p * n) / parts), Math.floor(((p + 1) * n) / parts))));
}
