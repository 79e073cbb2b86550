import type { QValue } from '../types/contract.js';

/** A decoded row (the executor's Row). */
type Row = QValue[];

/**
 * One column of a chunk, laid out by what its values are: doubles (JS numbers), 64-bit integers
 * (bigints, as int8 gives them) or, for anything else, the values themselves. A NULL in a typed
 * column is a flag (and NaN in the doubles, so numbers() hands them out as they are).
 */
export type Column =
  | { readonly kind: 'f64'; readonly values: Float64Array; readonly nulls: Uint8Array | null }
  | { readonly kind: 'i64'; readonly values: BigInt64Array; readonly nulls: Uint8Array | null }
  | {
      readonly kind: 'any';
      readonly values: readonly QValue[];
      /** valueBytes of each value, kept so that a copied run is counted exactly without walking its documents again. */
      readonly sizes: Uint32Array;
      /** The sizes, summed. */
      readonly valueBytes: number;
    };

/** Part of a chunk being built: rows from..to of an existing chunk, or one new row. */
export type Piece = { readonly chunk: Chunk; readonly from: number; readonly to: number } | { readonly pk: Uint8Array; readonly row: Row };

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * What a chunk holds besides its arrays' bytes (the chunk object, its typed arrays' headers and
 * backing-store records), measured as heap + external growth per chunk of a cached table.
 */
const CHUNK_OVERHEAD_BYTES = 512;

/**
 * A run of rows in primary-key order with their encoded keys; never changed once built. Stored
 * compactly (what a table of millions of rows costs in memory is what a chunk costs per row): the
 * keys packed in one buffer, the rows as columns (query/exec/chunk.ts Column), rows made on
 * demand (row(), rows()). A write copies only the chunk it changes, so every other chunk, and the
 * column layouts numbers() hands out, stay the same objects.
 */
export class Chunk {
  /** numbers() of columns not stored as doubles, by column position; filled on first use. */
  private readonly converted: (Float64Array | undefined)[] = [];

  private constructor(
    /** Rows held. */
    readonly count: number,
    /** The keys, back to back. */
    private readonly pkBytes: Buffer,
    /** Where key i ends in pkBytes; null: every key is `pkWidth` bytes. */
    private readonly pkEnds: Uint32Array | null,
    private readonly pkWidth: number,
    /** By column position (columnsOf). */
    private readonly columns: readonly Column[],
    /** What this chunk keeps alive, in bytes (its arrays and an estimate of the values of 'any' columns). */
    readonly bytes: number,
  ) {}

  static readonly empty = Chunk.build([]);

  /** A chunk of `pieces` in order (their keys ascending). */
  static build(pieces: readonly Piece[]): Chunk {
    let count = 0;
    let pkTotal = 0;
    let width = -1;
    for (const p of pieces) {
      if ('row' in p) {
        count += 1;
        pkTotal += p.pk.length;
        width = width === -1 || width === p.pk.length ? p.pk.length : -2;
      } else if (p.to > p.from) {
        count += p.to - p.from;
        const start = p.chunk.pkStart(p.from);
        pkTotal += p.chunk.pkStart(p.to) - start;
        const w = p.chunk.pkEnds === null ? p.chunk.pkWidth : -2;
        width = width === -1 || width === w ? w : -2;
      }
    }
    const pkBytes = Buffer.allocUnsafeSlow(pkTotal); // its own memory, not a slice of Node's shared pool
    const pkEnds = width >= 0 ? null : new Uint32Array(count);
    let at = 0;
    let k = 0;
    for (const p of pieces) {
      if ('row' in p) {
        pkBytes.set(p.pk, at);
        at += p.pk.length;
        if (pkEnds) pkEnds[k] = at;
        k += 1;
        continue;
      }
      const start = p.chunk.pkStart(p.from);
      pkBytes.set(p.chunk.pkBytes.subarray(start, p.chunk.pkStart(p.to)), at);
      if (pkEnds) for (let i = p.from; i < p.to; i++) pkEnds[k++] = at + p.chunk.pkStart(i + 1) - start;
      else k += p.to - p.from;
      at += p.chunk.pkStart(p.to) - start;
    }
    const columnCount = columnCountOf(pieces);
    const columns: Column[] = [];
    let bytes = CHUNK_OVERHEAD_BYTES + pkBytes.length + (pkEnds?.byteLength ?? 0);
    for (let c = 0; c < columnCount; c++) {
      const column = buildColumn(pieces, c, count);
      columns.push(column);
      bytes += columnBytes(column);
    }
    return new Chunk(count, pkBytes, pkEnds, width < 0 ? 0 : width, columns, bytes);
  }

  /** The columns as stored (for building chunks from this one). */
  columnsOf(): readonly Column[] {
    return this.columns;
  }

  /** Where key `i` starts in pkBytes (i === count: the end). */
  private pkStart(i: number): number {
    if (this.pkEnds === null) return i * this.pkWidth;
    return i === 0 ? 0 : this.pkEnds[i - 1]!;
  }

  /** Key `i` compared with `key`, as bytes (< 0: key i sorts first). */
  compareKey(i: number, key: Uint8Array): number {
    return this.pkBytes.compare(key, 0, key.length, this.pkStart(i), this.pkStart(i + 1));
  }

  /** Key `i` (a copy). */
  pk(i: number): Uint8Array {
    return new Uint8Array(this.pkBytes.subarray(this.pkStart(i), this.pkStart(i + 1)));
  }

  /** Every key, each a copy (for inspection: the chunk itself keeps them packed, never as views of what they came from). */
  get pks(): Uint8Array[] {
    return Array.from({ length: this.count }, (_, i) => this.pk(i));
  }

  /** First row whose key is >= `key` (count: none). */
  lowerBound(key: Uint8Array): number {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compareKey(mid, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Row `i`, made now (the caller owns it). */
  row(i: number): Row {
    const columns = this.columns;
    const out: Row = new Array<QValue>(columns.length);
    for (let c = 0; c < columns.length; c++) out[c] = valueAt(columns[c]!, i);
    return out;
  }

  /** Rows from..to - 1, made now (the caller owns them). */
  rows(from = 0, to = this.count): Row[] {
    const out: Row[] = new Array<Row>(Math.max(0, to - from));
    for (let i = from; i < to; i++) out[i - from] = this.row(i);
    return out;
  }

  /**
   * Column `c` of every row as doubles, NaN for NULL: for columns whose values are JS numbers that
   * are never NaN (int2, int4, date), so a comparison with NaN is false as one with NULL is not true.
   * The same array every time (callers only read it).
   */
  numbers(c: number): Float64Array {
    const column = this.columns[c];
    if (column?.kind === 'f64') return column.values;
    let out = this.converted[c];
    if (out === undefined) {
      out = new Float64Array(this.count);
      for (let i = 0; i < this.count; i++) {
        const v = column === undefined ? null : valueAt(column, i);
        out[i] = v === null || v === undefined ? NaN : (v as number);
      }
      this.converted[c] = out;
    }
    return out;
  }
}

function valueAt(column: Column, i: number): QValue {
  if (column.kind === 'any') return column.values[i]!;
  if (column.nulls !== null && column.nulls[i] === 1) return null;
  return column.values[i]!;
}

function columnCountOf(pieces: readonly Piece[]): number {
  let n = 0;
  for (const p of pieces) n = Math.max(n, 'row' in p ? p.row.length : p.to > p.from ? p.chunk.columnsOf().length : 0);
  return n;
}

/** The kind column `c` of `pieces` is stored as: the narrowest that holds every value. */
function kindOf(pieces: readonly Piece[], c: number): Column['kind'] {
  let kind: Column['kind'] | null = null;
  for (const p of pieces) {
    if ('row' in p) {
      const v = p.row[c];
      const k = typeof v === 'number' ? 'f64' : typeof v === 'bigint' && v >= INT64_MIN && v <= INT64_MAX ? 'i64' : v === null ? null : 'any';
      if (k === null) continue;
      if (k === 'any' || (kind !== null && kind !== k)) return 'any';
      kind = k;
    } else if (p.to > p.from) {
      const column = p.chunk.columnsOf()[c];
      if (column === undefined) return 'any';
      if (column.kind === 'any') return 'any';
      if (column.nulls !== null && allNull(column.nulls, p.from, p.to)) continue;
      if (kind !== null && kind !== column.kind) return 'any';
      kind = column.kind;
    }
  }
  return kind ?? 'f64';
}

function allNull(nulls: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (nulls[i] !== 1) return false;
  return true;
}

function buildColumn(pieces: readonly Piece[], c: number, count: number): Column {
  const kind = kindOf(pieces, c);
  if (kind === 'any') {
    const values: QValue[] = new Array<QValue>(count);
    const sizes = new Uint32Array(count);
    let k = 0;
    for (const p of pieces) {
      if ('row' in p) {
        const v = p.row[c] ?? null;
        sizes[k] = valueBytes(v);
        values[k++] = v;
        continue;
      }
      const column = p.chunk.columnsOf()[c];
      // A run of an 'any' column keeps its values' sizes (a write does not walk the documents it
      // copies); of a typed one, numbers and bigints as they become.
      if (column?.kind === 'any') sizes.set(column.sizes.subarray(p.from, p.to), k);
      for (let i = p.from; i < p.to; i++, k++) {
        values[k] = column === undefined ? null : valueAt(column, i);
        if (column?.kind !== 'any') sizes[k] = valueBytes(values[k]);
      }
    }
    let bytes = 0;
    for (let i = 0; i < count; i++) bytes += sizes[i]!;
    return { kind, values, sizes, valueBytes: bytes };
  }
  const values = kind === 'f64' ? new Float64Array(count) : new BigInt64Array(count);
  let nulls: Uint8Array | null = null;
  const markNull = (k: number): void => {
    nulls ??= new Uint8Array(count);
    nulls[k] = 1;
    if (kind === 'f64') values[k] = NaN;
  };
  let k = 0;
  for (const p of pieces) {
    if ('row' in p) {
      const v = p.row[c] ?? null;
      if (v === null) markNull(k);
      else values[k] = v as number & bigint;
      k += 1;
      continue;
    }
    const column = p.chunk.columnsOf()[c] as Extract<Column, { kind: 'f64' | 'i64' }>;
    if (column.kind === kind) (values as Float64Array).set(column.values.subarray(p.from, p.to) as Float64Array, k);
    if (column.nulls !== null || column.kind !== kind) {
      // A run of NULLs stored in a column of the other kind (kindOf skipped it) is all NULL.
      for (let i = p.from; i < p.to; i++) if (column.kind !== kind || column.nulls![i] === 1) markNull(k + i - p.from);
    }
    k += p.to - p.from;
  }
  return { kind, values, nulls } as Column;
}

function columnBytes(column: Column): number {
  if (column.kind !== 'any') return column.values.byteLength + (column.nulls?.byteLength ?? 0);
  return 8 * column.values.length + column.sizes.byteLength + column.valueBytes;
}

/**
 * Heap bytes a value of an 'any' column keeps beyond its slot, roughly (V8's object headers, two
 * bytes a character at most): strings, float vectors, arrays and objects (JSON, intervals).
 */
export function valueBytes(v: unknown): number {
  if (v === null || v === undefined || typeof v === 'boolean') return 0;
  if (typeof v === 'number') return 16;
  if (typeof v === 'bigint') return 24;
  if (typeof v === 'string') return 16 + 2 * v.length;
  if (ArrayBuffer.isView(v)) return 160 + v.byteLength;
  if (Array.isArray(v)) return 32 + v.reduce((sum: number, e) => sum + 8 + valueBytes(e), 0);
  if (typeof v !== 'object') return 16;
  let bytes = 64;
  for (const [key, e] of Object.entries(v)) bytes += 16 + 2 * key.length + valueBytes(e);
  return bytes;
}
