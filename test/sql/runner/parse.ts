/**
 * Parser of the sqllogictest (.slt) format, the subset svcdb's files and the public conformance
 * runner (../shared/conformance/sql/run.mjs) share:
 *
 *   statement ok | statement error [regex]
 *   query <types> [nosort|rowsort|valuesort] [label]   or   query error [regex]
 *   <sql lines, up to a blank line or ---->
 *   ----
 *   <expected lines, up to a blank line>
 *
 * plus `hash-threshold N`, `skipif DIALECT` / `onlyif DIALECT` before a record, `halt`, and `#`
 * comments. Other control lines (mode, include, sleep, ...) are ignored, as run.mjs does.
 * Line numbers are 1-based and point at the record's header line.
 */

export type SortMode = 'nosort' | 'rowsort' | 'valuesort';

export interface Condition {
  readonly kind: 'skipif' | 'onlyif';
  readonly dialect: string;
}

interface RecordBase {
  readonly line: number;
  readonly conditions: readonly Condition[];
}

export interface StatementRecord extends RecordBase {
  readonly kind: 'statement';
  readonly sql: string;
  readonly expectError: boolean;
  /** The regex after `statement error`, or null (any error). */
  readonly errorPattern: string | null;
  /** 0-based index range [first, end) of the SQL lines in the file. */
  readonly sqlLines: readonly [number, number];
}

export interface QueryRecord extends RecordBase {
  readonly kind: 'query';
  readonly sql: string;
  readonly expectError: boolean;
  readonly errorPattern: string | null;
  /** One letter per result column: T text, I integer, R real/numeric (only --float3 looks at them). */
  readonly types: string;
  readonly sort: SortMode;
  readonly label: string | null;
  /** The lines after `----`; null when the record has no `----` (expects no rows). */
  readonly expected: readonly string[] | null;
  readonly hashThreshold: number;
  readonly sqlLines: readonly [number, number];
  /** 0-based index range [first, end) of `----` and the expected lines (empty range when absent). */
  readonly resultLines: readonly [number, number];
}

export interface HaltRecord extends RecordBase {
  readonly kind: 'halt';
}

export type SltRecord = StatementRecord | QueryRecord | HaltRecord;

const SORT_MODES = new Set<string>(['nosort', 'rowsort', 'valuesort']);

/** The regex after `statement error` / `query error`, or null when none is given. */
function errorPatternOf(line: string, keyword: 'statement' | 'query'): string | null {
  const rest = line.trim().replace(new RegExp(`^${keyword}\\s+error\\s*`), '');
  return rest === '' ? null : rest;
}

export function parseSlt(text: string): SltRecord[] {
  const lines = text.split('\n').map((l) => l.replace(/\r$/, ''));
  const records: SltRecord[] = [];
  let conditions: Condition[] = [];
  let hashThreshold = 0;
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    const lineNumber = i + 1;
    i++;
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    const tokens = line.trim().split(/\s+/);
    const head = tokens[0]!;
    if (head === 'skipif' || head === 'onlyif') {
      conditions.push({ kind: head, dialect: tokens[1] ?? '' });
      continue;
    }
    if (head === 'hash-threshold') {
      hashThreshold = Number(tokens[1] ?? 0) || 0;
      conditions = [];
      continue;
    }
    if (head === 'halt') {
      records.push({ kind: 'halt', line: lineNumber, conditions });
      conditions = [];
      continue;
    }
    if (head !== 'statement' && head !== 'query') {
      conditions = []; // mode, include, sleep, control, ...: ignored
      continue;
    }
    const sqlStart = i;
    while (i < lines.length && lines[i]!.trim() !== '' && lines[i]!.trim() !== '----') i++;
    const sqlLines: [number, number] = [sqlStart, i];
    const sql = lines.slice(sqlStart, i).join('\n');
    let expected: string[] | null = null;
    const resultStart = i;
    if (i < lines.length && lines[i]!.trim() === '----') {
      i++;
      expected = [];
      while (i < lines.length && lines[i]!.trim() !== '') expected.push(lines[i++]!);
    }
    const resultLines: [number, number] = [resultStart, expected === null ? resultStart : i];
    const expectError = tokens[1] === 'error';
    if (head === 'statement') {
      records.push({
        kind: 'statement',
        line: lineNumber,
        conditions,
        sql,
        expectError,
        sqlLines,
        errorPattern: expectError ? errorPatternOf(line, 'statement') : null,
      });
    } else {
      const sortToken = tokens[2];
      const sort: SortMode = sortToken !== undefined && SORT_MODES.has(sortToken) ? (sortToken as SortMode) : 'nosort';
      records.push({
        kind: 'query',
        line: lineNumber,
        conditions,
        sql,
        expectError,
        sqlLines,
        resultLines,
        expected,
        hashThreshold,
        errorPattern: expectError ? errorPatternOf(line, 'query') : null,
        types: expectError ? '' : (tokens[1] ?? ''),
        sort,
        label: expectError ? null : (tokens[3] ?? null),
      });
    }
    conditions = [];
  }
  return records;
}

/** run.mjs's rule: every onlyif names one of our dialects, no skipif does. */
export function appliesTo(conditions: readonly Condition[], dialects: ReadonlySet<string>): boolean {
  return conditions.every((c) => (c.kind === 'onlyif' ? dialects.has(c.dialect) : !dialects.has(c.dialect)));
}

/** Does the statement end in its own ORDER BY (not one inside parentheses, a window or a subquery)? */
export function hasTopLevelOrderBy(sql: string): boolean {
  let depth = 0;
  let top = '';
  for (const ch of sql.replace(/'(?:[^']|'')*'/g, "''")) {
    if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (depth === 0) top += ch;
  }
  return /\border\s+by\b/i.test(top);
}
