/**
 * Tight loops over one chunk's number column (Chunk.numbers: doubles, NaN for NULL) for the
 * aggregates over cached tables (aggregate-scan.ts): no call per row, no row object read.
 */

/** A comparison of a column with a constant, as `column op value`. */
export type CompareOp = '=' | '<>' | '<' | '<=' | '>' | '>=';

/** `column op value` with the constant evaluated. */
export interface NumberTest {
  readonly column: number;
  readonly op: CompareOp;
  readonly value: number;
}

/** `lo <= value <= hi` on one number column. */
export interface Range {
  readonly column: number;
  readonly lo: number;
  readonly hi: number;
}

/**
 * The tests as one closed range of one column when that is exact (int2, int4 and date hold integers,
 * and so does a bound of their own type: `n > 5` is `n >= 6`); else null.
 */
export function rangeOf(tests: readonly NumberTest[]): Range | null {
  const column = tests[0]?.column;
  if (column === undefined) return null;
  let lo = -Infinity;
  let hi = Infinity;
  for (const t of tests) {
    if (t.column !== column || t.op === '<>' || !Number.isSafeInteger(t.value)) return null;
    if (t.op === '=' || t.op === '>=' || t.op === '>') lo = Math.max(lo, t.op === '>' ? t.value + 1 : t.value);
    if (t.op === '=' || t.op === '<=' || t.op === '<') hi = Math.min(hi, t.op === '<' ? t.value - 1 : t.value);
  }
  return { column, lo, hi };
}

/** Count, min and max of the values within [lo, hi] (NaN, NULL, never is) into `out`. */
export function rangeStats(values: Float64Array, lo: number, hi: number, out: Float64Array): void {
  let count = 0;
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v >= lo && v <= hi) {
      count++;
      if (v < min) min = v;
      if (v > max) max = v;
    }
  }
  out[0] = count;
  out[1] = min;
  out[2] = max;
}

/** Writes the positions (below `length`) whose value passes `value op bound` into `sel`; returns how many. */
export function selectWhere(values: Float64Array, op: CompareOp, bound: number, sel: Uint32Array, length: number): number {
  let out = 0;
  switch (op) {
    case '=':
      for (let i = 0; i < length; i++) if (values[i]! === bound) sel[out++] = i;
      return out;
    case '<>':
      for (let i = 0; i < length; i++) {
        const v = values[i]!;
        if (v === v && v !== bound) sel[out++] = i;
      }
      return out;
    case '<':
      for (let i = 0; i < length; i++) if (values[i]! < bound) sel[out++] = i;
      return out;
    case '<=':
      for (let i = 0; i < length; i++) if (values[i]! <= bound) sel[out++] = i;
      return out;
    case '>':
      for (let i = 0; i < length; i++) if (values[i]! > bound) sel[out++] = i;
      return out;
    case '>=':
      for (let i = 0; i < length; i++) if (values[i]! >= bound) sel[out++] = i;
      return out;
  }
}

/** Keeps the first `n` positions of `sel` whose value passes `value op bound` (in place); returns how many. */
export function narrow(values: Float64Array, op: CompareOp, bound: number, sel: Uint32Array, n: number): number {
  let out = 0;
  switch (op) {
    case '=':
      for (let k = 0; k < n; k++) if (values[sel[k]!]! === bound) sel[out++] = sel[k]!;
      return out;
    case '<>':
      for (let k = 0; k < n; k++) {
        const v = values[sel[k]!]!;
        if (v === v && v !== bound) sel[out++] = sel[k]!;
      }
      return out;
    case '<':
      for (let k = 0; k < n; k++) if (values[sel[k]!]! < bound) sel[out++] = sel[k]!;
      return out;
    case '<=':
      for (let k = 0; k < n; k++) if (values[sel[k]!]! <= bound) sel[out++] = sel[k]!;
      return out;
    case '>':
      for (let k = 0; k < n; k++) if (values[sel[k]!]! > bound) sel[out++] = sel[k]!;
      return out;
    case '>=':
      for (let k = 0; k < n; k++) if (values[sel[k]!]! >= bound) sel[out++] = sel[k]!;
      return out;
  }
}
