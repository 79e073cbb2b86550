/**
 * The one parse adapter: SQL text to svcdb's own statements (query/parse/ast). PostgreSQL's own
 * grammar (libpg-query, WebAssembly) parses; translate/ turns its raw tree into the owned AST; svcdb's
 * CDC statements, which PostgreSQL has no grammar for, have their own small parser. Nothing outside
 * query/parse imports libpg-query.
 */
import { parseSync, type Node, type ParseResult } from './pg-module.js';
import { SvcError } from '../../core/errors.js';
import type { ExplainOptions, ParsedStatement, SqlExpr, StatementBody } from './ast/index.js';
import { cdcStatement } from './cdc-statements.js';
import { parseValuesInsert } from './fast-values.js';
import { swapBack, swapOut } from './scanner-limits.js';
import { lineColumn, splitStatements, syntaxError, type Token } from './tokens.js';
import { translateExpr, translateStatement } from './translate/index.js';

type RawStatement = NonNullable<ParseResult['stmts']>[number];

/** Parses a request of one or more statements separated by semicolons. Throws INVALID_QUERY. */
export function parseSql(sql: string): ParsedStatement[] {
  // An INSERT ... VALUES of simple literals is scanned by hand (fast-values.ts): the same statement, without libpg-query's parse of every row.
  const values = parseValuesInsert(sql, parseGeneral);
  return values === null ? parseGeneral(sql) : [values];
}

/** parseSql through libpg-query for every statement (fast-values.ts's template and its differential test use it). */
export function parseGeneral(sql: string): ParsedStatement[] {
  const swapped = swapOut(sql);
  if (swapped) return swapBack(parseScanned(swapped.sql), swapped.swaps);
  return parseScanned(sql);
}

/** parseSql of a request PostgreSQL's scanner reads whole (scanner-limits.ts). */
function parseScanned(sql: string): ParsedStatement[] {
  let result: ParseResult;
  try {
    result = parseSync(sql);
  } catch (error) {
    // PostgreSQL refuses svcdb's CDC statements: parse statement by statement when the request has one.
    const pieces = splitStatements(sql);
    if (pieces.some((p) => isCdc(p.tokens))) return pieces.map((p) => parsePiece(sql, p));
    throw parseError(sql, 0, error);
  }
  const charAt = charOffsets(sql);
  const statements = (result.stmts ?? []).map((raw) => fromRaw(sql, raw, charAt));
  if (statements.length === 0) throw new SvcError('INVALID_QUERY', 'empty query: no SQL statement to run', { position: 1, line: 1, column: 1 });
  return statements;
}

/** Parses one expression (a stored DEFAULT or CHECK text, a filter) to the owned AST. */
export function parseExpression(text: string): SqlExpr {
  const swapped = swapOut(text);
  if (swapped) return swapBack(parseScannedExpression(swapped.sql), swapped.swaps);
  return parseScannedExpression(text);
}

function parseScannedExpression(text: string): SqlExpr {
  const prefix = 'SELECT ';
  let result: ParseResult;
  try {
    result = parseSync(prefix + text);
  } catch (error) {
    throw parseError(prefix + text, 0, error);
  }
  const stmts = result.stmts ?? [];
  const select = stmts.length === 1 ? (stmts[0]!.stmt as { SelectStmt?: { targetList?: Node[] } }).SelectStmt : undefined;
  const targets = select?.targetList ?? [];
  // Only the select list: `1 WHERE false`, `1 FROM t` or `1 LIMIT 0` are not one expression.
  const clauses = select ? Object.keys(select).filter((k) => k !== 'targetList' && k !== 'limitOption' && k !== 'op') : [];
  if (!select || targets.length !== 1 || clauses.length > 0) throw syntaxError(text, 0, 'expected one expression');
  const target = (targets[0] as { ResTarget?: { val?: Node } }).ResTarget;
  if (!target?.val) throw syntaxError(text, 0, 'expected one expression');
  return translateExpr(target.val);
}

/** One statement of a successful parse of the whole request. */
function fromRaw(sql: string, raw: RawStatement, charAt: (byte: number) => number): ParsedStatement {
  const location = raw.stmt_location ?? 0;
  const start = charAt(location);
  const end = raw.stmt_len === undefined || raw.stmt_len === 0 ? sql.length : charAt(location + raw.stmt_len);
  const { text, offset } = trimmed(sql, start, end);
  const stmt = raw.stmt as Node;
  const explain = (stmt as { ExplainStmt?: { query: Node; options?: Node[] } }).ExplainStmt;
  const inner = explain ? explain.query : stmt;
  const body = translateStatement(inner, text);
  return { text, offset, explain: explain ? explainOptions(explain.options ?? []) : null, body, paramCount: maxParam(inner) };
}

/** A statement of a request that has CDC statements: parsed on its own. */
function parsePiece(sql: string, piece: { text: string; offset: number; tokens: Token[] }): ParsedStatement {
  const cdc = cdcStatement(piece.tokens, (at, message) => {
    throw syntaxError(sql, piece.offset + at, message);
  });
  if (cdc) return { text: piece.text, offset: piece.offset, explain: null, body: cdc, paramCount: 0 };
  let result: ParseResult;
  try {
    result = parseSync(piece.text);
  } catch (error) {
    throw parseError(sql, piece.offset, error);
  }
  const stmts = result.stmts ?? [];
  if (stmts.length !== 1) throw syntaxError(sql, piece.offset, 'expected one statement');
  return { ...fromRaw(piece.text, stmts[0]!, charOffsets(piece.text)), offset: piece.offset };
}

/**
 * libpg-query gives a statement's place in UTF-8 bytes; a JavaScript string counts UTF-16 units.
 * The function answers for byte offsets asked in increasing order (a statement after the last),
 * walking the text once; ASCII text needs no walk. (Nodes' own positions stay bytes: see docs/sql.md.)
 */
function charOffsets(sql: string): (byte: number) => number {
  // eslint-disable-next-line no-control-regex
  if (!/[^\x00-\x7f]/.test(sql)) return (byte) => byte;
  let bytes = 0;
  let index = 0;
  return (byte) => {
    if (byte < bytes) {
      bytes = 0;
      index = 0;
    }
    while (index < sql.length && bytes < byte) {
      const c = sql.codePointAt(index)!;
      bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
      index += c >= 0x10000 ? 2 : 1;
    }
    return index;
  };
}

function isCdc(tokens: readonly Token[]): boolean {
  const words = tokens.slice(0, 4).map((t) => (t.kind === 'ident' ? t.value : ''));
  const w = words.join(' ');
  return w.startsWith('create change data capture') || w.startsWith('drop change data capture') || w.startsWith('show cdc') || w.startsWith('alter cdc');
}

/** The statement's text without the whitespace and comments PostgreSQL counts into it. */
function trimmed(sql: string, start: number, end: number): { text: string; offset: number } {
  let s = start;
  let e = end;
  for (;;) {
    while (s < e && /\s/.test(sql[s]!)) s++;
    if (sql.startsWith('--', s)) {
      const nl = sql.indexOf('\n', s);
      s = nl < 0 || nl > e ? e : nl + 1;
      continue;
    }
    if (sql.startsWith('/*', s)) {
      const close = sql.indexOf('*/', s + 2);
      s = close < 0 || close + 2 > e ? e : close + 2;
      continue;
    }
    break;
  }
  while (e > s && /[\s;]/.test(sql[e - 1]!)) e--;
  return { text: sql.slice(s, e), offset: s };
}

/** EXPLAIN [ANALYZE] [VERBOSE] [(ANALYZE [bool], FORMAT JSON|YAML|TEXT, ...)]. */
function explainOptions(options: readonly Node[]): ExplainOptions {
  let analyze = false;
  let format: ExplainOptions['format'] = 'text';
  for (const option of options) {
    const def = (option as { DefElem?: { defname?: string; arg?: Node } }).DefElem;
    if (!def) continue;
    const value = def.arg ? scalarText(def.arg).toLowerCase() : null;
    if (def.defname === 'analyze') analyze = value === null || !['false', 'off', '0'].includes(value);
    if (def.defname === 'format') {
      if (value !== 'json' && value !== 'yaml' && value !== 'text') {
        throw new SvcError('INVALID_QUERY', `unrecognized value for EXPLAIN option "format": "${value ?? ''}"`, { reason: 'unsupported' });
      }
      format = value;
    }
  }
  return { analyze, format };
}

function scalarText(node: Node): string {
  const n = node as { String?: { sval?: string }; Boolean?: { boolval?: boolean }; Integer?: { ival?: number }; A_Const?: { sval?: { sval?: string } } };
  if (n.String) return n.String.sval ?? '';
  if (n.Boolean) return String(n.Boolean.boolval ?? false);
  if (n.Integer) return String(n.Integer.ival ?? 0);
  return '';
}

/** The highest $n a raw tree refers to. */
function maxParam(node: unknown): number {
  let max = 0;
  const stack: unknown[] = [node];
  while (stack.length > 0) {
    const value = stack.pop();
    if (value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      for (const item of value) stack.push(item);
      continue;
    }
    const ref = (value as { ParamRef?: { number?: number } }).ParamRef;
    if (ref) {
      max = Math.max(max, ref.number ?? 0);
      continue;
    }
    for (const key in value) stack.push((value as Record<string, unknown>)[key]);
  }
  return max;
}

/** PostgreSQL's syntax error, with the position, line and column in the request. */
function parseError(sql: string, base: number, error: unknown): SvcError {
  const details = (error as { sqlDetails?: { message?: string; cursorPosition?: number } }).sqlDetails;
  const message = details?.message ?? (error as Error).message ?? 'syntax error';
  const position = base + Math.max(0, details?.cursorPosition ?? 0);
  const { line, column } = lineColumn(sql, position);
  const near = /at or near "(.*)"$/.exec(message)?.[1];
  // Where in the text: said in the message of a syntax error; other grammar errors keep PostgreSQL's own words.
  const positional = near !== undefined || message.endsWith('at end of input');
  return new SvcError(
    'INVALID_QUERY',
    positional ? `${message} (line ${line}, column ${column})` : message,
    { position: position + 1, line, column, ...(near === undefined ? {} : { near }) },
    error,
  );
}

export type { StatementBody };
