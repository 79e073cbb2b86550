import type { QValue } from '../types/contract.js';

/** A decoded row (the executor's Row). */
type Row = QValue[];

/**
 * A run of rows in primary-key order with their encoded keys; never changed once built. Column
 * values an aggregate reads are laid out once per chunk (numbers()), kept with it: a write copies
 * only the chunk it changes, so every other chunk keeps its columns.
 */
export class Chunk {
  /** numbers() by column position; filled on first use. */
  private readonly columns: (Float64Array | undefined)[] = [];

  constructor(
    readonly pks: readonly Uint8Array[],
    readonly rows: readonly Row[],
  ) {}

  /**
   * Column `c` of every row as doubles, NaN for NULL: for columns whose values are JS numbers that
   * are never NaN (int2, int4, date), so a comparison with NaN is false as one with NULL is not true.
   */
  numbers(c: number): Float64Array {
    let out = this.columns[c];
    if (out === undefined) {
      const rows = this.rows;
      out = new Float64Array(rows.length);
      for (let i = 0; i < rows.length; i++) {
        const v = rows[i]![c];
        out[i] = v === null || v === undefined ? NaN : (v as number);
      }
      this.columns[c] = out;
    }
    return out;
  }
}

/** The row at `pk` becomes `row`, or is deleted (null). */
export interface RowPatch {
  readonly pk: Uint8Array;
  readonly row: Row | null;
}

/**
 * Rows a chunk is built with; one is split past twice this, merged into its neighbour below a
 * quarter. A patch copies the chunks it changes (and the list of chunks), so a write costs about
 * CHUNK_ROWS + rows / CHUNK_ROWS pointer copies, whatever the table's size.
 */
export const CHUNK_ROWS = 512;

/** First index whose key is >= `key` (keys sorted as bytes). */
export function lowerBound(keys: readonly Uint8Array[], key: Uint8Array): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (Buffer.compare(keys[mid]!, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * A table's decoded rows in primary-key order, immutable: patched() returns a new TableRows that
 * shares every chunk the patch did not touch, so a reader iterating an older one is never
 * disturbed and the versions kept side by side cost little more than one.
 */
export class TableRows {
  private constructor(
    private readonly chunks: readonly Chunk[],
    /** Rows held. */
    readonly count: number,
  ) {}

  static readonly empty = new TableRows([], 0);

  /** From rows already sorted by (unique) key. */
  static fromSorted(pks: readonly Uint8Array[], rows: readonly Row[]): TableRows {
    const chunks: Chunk[] = [];
    for (let i = 0; i < pks.length; i += CHUNK_ROWS) chunks.push(new Chunk(pks.slice(i, i + CHUNK_ROWS), rows.slice(i, i + CHUNK_ROWS)));
    return new TableRows(chunks, pks.length);
  }

  /** The chunks, in key order (a whole-table aggregate reads them directly: aggregate-scan.ts). */
  get chunkList(): readonly Chunk[] {
    return this.chunks;
  }

  /** The row with key `pk`, or null. */
  get(pk: Uint8Array): Row | null {
    const c = this.chunkOf(pk);
    if (c === this.chunks.length) return null;
    const { pks, rows } = this.chunks[c]!;
    const i = lowerBound(pks, pk);
    return i < pks.length && Buffer.compare(pks[i]!, pk) === 0 ? rows[i]! : null;
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
      const chunk = this.chunks[c] ?? EMPTY_CHUNK;
      const isLast = c >= this.chunks.length - 1;
      const last = chunk.pks[chunk.pks.length - 1];
      const pks = chunk.pks.slice();
      const rows = chunk.rows.slice();
      for (; i < changes.length && (isLast || Buffer.compare(changes[i]!.pk, last!) <= 0); i++) {
        const { pk, row } = changes[i]!;
        const at = lowerBound(pks, pk);
        const found = at < pks.length && Buffer.compare(pks[at]!, pk) === 0;
        if (row === null) {
          if (!found) continue;
          pks.splice(at, 1);
          rows.splice(at, 1);
          count -= 1;
        } else if (found) rows[at] = row;
        else {
          pks.splice(at, 0, pk);
          rows.splice(at, 0, row);
          count += 1;
        }
      }
      next = c + 1;
      pushChunk(out, pks, rows);
    }
    for (; next < this.chunks.length; next++) out.push(this.chunks[next]!);
    return new TableRows(out, count);
  }

  /**
   * Copies of the rows with gte <= key < lt, in key order (or reversed), at most `batchRows` per
   * batch: callers own what they get.
   */
  *batches(range: { readonly gte?: Uint8Array; readonly lt?: Uint8Array; readonly reverse: boolean }, batchRows: number): Generator<Row[]> {
    const [fromChunk, fromRow] = range.gte ? this.position(range.gte) : [0, 0];
    const [toChunk, toRow] = range.lt ? this.position(range.lt) : [this.chunks.length, 0];
    const spans: [Chunk, number, number][] = [];
    for (let c = fromChunk; c <= toChunk && c < this.chunks.length; c++) {
      const chunk = this.chunks[c]!;
      const start = c === fromChunk ? fromRow : 0;
      const end = c === toChunk ? toRow : chunk.rows.length;
      if (end > start) spans.push([chunk, start, end]);
    }
    if (range.reverse) spans.reverse();
    for (const [chunk, start, end] of spans) {
      for (let s = start; s < end; s += batchRows) {
        if (!range.reverse) yield chunk.rows.slice(s, Math.min(end, s + batchRows));
        else yield chunk.rows.slice(Math.max(start, end - (s - start) - batchRows), end - (s - start)).reverse();
      }
    }
  }

  /** The first chunk whose last key is >= `key` (chunks.length: none). */
  private chunkOf(key: Uint8Array): number {
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const pks = this.chunks[mid]!.pks;
      if (Buffer.compare(pks[pks.length - 1]!, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** [chunk, row] of the first row whose key is >= `key` ([chunks.length, 0]: past the end). */
  private position(key: Uint8Array): [number, number] {
    const c = this.chunkOf(key);
    return c === this.chunks.length ? [c, 0] : [c, lowerBound(this.chunks[c]!.pks, key)];
  }
}

const EMPTY_CHUNK = new Chunk([], []);

/**
 * Adds a changed chunk to `out`: dropped when empty, merged into the one before when small, split
 * when large. A split makes chunks of equal size (never a small remainder, which the next write
 * would merge into its neighbour): a run of appends changes one chunk per write.
 */
function pushChunk(out: Chunk[], pks: Uint8Array[], rows: Row[]): void {
  if (pks.length === 0) return;
  const before = out[out.length - 1];
  if (before && pks.length < CHUNK_ROWS / 4 && before.pks.length + pks.length <= CHUNK_ROWS * 2) {
    out[out.length - 1] = new Chunk([...before.pks, ...pks], [...before.rows, ...rows]);
    return;
  }
  if (pks.length <= CHUNK_ROWS * 2) {
    out.push(new Chunk(pks, rows));
    return;
  }
  const parts = Math.round(pks.length / CHUNK_ROWS);
  for (let p = 0; p < parts; p++) {
    const from = Math.floor((p * pks.length) / parts);
    const to = Math.floor(((p + 1) * pks.length) / parts);
    out.push(new Chunk(pks.slice(from, to), rows.slice(from, to)));
  }
}
