import nodeSqlParser from 'node-sql-parser';
import { SvcError } from '../../core/errors.js';
import type { AstNode, CustomStatement, ExplainOptions, ParsedStatement } from './ast.js';
import { decodedScale, EXTRACT_FN, NEGATIVE_SCALE_BASE } from './expr-rewrites.js';
import { literalValue, NUM_FN, OP_FN, rewrite, splitStatements, STR_PREFIX } from './preprocess.js';
import { lineColumn, syntaxError, tokenize, type Token } from './tokens.js';
import { AstTemplateCache } from './ast-templates.js';
import { fixAndOrPrecedence } from './and-or-precedence.js';
import { refuseUnsupported } from './unsupported.js';
import { cdcStatement } from './cdc-statements.js';

/** The one adapter over node-sql-parser: nothing else imports it. */
const parser = new nodeSqlParser.Parser();
const PARSE_OPTIONS = { database: 'postgresql' } as const;

/**
 * Parses a request of one or more statements separated by semicolons. Throws INVALID_QUERY.
 * `useTemplates: false` parses every statement afresh (tests compare the two).
 */
export function parseSql(sql: string, options: { readonly useTemplates?: boolean } = {}): ParsedStatement[] {
  const statements = splitStatements(sql);
  if (statements.length === 0) throw new SvcError('INVALID_QUERY', 'empty query: no SQL statement to run', { position: 1, line: 1, column: 1 });
  const parseTokens = options.useTemplates === false ? parseTokensUncached : parseTokensCached;
  return statements.map((s) => parseOne(sql, s.text, s.offset, s.tokens, parseTokens));
}

type ParseTokens = (sql: string, at: number, shifted: readonly Token[]) => ParsedTokens;

function parseOne(sql: string, text: string, offset: number, tokens: Token[], parseTokens: ParseTokens): ParsedStatement {
  const explain = explainPrefix(tokens);
  const body = tokens.slice(explain?.width ?? 0);
  if (body.length === 0) throw syntaxError(sql, offset + text.length, 'syntax error at end of input');
  const bodyStart = body[0]!.start;
  const shifted = body.map((t) => ({ ...t, start: t.start - bodyStart, end: t.end - bodyStart }));
  const base = { text, offset, explain: explain?.options ?? null, vectorDims: [] as (number | null)[], hnsw: false };
  refuseUnsupported(shifted);
  const cdc = cdcStatement(shifted, (at, message) => {
    throw syntaxError(sql, offset + bodyStart + at, message);
  });
  if (cdc) return { ...base, ast: null, custom: cdc };
  const custom = customStatement(shifted);
  if (custom) return { ...base, ast: null, custom };
  const bulk = bulkInsert(shifted);
  if (bulk) {
    const head = parseTokens(sql, offset + bodyStart, bulk.head);
    if (head.ast.values?.type === 'values') {
      head.ast.values.values.push(...bulk.rows);
      return { ...base, ast: head.ast, custom: null, vectorDims: head.vectorDims, hnsw: false, limitExprs: [] };
    }
  }
  const parsed = parseTokens(sql, offset + bodyStart, shifted);
  return { ...base, ast: parsed.ast, custom: null, vectorDims: parsed.vectorDims, hnsw: parsed.hnsw, limitExprs: parsed.limitExprs };
}

interface ParsedTokens {
  readonly ast: AstNode;
  readonly vectorDims: readonly (number | null)[];
  readonly hnsw: boolean;
  readonly limitExprs: readonly string[];
}

/** Shapes of recently parsed statements (see ast-templates.ts); bulk INSERTs are too long to keep. */
const templates = new AstTemplateCache<ParsedTokens>(1024, 2000);

/** Statements parsed from a template, and statements of a shape that cannot be (for tests). */
export function astTemplateCounts(): { readonly instantiated: number; readonly untemplated: number } {
  return { ...templates.counts };
}

/** Rewrites and parses one statement's tokens, through the template cache. */
function parseTokensCached(sql: string, at: number, shifted: readonly Token[]): ParsedTokens {
  return templates.parse(
    shifted,
    (tokens) => {
      const parsed = parseTokensUncached(sql, at, tokens);
      return { parsed, ast: parsed.ast, literalsConsumed: parsed.vectorDims.length > 0 || parsed.limitExprs.length > 0 };
    },
    (parsed, ast) => ({ ...parsed, ast: ast as AstNode }),
  );
}

/** Rewrites and parses one statement's tokens (offsets relative to `at` in the request text). */
function parseTokensUncached(sql: string, at: number, shifted: readonly Token[]): ParsedTokens {
  const rewritten = rewrite(shifted[0]?.kind === 'ident' && shifted[0].value === 'values' ? wrapValues(shifted) : shifted);
  let ast: unknown;
  try {
    ast = parser.astify(rewritten.text, PARSE_OPTIONS);
  } catch (error) {
    const insert = insertFallback(shifted);
    if (insert) return { ast: insert, vectorDims: rewritten.vectorDims, hnsw: false, limitExprs: [] };
    const count = /column count doesn't match value count/.test((error as Error).message);
    if (count) throw new SvcError('INVALID_QUERY', insertCountMessage(shifted), {}, error);
    const errorAt = (error as { location?: { start?: { offset?: number } } }).location?.start?.offset;
    if (typeof errorAt !== 'number') throw new SvcError('INVALID_QUERY', `syntax error: ${(error as Error).message}`, {}, error);
    const position = at + rewritten.origOffset(errorAt);
    throw nearError(sql, position, error);
  }
  if (Array.isArray(ast)) {
    if (ast.length !== 1) throw syntaxError(sql, at, 'expected one statement');
    ast = ast[0];
  }
  fixAndOrPrecedence(ast);
  return { ast: ast as AstNode, vectorDims: rewritten.vectorDims, hnsw: rewritten.hnsw, limitExprs: rewritten.limitExprs ?? [] };
}

function nearError(sql: string, position: number, cause: unknown): SvcError {
  const rest = sql.slice(position);
  const word = /^\s*$/.test(rest) ? null : (/^("[^"]*"|'[^']*'|[A-Za-z_0-9$]+|\S)/.exec(rest)?.[0] ?? null);
  const { line, column } = lineColumn(sql, position);
  const near = word === null ? 'at end of input' : `at or near "${word}"`;
  return new SvcError(
    'INVALID_QUERY',
    `syntax error ${near} (line ${line}, column ${column})`,
    { position: position + 1, line, column, ...(word === null ? {} : { near: word }) },
    cause,
  );
}

/** EXPLAIN [ANALYZE] [VERBOSE] [(ANALYZE, FORMAT JSON, ...)] */
function explainPrefix(tokens: readonly Token[]): { width: number; options: ExplainOptions } | null {
  if (tokens[0]?.kind !== 'ident' || tokens[0].value !== 'explain') return null;
  let analyze = false;
  let format: ExplainOptions['format'] = 'text';
  let i = 1;
  if (tokens[i]?.value === '(') {
    const close = tokens.findIndex((t, j) => j > i && t.value === ')');
    const words = tokens.slice(i + 1, close < 0 ? tokens.length : close).map((t) => t.value);
    for (let w = 0; w < words.length; w++) {
      if (words[w] === 'analyze') analyze = words[w + 1] !== 'false' && words[w + 1] !== 'off';
      if (words[w] === 'format' && (words[w + 1] === 'json' || words[w + 1] === 'yaml' || words[w + 1] === 'text'))
        format = words[w + 1] as ExplainOptions['format'];
    }
    i = close + 1;
  } else {
    while (tokens[i]?.kind === 'ident' && (tokens[i]!.value === 'analyze' || tokens[i]!.value === 'verbose')) {
      if (tokens[i]!.value === 'analyze') analyze = true;
      i++;
    }
  }
  return { width: i, options: { analyze, format } };
}

function name(t: Token | undefined): string | null {
  if (!t) return null;
  if (t.kind === 'ident') return t.value;
  if (t.kind === 'qident') return t.value;
  return null;
}

/** ALTER TABLE [IF EXISTS] [schema.]t RENAME [COLUMN] a TO b; BEGIN/COMMIT/ROLLBACK. */
function customStatement(tokens: readonly Token[]): CustomStatement | null {
  const words = tokens.map((t) => (t.kind === 'ident' ? t.value : ''));
  if (tokens.length === 1 && ['begin', 'commit', 'rollback', 'end'].includes(words[0]!)) {
    const command = words[0] === 'begin' ? 'BEGIN' : words[0] === 'rollback' ? 'ROLLBACK' : 'COMMIT';
    return { kind: 'transaction', command };
  }
  if (words[0] !== 'alter' || words[1] !== 'table') return null;
  let i = 2;
  const ifExists = words[i] === 'if' && words[i + 1] === 'exists';
  if (ifExists) i += 2;
  let schema: string | null = null;
  let table = name(tokens[i]);
  if (tokens[i + 1]?.value === '.') {
    schema = table;
    table = name(tokens[i + 2]);
    i += 2;
  }
  i += 1;
  if (words[i] !== 'rename' || table === null) return null;
  i += 1;
  if (words[i] === 'column') i += 1;
  const from = name(tokens[i]);
  const to = name(tokens[i + 2]);
  if (from === null || words[i + 1] !== 'to' || to === null || tokens.length !== i + 3) return null;
  return { kind: 'rename_column', table: { schema, name: table }, ifExists, from, to };
}

/** SQL text of an expression node (CHECK definitions, DEFAULTs), with the preprocessor's rewrites undone. */
export function exprSql(ast: AstNode): string {
  const text = (parser as unknown as { exprToSQL(ast: unknown, opt: unknown): string }).exprToSQL(ast, PARSE_OPTIONS);
  return undoRewrites(text);
}

function undoRewrites(text: string): string {
  if (!text.includes('__svc_') && !/[0-9]{7}/.test(text)) return text;
  const tokens = tokenize(text);
  let out = '';
  let pos = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind === 'string' && t.value.startsWith(STR_PREFIX)) {
      out += `${text.slice(pos, t.start)}'${literalValue(t.value).replaceAll("'", "''")}'`;
      pos = t.end;
      continue;
    }
    if (
      t.kind === 'number' &&
      tokens[i - 1]?.value === ',' &&
      Number(t.value) >= NEGATIVE_SCALE_BASE &&
      /^(numeric|decimal)$/i.test(tokens[i - 4]?.text ?? '')
    ) {
      out += `${text.slice(pos, t.start)}${decodedScale(Number(t.value))}`;
      pos = t.end;
      continue;
    }
    if (t.kind !== 'ident' || (t.value !== NUM_FN && t.value !== OP_FN && t.value !== EXTRACT_FN) || tokens[i + 1]?.value !== '(') continue;
    const close = matchClose(tokens, i + 1);
    if (close < 0) continue;
    out += text.slice(pos, t.start) + undoCall(text, tokens, i, close);
    pos = tokens[close]!.end;
    i = close;
  }
  return out + text.slice(pos);
}

/** The SQL a rewritten call at tokens[i..close] stands for: a literal, an operator, EXTRACT. */
function undoCall(text: string, tokens: readonly Token[], i: number, close: number): string {
  if (tokens[i]!.value === NUM_FN) return tokens[i + 2]!.value;
  const comma = topLevelComma(tokens, i + 4, close);
  const first = undoRewrites(text.slice(tokens[i + 4]!.start, tokens[comma]!.start).trim());
  if (tokens[i]!.value === EXTRACT_FN) return `EXTRACT(${tokens[i + 2]!.value} FROM ${first})`;
  const op = tokens[i + 2]!.value;
  const spelled = op.toUpperCase() === op ? op : op.toUpperCase();
  if (comma === close) return `(${spelled} ${first})`;
  return `(${first} ${spelled} ${undoRewrites(text.slice(tokens[comma]!.end, tokens[close]!.start).trim())})`;
}

function matchClose(tokens: readonly Token[], open: number): number {
  let depth = 0;
  for (let j = open; j < tokens.length; j++) {
    if (tokens[j]!.value === '(') depth++;
    else if (tokens[j]!.value === ')' && --depth === 0) return j;
  }
  return -1;
}

function topLevelComma(tokens: readonly Token[], from: number, to: number): number {
  let depth = 0;
  for (let j = from; j < to; j++) {
    const v = tokens[j]!.value;
    if (v === '(' || v === '[') depth++;
    else if (v === ')' || v === ']') depth--;
    else if (v === ',' && depth === 0 && tokens[j]!.kind === 'punct') return j;
  }
  return to;
}

/** Parses one expression (a stored DEFAULT or CHECK text) to an AST node. */
export function parseExpression(text: string): AstNode {
  const [statement] = parseSql(`SELECT ${text}`);
  return (statement!.ast as AstNode).columns[0].expr as AstNode;
}

/** The text after the top-level AS of CREATE VIEW ... AS <query>. */
export function viewQueryText(statementText: string): string {
  const tokens = tokenize(statementText);
  let depth = 0;
  for (const t of tokens) {
    if (t.value === '(') depth++;
    else if (t.value === ')') depth--;
    else if (depth === 0 && t.kind === 'ident' && t.value === 'as') return statementText.slice(t.end).trim();
  }
  throw syntaxError(statementText, statementText.length, 'CREATE VIEW needs AS <query>');
}

/** Replaces identifier `from` by `to` in SQL text (CHECK definitions after RENAME COLUMN). */
export function renameIdentifier(text: string, from: string, to: string): string {
  const tokens = tokenize(text);
  let out = '';
  let pos = 0;
  const quoted = /^[a-z_][a-z0-9_]*$/.test(to) ? to : `"${to.replaceAll('"', '""')}"`;
  for (const t of tokens) {
    if ((t.kind === 'ident' || t.kind === 'qident') && t.value === from) {
      out += text.slice(pos, t.start) + quoted;
      pos = t.end;
    }
  }
  return out + text.slice(pos);
}

/** A VALUES statement becomes SELECT * FROM (VALUES ...) AS "values" (node-sql-parser has no VALUES statement). */
function wrapValues(tokens: readonly Token[]): Token[] {
  const at = (text: string, kind: Token['kind'], value = text.toLowerCase()): Token => ({ kind, text, value, start: -1, end: -2 });
  return [
    at('select', 'ident'),
    at('*', 'op'),
    at('from', 'ident'),
    at('(', 'punct'),
    ...tokens,
    at(')', 'punct'),
    at('as', 'ident'),
    { kind: 'qident', text: '"*VALUES*"', value: '*VALUES*', start: -1, end: -2 },
  ];
}

/**
 * node-sql-parser refuses ON CONFLICT without a column list and RETURNING after INSERT ... SELECT.
 * Parse the INSERT without its tail, and the tail on a stand-in INSERT, then join the two.
 */
function insertFallback(tokens: readonly Token[]): AstNode | null {
  if (tokens[0]?.value !== 'insert') return null;
  let depth = 0;
  let cut = -1;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.value === '(') depth++;
    else if (t.value === ')') depth--;
    else if (depth === 0 && t.kind === 'ident' && ((t.value === 'on' && tokens[i + 1]?.value === 'conflict') || t.value === 'returning')) {
      cut = i;
      break;
    }
  }
  if (cut < 0) return null;
  try {
    const head = parser.astify(rewrite(tokens.slice(0, cut)).text, PARSE_OPTIONS) as AstNode;
    const tailTokens = tokens.slice(cut).map((t) => ({ ...t, start: t.start + 1000, end: t.end + 1000 }));
    const standIn = tokenize('INSERT INTO __svc_t (__svc_c) VALUES (1)');
    const tail = parser.astify(rewrite([...standIn, ...tailTokens]).text, PARSE_OPTIONS) as AstNode;
    const one = (a: AstNode): AstNode => (Array.isArray(a) ? a[0] : a) as AstNode;
    return { ...one(head), conflict: one(tail).conflict ?? null, returning: one(tail).returning ?? null };
  } catch {
    return null;
  }
}

/** PostgreSQL's message for an INSERT whose column list and VALUES row differ in length. */
function insertCountMessage(tokens: readonly Token[]): string {
  const listLength = (open: number): number => {
    let depth = 0;
    let n = 1;
    for (let i = open; i < tokens.length; i++) {
      const v = tokens[i]!.value;
      if (v === '(') depth++;
      else if (v === ')' && --depth === 0) return n;
      else if (v === ',' && depth === 1) n++;
    }
    return n;
  };
  const cols = tokens.findIndex((t, i) => (t.value === '(' && tokens[i - 1]?.kind !== 'ident' ? false : t.value === '('));
  const values = tokens.findIndex((t) => t.kind === 'ident' && t.value === 'values');
  const columnCount = cols >= 0 && cols < values ? listLength(cols) : 0;
  const valueCount = values >= 0 ? listLength(values + 1) : 0;
  return valueCount > columnCount ? 'INSERT has more expressions than target columns' : 'INSERT has more target columns than expressions';
}

const BULK_ROWS_MIN = 50;
const SAFE_INTEGER = /^[0-9]{1,15}$/;

/**
 * INSERT ... VALUES with many rows of plain literals: node-sql-parser parses the statement with its
 * first row only and the other rows are built here (a PEG parse of a 10,000-row VALUES list takes
 * seconds). null when the statement does not have that shape.
 */
function bulkInsert(tokens: readonly Token[]): { head: Token[]; rows: AstNode[] } | null {
  if (tokens[0]?.value !== 'insert' || tokens.length < BULK_ROWS_MIN * 3) return null;
  let depth = 0;
  let v = -1;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.value === '(') depth++;
    else if (t.value === ')') depth--;
    else if (depth === 0 && t.kind === 'ident' && t.value === 'values') {
      v = i;
      break;
    }
    if (depth === 0 && t.kind === 'ident' && t.value === 'select') return null;
  }
  if (v < 0) return null;
  const rows: AstNode[] = [];
  let i = v + 1;
  let firstEnd = -1;
  for (;;) {
    if (tokens[i]?.value !== '(') return null;
    const items: AstNode[] = [];
    i++;
    for (;;) {
      const item = literalAt(tokens, i);
      if (!item) return null;
      items.push(item.node);
      i = item.next;
      if (tokens[i]?.value === ',') i++;
      else if (tokens[i]?.value === ')') break;
      else return null;
    }
    if (firstEnd < 0) firstEnd = i;
    else rows.push({ type: 'expr_list', value: items });
    i++;
    if (tokens[i]?.value === ',' && tokens[i]?.kind === 'punct') i++;
    else break;
  }
  if (rows.length + 1 < BULK_ROWS_MIN) return null;
  return { head: [...tokens.slice(0, firstEnd + 1), ...tokens.slice(i)], rows };
}

function literalAt(tokens: readonly Token[], i: number): { node: AstNode; next: number } | null {
  const t = tokens[i];
  if (!t) return null;
  const negative = t.kind === 'op' && t.value === '-' && tokens[i + 1]?.kind === 'number';
  const n = negative ? tokens[i + 1]! : t;
  if (n.kind === 'number') {
    const node: AstNode = SAFE_INTEGER.test(n.text)
      ? { type: 'number', value: negative ? -Number(n.text) : Number(n.text) }
      : {
          type: 'function',
          name: { name: [{ type: 'default', value: NUM_FN }] },
          args: { type: 'expr_list', value: [{ type: 'single_quote_string', value: n.text }] },
        };
    const signed: AstNode = negative && node.type !== 'number' ? { type: 'unary_expr', operator: '-', expr: node } : node;
    return { node: signed, next: i + (negative ? 2 : 1) };
  }
  if (t.kind === 'string') {
    const raw = t.value.includes('\\') ? `${STR_PREFIX}${Buffer.from(t.value, 'utf8').toString('hex')}` : t.value.replaceAll("'", "''");
    return { node: { type: 'single_quote_string', value: raw }, next: i + 1 };
  }
  if (t.kind === 'param') return { node: { type: 'var', name: Number(t.value), members: [], prefix: '$' }, next: i + 1 };
  if (t.kind !== 'ident') return null;
  if (t.value === 'null') return { node: { type: 'null', value: null }, next: i + 1 };
  if (t.value === 'true' || t.value === 'false') return { node: { type: 'bool', value: t.value === 'true' }, next: i + 1 };
  if (t.value === 'default') return { node: { type: 'column_ref', table: null, column: { expr: { type: 'default', value: 'default' } } }, next: i + 1 };
  return null;
}
