import { SvcError } from '../../core/errors.js';

/**
 * A PostgreSQL-dialect tokenizer for svcdb's own statements (CDC), statement splitting when a request
 * holds them, identifier renames in stored CHECK texts, and positions. Comments become whitespace.
 */
export type TokenKind = 'ident' | 'qident' | 'string' | 'number' | 'param' | 'op' | 'punct';

export interface Token {
  readonly kind: TokenKind;
  /** Source text of the token (for 'ident' as written, not folded). */
  readonly text: string;
  readonly start: number;
  readonly end: number;
  /** ident: lower-cased; qident: the unquoted name; string: the decoded value. */
  readonly value: string;
}

const OP_CHARS = new Set('+-*/<>=~!@#%^&|`?'.split(''));
const PUNCT = new Set('(),;[].:'.split(''));

export function isIdentStart(c: string): boolean {
  return /[A-Za-z_\u0080-\uffff]/.test(c);
}

function isIdentPart(c: string): boolean {
  return /[A-Za-z0-9_$\u0080-\uffff]/.test(c);
}

/** Line and column (1-based) of an offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text[i] === '\n') {
      line += 1;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

export function syntaxError(text: string, offset: number, message: string): SvcError {
  const { line, column } = lineColumn(text, offset);
  return new SvcError('INVALID_QUERY', `syntax error at line ${line}, column ${column}: ${message}`, {
    position: offset + 1,
    line,
    column,
  });
}

export function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f') {
      i++;
    } else if (c === '-' && text[i + 1] === '-') {
      while (i < n && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      i = skipBlockComment(text, i);
    } else if (c === "'") {
      const { end, value } = readQuoted(text, i, false);
      out.push({ kind: 'string', text: text.slice(i, end), start: i, end, value });
      i = end;
    } else if ((c === 'E' || c === 'e') && text[i + 1] === "'") {
      const { end, value } = readQuoted(text, i + 1, true);
      out.push({ kind: 'string', text: text.slice(i, end), start: i, end, value });
      i = end;
    } else if (c === '"') {
      const end = readQuotedIdent(text, i);
      out.push({ kind: 'qident', text: text.slice(i, end), start: i, end, value: text.slice(i + 1, end - 1).replaceAll('""', '"') });
      i = end;
    } else if (c === '$' && /[0-9]/.test(text[i + 1] ?? '')) {
      let j = i + 1;
      while (j < n && /[0-9]/.test(text[j]!)) j++;
      out.push({ kind: 'param', text: text.slice(i, j), start: i, end: j, value: text.slice(i + 1, j) });
      i = j;
    } else if (c === '$' && /[A-Za-z_$]/.test(text[i + 1] ?? '')) {
      const dollar = readDollarQuoted(text, i);
      out.push({ kind: 'string', text: text.slice(i, dollar.end), start: i, end: dollar.end, value: dollar.value });
      i = dollar.end;
    } else if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(text[i + 1] ?? ''))) {
      const end = readNumber(text, i);
      out.push({ kind: 'number', text: text.slice(i, end), start: i, end, value: text.slice(i, end) });
      i = end;
    } else if (isIdentStart(c)) {
      let j = i + 1;
      while (j < n && isIdentPart(text[j]!)) j++;
      const word = text.slice(i, j);
      out.push({ kind: 'ident', text: word, start: i, end: j, value: word.toLowerCase() });
      i = j;
    } else if (c === ':' && text[i + 1] === ':') {
      out.push({ kind: 'punct', text: '::', start: i, end: i + 2, value: '::' });
      i += 2;
    } else if (PUNCT.has(c)) {
      out.push({ kind: 'punct', text: c, start: i, end: i + 1, value: c });
      i++;
    } else if (OP_CHARS.has(c)) {
      const end = readOperator(text, i);
      out.push({ kind: 'op', text: text.slice(i, end), start: i, end, value: text.slice(i, end) });
      i = end;
    } else {
      throw syntaxError(text, i, `unexpected character "${c}"`);
    }
  }
  return out;
}

function skipBlockComment(text: string, start: number): number {
  let depth = 0;
  let i = start;
  while (i < text.length) {
    if (text[i] === '/' && text[i + 1] === '*') {
      depth++;
      i += 2;
    } else if (text[i] === '*' && text[i + 1] === '/') {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else i++;
  }
  throw syntaxError(text, start, 'unterminated /* comment');
}

function readQuoted(text: string, start: number, escapes: boolean): { end: number; value: string } {
  let i = start + 1;
  let value = '';
  while (i < text.length) {
    const c = text[i]!;
    if (c === "'") {
      if (text[i + 1] === "'") {
        value += "'";
        i += 2;
        continue;
      }
      return { end: i + 1, value };
    }
    if (escapes && c === '\\' && i + 1 < text.length) {
      const { char, length } = decodeEscape(text, i + 1);
      value += char;
      i += 1 + length;
      continue;
    }
    value += c;
    i++;
  }
  throw syntaxError(text, start, 'unterminated quoted string');
}

function decodeEscape(text: string, at: number): { char: string; length: number } {
  const c = text[at]!;
  const simple: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
  if (simple[c] !== undefined) return { char: simple[c]!, length: 1 };
  if (/[0-7]/.test(c)) {
    const m = /^[0-7]{1,3}/.exec(text.slice(at))![0];
    return { char: String.fromCodePoint(parseInt(m, 8)), length: m.length };
  }
  if (c === 'x') {
    const m = /^[0-9A-Fa-f]{1,2}/.exec(text.slice(at + 1))?.[0];
    if (m) return { char: String.fromCodePoint(parseInt(m, 16)), length: 1 + m.length };
  }
  if (c === 'u' || c === 'U') {
    const digits = c === 'u' ? 4 : 8;
    const m = new RegExp(`^[0-9A-Fa-f]{${digits}}`).exec(text.slice(at + 1))?.[0];
    if (m) return { char: String.fromCodePoint(parseInt(m, 16)), length: 1 + digits };
  }
  return { char: c, length: 1 };
}

function readQuotedIdent(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length) {
    if (text[i] === '"') {
      if (text[i + 1] === '"') {
        i += 2;
        continue;
      }
      return i + 1;
    }
    i++;
  }
  throw syntaxError(text, start, 'unterminated quoted identifier');
}

function readDollarQuoted(text: string, start: number): { end: number; value: string } {
  const m = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(text.slice(start));
  if (!m) throw syntaxError(text, start, 'unexpected "$"');
  const tag = m[0];
  const close = text.indexOf(tag, start + tag.length);
  if (close < 0) throw syntaxError(text, start, 'unterminated dollar-quoted string');
  return { end: close + tag.length, value: text.slice(start + tag.length, close) };
}

function readNumber(text: string, start: number): number {
  const m = /^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?/.exec(text.slice(start));
  return start + m![0].length;
}

/** PostgreSQL's rule: a multi-char operator cannot end in + or - unless it contains ~ ! @ # % ^ & | ` ?. */
function readOperator(text: string, start: number): number {
  let j = start;
  while (j < text.length && OP_CHARS.has(text[j]!)) {
    if ((text[j] === '-' && text[j + 1] === '-') || (text[j] === '/' && text[j + 1] === '*')) break;
    j++;
  }
  let op = text.slice(start, j);
  if (op.length > 1 && /[+-]$/.test(op) && !/[~!@#%^&|`?]/.test(op)) {
    while (op.length > 1 && /[+-]$/.test(op)) op = op.slice(0, -1);
  }
  return start + op.length;
}

/** Splits a request into statements at top-level semicolons; empty statements are dropped. */
export function splitStatements(sql: string): { text: string; offset: number; tokens: Token[] }[] {
  const tokens = tokenize(sql);
  const out: { text: string; offset: number; tokens: Token[] }[] = [];
  let current: Token[] = [];
  let depth = 0;
  const flush = (): void => {
    if (current.length === 0) return;
    const start = current[0]!.start;
    const end = current[current.length - 1]!.end;
    out.push({ text: sql.slice(start, end), offset: start, tokens: current.map((t) => ({ ...t, start: t.start - start, end: t.end - start })) });
    current = [];
  };
  for (const t of tokens) {
    if (t.kind === 'punct' && t.value === '(') depth++;
    if (t.kind === 'punct' && t.value === ')') depth = Math.max(0, depth - 1);
    if (t.kind === 'punct' && t.value === ';' && depth === 0) {
      flush();
      continue;
    }
    current.push(t);
  }
  flush();
  return out;
}
