/**
 * A fast front end for the common bulk statement `INSERT INTO name [(cols)] VALUES (lit, ...), ...
 * [tail]` whose cells are all simple literals: integers, decimals, 'strings' (standard conforming:
 * '' is the only escape), NULL, TRUE, FALSE, DEFAULT, -number and $n. libpg-query's parse of a
 * 1,000-row text was a third of such a statement's time; scanning the literals by hand is a small
 * fraction of it. The output is exactly what the general path (libpg-query + translate/) gives for
 * the same text, so binding cannot tell them apart: the statement around the rows (the header with
 * its names, and whatever follows the rows: RETURNING, ON CONFLICT, ...) is parsed by the general
 * path itself, as a template with one `(NULL)` row (cached by its text), and only the rows are
 * scanned here. Anything this scanner is not sure of (a comment, a cast, E'', an expression, odd
 * whitespace, a NUL) returns null: the caller then parses the text the general way, which also
 * reports every error with PostgreSQL's words and positions. Differentially tested against the
 * general path (test/query/fast-values.test.ts).
 */
import type { InsertStatement, ParsedStatement, SqlExpr, ValuesQuery } from './ast/index.js';

/** Templates kept (distinct statement shapes around the rows); the map is emptied when it is full. */
const TEMPLATE_COUNT_MAX = 256;
/** Longest template kept (as the parse cache's texts): a longer one is parsed again each time, so the map stays small. */
const TEMPLATE_TEXT_CHARS_MAX = 4096;
/** Longest $n scanned here (PostgreSQL refuses numbers past int32; those go the general way). */
const PARAM_DIGITS_MAX = 6;
const INT4_MAX = 2147483647;
const TEMPLATE_ROW = '(NULL)';

/** The general parse of the template around the rows, or null when it is not a plain VALUES insert. */
interface Template {
  readonly statement: ParsedStatement;
  readonly body: InsertStatement;
  readonly source: ValuesQuery;
}

const templates = new Map<string, Template | null>();

/** The rows of one scanned VALUES list, where they start and end in the text, and the highest $n in them. */
interface ScannedRows {
  readonly rows: SqlExpr[][];
  readonly start: number;
  readonly end: number;
  readonly paramMax: number;
  /** UTF-8 bytes past one per character in the rows: positions (loc) are PostgreSQL's, in bytes. */
  readonly extraBytes: number;
}

/** Where the scan is: `at` a character index; a node's loc is at + extraBytes (libpg-query counts bytes). */
interface ScanState {
  at: number;
  paramMax: number;
  extraBytes: number;
}

/**
 * The one statement of `sql` when it is an INSERT ... VALUES of simple literals, else null (the
 * caller parses it the general way). `general` is the general parse, used for the template.
 */
export function parseValuesInsert(sql: string, general: (sql: string) => ParsedStatement[]): ParsedStatement | null {
  const start = valuesStart(sql);
  if (start < 0) return null;
  const scanned = scanRows(sql, start);
  if (scanned === null) return null;
  // libpg-query's statement length is in bytes too: past non-ASCII rows it would end the text elsewhere.
  if (scanned.extraBytes > 0 && sql.includes(';', scanned.end)) return null;
  const templateText = sql.slice(0, scanned.start) + TEMPLATE_ROW + sql.slice(scanned.end);
  const template = templateOf(templateText, scanned.start, general);
  if (template === null) return null;
  const delta = scanned.end - scanned.start - TEMPLATE_ROW.length;
  const tailFrom = scanned.start + TEMPLATE_ROW.length;
  const locDelta = delta + scanned.extraBytes;
  const { statement, body, source } = template;
  const insert: InsertStatement = {
    ...body,
    source: { ...source, rows: scanned.rows },
    onConflict: shifted(body.onConflict, tailFrom, locDelta),
    returning: shifted(body.returning, tailFrom, locDelta),
  };
  return {
    text: sql.slice(statement.offset, statement.offset + statement.text.length + delta),
    offset: statement.offset,
    explain: null,
    body: insert,
    paramCount: Math.max(statement.paramCount, scanned.paramMax),
  };
}

function templateOf(text: string, rowAt: number, general: (sql: string) => ParsedStatement[]): Template | null {
  const known = templates.get(text);
  if (known !== undefined) return known;
  let template: Template | null = null;
  try {
    const parsed = general(text);
    const statement = parsed.length === 1 ? parsed[0]! : undefined;
    const body = statement?.explain === null ? statement.body : undefined;
    if (body?.kind === 'insert' && body.source?.kind === 'values' && isPlainTemplate(body, body.source, rowAt)) {
      template = deepFreeze({ statement: statement!, body, source: body.source });
    }
  } catch {
    template = null; // the general parse of the whole text reports the error, at its own position
  }
  if (text.length > TEMPLATE_TEXT_CHARS_MAX) return template;
  if (templates.size >= TEMPLATE_COUNT_MAX) templates.clear();
  templates.set(text, template);
  return template;
}

/** The template parsed as an INSERT whose source is exactly the one `(NULL)` row at rowAt, nothing around it. */
function isPlainTemplate(body: InsertStatement, s: ValuesQuery, rowAt: number): boolean {
  if (body.with !== null || s.with !== null || s.orderBy.length > 0 || s.limit !== null || s.offset !== null || s.locking.length > 0) return false;
  const cell = s.rows.length === 1 && s.rows[0]!.length === 1 ? s.rows[0]![0]! : undefined;
  return cell !== undefined && cell.kind === 'null' && cell.loc === rowAt + 1;
}

/** Where the first row's `(` of an `INSERT ... VALUES` is, or -1 when the text does not start that way. */
function valuesStart(sql: string): number {
  let i = skipSpace(sql, 0);
  let words = 0;
  for (;;) {
    const c = codeAt(sql, i);
    if (isIdentStart(c)) {
      let j = i + 1;
      while (j < sql.length && isIdentPart(sql.charCodeAt(j))) j++;
      const word = sql.slice(i, j).toLowerCase();
      if ((words === 0 && word !== 'insert') || (words === 1 && word !== 'into')) return -1;
      words++;
      i = skipSpace(sql, j);
      // VALUES may also name a column or a table (a column-name keyword): the one before a "(" starts the rows.
      if (word === 'values' && codeAt(sql, i) === 40) return i;
    } else if (c === 34 && words >= 2) {
      const close = quotedEnd(sql, i);
      // Positions after a non-ASCII name would be bytes, not characters: the general way.
      if (close < 0 || UNCOMMON.test(sql.slice(i, close))) return -1;
      i = skipSpace(sql, close);
    } else if ((c === 46 || c === 40 || c === 41 || c === 44) && words >= 2) {
      i = skipSpace(sql, i + 1); // . ( ) , of a qualified name and a column list
    } else {
      return -1;
    }
  }
}

/** The end (past the closing quote) of a "quoted identifier" starting at i, or -1. */
function quotedEnd(sql: string, i: number): number {
  let j = i + 1;
  for (;;) {
    const close = sql.indexOf('"', j);
    if (close < 0) return -1;
    if (codeAt(sql, close + 1) !== 34) return close + 1;
    j = close + 2;
  }
}

/** The rows from the `(` at `start`: null at the first thing that is not a simple literal list. */
function scanRows(sql: string, start: number): ScannedRows | null {
  const rows: SqlExpr[][] = [];
  const state: ScanState = { at: start, paramMax: 0, extraBytes: 0 };
  for (;;) {
    // at: a row's "("
    const row: SqlExpr[] = [];
    state.at = skipSpace(sql, state.at + 1);
    for (;;) {
      const cell = scanLiteral(sql, state);
      if (cell === null) return null;
      row.push(cell);
      state.at = skipSpace(sql, state.at);
      const c = codeAt(sql, state.at);
      if (c === 41) break;
      if (c !== 44) return null;
      state.at = skipSpace(sql, state.at + 1);
    }
    rows.push(row);
    const end = state.at + 1;
    const next = skipSpace(sql, end);
    if (codeAt(sql, next) !== 44) return { rows, start, end, paramMax: state.paramMax, extraBytes: state.extraBytes };
    state.at = skipSpace(sql, next + 1);
    if (codeAt(sql, state.at) !== 40) return null;
  }
}

/** One literal at state.at (moved past it), or null when it is none of the simple kinds. */
function scanLiteral(sql: string, state: ScanState): SqlExpr | null {
  const loc = state.at + state.extraBytes;
  const c = codeAt(sql, state.at);
  if (c === 39) return scanString(sql, state, loc);
  if (isDigit(c) || c === 46) return scanNumber(sql, state, loc, false);
  if (c === 45) {
    state.at = skipSpace(sql, state.at + 1);
    const d = codeAt(sql, state.at);
    return isDigit(d) || d === 46 ? scanNumber(sql, state, loc, true) : null;
  }
  if (c === 36) return scanParam(sql, state, loc);
  if (!isIdentStart(c)) return null;
  const from = state.at;
  let j = from + 1;
  while (j < sql.length && isIdentPart(sql.charCodeAt(j))) j++;
  state.at = j;
  switch (sql.slice(from, j).toLowerCase()) {
    case 'null':
      return { kind: 'null', loc };
    case 'true':
      return { kind: 'bool', value: true, loc };
    case 'false':
      return { kind: 'bool', value: false, loc };
    case 'default':
      return { kind: 'default', loc };
    default:
      return null;
  }
}

/** 'text' with '' for a quote; null for a NUL or a lone surrogate (the general path's scanner is the judge of those). */
function scanString(sql: string, state: ScanState, loc: number): SqlExpr | null {
  let value = '';
  let from = state.at + 1;
  for (;;) {
    const close = sql.indexOf("'", from);
    if (close < 0) return null;
    value += sql.slice(from, close);
    if (codeAt(sql, close + 1) !== 39) {
      state.at = close + 1;
      break;
    }
    value += "'";
    from = close + 2;
  }
  if (UNCOMMON.test(value)) {
    if (value.includes('\u0000') || (SURROGATES.test(value) && !wellFormed(value))) return null;
    state.extraBytes += Buffer.byteLength(value, 'utf8') - value.length;
  }
  return { kind: 'string', value, loc };
}

/** Anything but printable ASCII, tab, LF, CR: a character that may take more than one byte (or be a NUL). */
const UNCOMMON = /[^\t\n\r -~]/;
const SURROGATES = /[\ud800-\udfff]/;

function wellFormed(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 0xdc00 && c <= 0xdfff) return false;
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = value.charCodeAt(i + 1);
      if (!(d >= 0xdc00 && d <= 0xdfff)) return false;
      i++;
    }
  }
  return true;
}

/**
 * digits[.digits][e[+-]digits] or .digits[...], as PostgreSQL's scanner reads it: an integer that fits
 * int4 becomes that integer's text (leading zeros gone), anything else keeps its text as written;
 * a minus sign folds into the constant (PostgreSQL's doNegate), its position the constant's.
 */
function scanNumber(sql: string, state: ScanState, loc: number, negative: boolean): SqlExpr | null {
  const from = state.at;
  let i = from;
  while (isDigit(codeAt(sql, i))) i++;
  let integer = i > from;
  if (codeAt(sql, i) === 46) {
    integer = false;
    i++;
    const fraction = i;
    while (isDigit(codeAt(sql, i))) i++;
    if (i === fraction && i - 1 === from) return null; // a lone "."
  }
  const e = codeAt(sql, i);
  if (e === 101 || e === 69) {
    integer = false;
    i++;
    const sign = codeAt(sql, i);
    if (sign === 43 || sign === 45) i++;
    const exponent = i;
    while (isDigit(codeAt(sql, i))) i++;
    if (i === exponent) return null;
  }
  state.at = i;
  const written = sql.slice(from, i);
  // Up to nine digits without a leading zero: an int4 whose text is already as PostgreSQL prints it.
  // (-0 is 0: the general way below.)
  if (integer && i - from <= 9 && codeAt(sql, from) !== 48) return { kind: 'number', text: negative ? '-' + written : written, loc };
  let text = written;
  if (integer) {
    const digits = written.replace(/^0+(?=.)/, '');
    if (digits.length <= 10 && Number(digits) <= INT4_MAX) text = String(negative ? -Number(digits) : Number(digits));
    else if (negative) text = '-' + written;
  } else if (negative) {
    text = '-' + written;
  }
  return { kind: 'number', text, loc };
}

function scanParam(sql: string, state: ScanState, loc: number): SqlExpr | null {
  const from = state.at + 1;
  let i = from;
  while (isDigit(codeAt(sql, i))) i++;
  if (i === from || i - from > PARAM_DIGITS_MAX) return null;
  state.at = i;
  const number = Number(sql.slice(from, i));
  if (number > state.paramMax) state.paramMax = number;
  return { kind: 'param', number, loc };
}

/** Skips the whitespace PostgreSQL's scanner and this one agree on (space, tab, CR, LF); comments are not skipped. */
function skipSpace(sql: string, i: number): number {
  for (;;) {
    const c = codeAt(sql, i);
    if (c !== 32 && c !== 10 && c !== 13 && c !== 9) return i;
    i++;
  }
}

/**
 * The UTF-16 code at i, or -1 past the end (which no test below takes for a character). Every
 * statement's scan looks one past its last row: charCodeAt out of range (NaN) is a deoptimization
 * of optimized code that never saw one, so the scanner was compiled again (the costliest compile
 * of a 1,000-row statement) two or three times in a server's first VALUES statements.
 */
function codeAt(sql: string, i: number): number {
  return i < sql.length ? sql.charCodeAt(i) : -1;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** ASCII identifier start: other letters send the text the general way. */
function isIdentStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
}

function isIdentPart(c: number): boolean {
  return isIdentStart(c) || isDigit(c) || c === 36;
}

/** A copy of a template's tail part with its positions past `from` moved by `delta` (the rows' length against the template's). */
function shifted<T>(value: T, from: number, delta: number): T {
  if (delta === 0 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v: unknown) => shifted(v, from, delta)) as T;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = k === 'loc' && typeof v === 'number' && v >= from ? v + delta : shifted(v, from, delta);
  return out as T;
}

function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
  return value;
}
