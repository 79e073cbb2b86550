import { createHash } from 'node:crypto';
import type { SortMode } from './parse.js';

/**
 * Result comparison, exactly as ../shared/conformance/sql/run.mjs does it:
 * - `N values hashing to MD5` compares the count and the MD5 of every value followed by "\n";
 * - value-per-line mode (valuesort, a one-column result, or as many expected lines as values but
 *   not as rows): each expected line, trimmed, equals one value;
 * - otherwise row-per-line: a row's values joined by one space, whitespace runs collapsed.
 * rowsort sorts rows by their space-joined text (JavaScript string order) before any of it.
 */

const HASH_LINE = /^(\d+) values hashing to ([0-9a-f]{32})$/;

export interface Comparison {
  readonly ok: boolean;
  /** The actual result as the expected lines a correct file would hold (for messages and --complete). */
  readonly actualLines: readonly string[];
}

const byJoinedText = (a: readonly string[], b: readonly string[]): number => {
  const x = a.join(' ');
  const y = b.join(' ');
  return x < y ? -1 : x > y ? 1 : 0;
};

export function md5OfValues(values: readonly string[]): string {
  return createHash('md5')
    .update(values.map((v) => `${v}\n`).join(''))
    .digest('hex');
}

function sortedRows(rows: readonly (readonly string[])[], sort: SortMode): string[][] {
  const copy = rows.map((r) => [...r]);
  if (sort === 'rowsort') copy.sort(byJoinedText);
  return copy;
}

function flatValues(rows: readonly (readonly string[])[], sort: SortMode): string[] {
  const values = rows.flat();
  if (sort === 'valuesort') values.sort();
  return values;
}

/** The expected lines for a result: what `complete` writes into a file. */
export function expectedLinesFor(formattedRows: readonly (readonly string[])[], sort: SortMode, hashThreshold: number): string[] {
  const rows = sortedRows(formattedRows, sort);
  const values = flatValues(rows, sort);
  if (hashThreshold > 0 && values.length > hashThreshold) return [`${values.length} values hashing to ${md5OfValues(values)}`];
  if (sort === 'valuesort') return values;
  return rows.map((r) => r.join(' '));
}

export function compareResult(
  formattedRows: readonly (readonly string[])[],
  expectedLines: readonly string[] | null,
  sort: SortMode,
  hashThreshold: number,
): Comparison {
  const rows = sortedRows(formattedRows, sort);
  const values = flatValues(rows, sort);
  const exp = expectedLines ?? [];
  const hash = exp.length === 1 ? HASH_LINE.exec(exp[0]!) : null;
  let ok: boolean;
  if (hash) {
    ok = Number(hash[1]) === values.length && md5OfValues(values) === hash[2];
    return { ok, actualLines: [`${values.length} values hashing to ${md5OfValues(values)}`] };
  }
  const valueMode =
    sort === 'valuesort' || (exp.length === values.length && exp.length !== rows.length) || (exp.length === values.length && (rows[0]?.length ?? 1) === 1);
  if (valueMode) {
    ok = exp.length === values.length && exp.every((e, k) => e.trim() === values[k]);
  } else {
    const norm = (s: string): string => s.trim().split(/\s+/).join(' ');
    const got = rows.map((r) => norm(r.join(' ')));
    const want = exp.map(norm);
    if (sort === 'rowsort') {
      got.sort();
      want.sort();
    }
    ok = want.length === got.length && want.every((e, k) => e === got[k]);
  }
  return { ok, actualLines: expectedLinesFor(formattedRows, sort, hashThreshold) };
}
