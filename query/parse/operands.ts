/**
 * Operand extents over a token list, for rewriting binary constructs node-sql-parser cannot parse
 * (`a <-> b`, `a ^ b`, `a IS [NOT] DISTINCT FROM b`) into a function call `__svc_op('op', a, b)`.
 * Precedence follows PostgreSQL's table (higher binds tighter).
 */
export interface Tok {
  kind: 'ident' | 'qident' | 'string' | 'number' | 'param' | 'op' | 'punct';
  text: string;
  value: string;
  /** Offset in the original statement text (for error positions). */
  orig: number;
  /** Written right after the previous token, without whitespace. */
  glued: boolean;
}

export const PREC = { is: 1, compare: 2, keywordOp: 3, other: 4, add: 5, mul: 6, pow: 7 } as const;

/** Words that never start or continue an operand. */
const RESERVED = new Set([
  'all',
  'and',
  'any',
  'as',
  'asc',
  'between',
  'by',
  'case',
  'cross',
  'desc',
  'distinct',
  'else',
  'end',
  'except',
  'fetch',
  'first',
  'for',
  'from',
  'full',
  'group',
  'having',
  'ilike',
  'in',
  'inner',
  'intersect',
  'into',
  'is',
  'join',
  'last',
  'left',
  'like',
  'limit',
  'not',
  'nulls',
  'offset',
  'on',
  'or',
  'order',
  'outer',
  'over',
  'returning',
  'right',
  'select',
  'set',
  'similar',
  'some',
  'then',
  'union',
  'using',
  'values',
  'when',
  'where',
  'window',
  'with',
  'filter',
  'exists',
  'array',
]);
const TYPED_LITERAL = new Set(['date', 'time', 'timestamp', 'timestamptz', 'interval', 'json', 'jsonb', 'uuid', 'numeric', 'text', 'bool', 'boolean']);
const COMPARE = new Set(['<', '>', '=', '<=', '>=', '<>', '!=']);

export function binaryPrecedence(tok: Tok | undefined): number {
  if (!tok) return -1;
  if (tok.kind === 'op') {
    if (tok.value === '^') return PREC.pow;
    if (tok.value === '*' || tok.value === '/' || tok.value === '%') return PREC.mul;
    if (tok.value === '+' || tok.value === '-') return PREC.add;
    if (COMPARE.has(tok.value)) return PREC.compare;
    return PREC.other;
  }
  return -1;
}

const isWord = (t: Tok | undefined, word: string): boolean => t !== undefined && t.kind === 'ident' && t.value === word;
const isPunct = (t: Tok | undefined, p: string): boolean => t !== undefined && t.kind === 'punct' && t.value === p;
const isAtom = (t: Tok | undefined): boolean =>
  t !== undefined &&
  (t.kind === 'qident' || t.kind === 'string' || t.kind === 'number' || t.kind === 'param' || (t.kind === 'ident' && !RESERVED.has(t.value)));

export function matchForward(toks: readonly Tok[], i: number): number {
  const open = toks[i]!.value;
  const close = open === '(' ? ')' : ']';
  let depth = 0;
  for (let j = i; j < toks.length; j++) {
    const t = toks[j]!;
    if (t.kind !== 'punct') continue;
    if (t.value === open) depth++;
    else if (t.value === close && --depth === 0) return j;
  }
  return -1;
}

function matchBackward(toks: readonly Tok[], i: number): number {
  const close = toks[i]!.value;
  const open = close === ')' ? '(' : '[';
  let depth = 0;
  for (let j = i; j >= 0; j--) {
    const t = toks[j]!;
    if (t.kind !== 'punct') continue;
    if (t.value === close) depth++;
    else if (t.value === open && --depth === 0) return j;
  }
  return -1;
}

function caseBackward(toks: readonly Tok[], i: number): number {
  let depth = 0;
  for (let j = i; j >= 0; j--) {
    if (isWord(toks[j], 'end')) depth++;
    else if (isWord(toks[j], 'case') && --depth === 0) return j;
  }
  return -1;
}

function caseForward(toks: readonly Tok[], i: number): number {
  let depth = 0;
  for (let j = i; j < toks.length; j++) {
    if (isWord(toks[j], 'case')) depth++;
    else if (isWord(toks[j], 'end') && --depth === 0) return j;
  }
  return -1;
}

/** Start index of the operand unit ending at j (a primary with its postfixes), or -1. */
function unitBackward(toks: readonly Tok[], j: number): number {
  const t = toks[j];
  if (!t) return -1;
  let start: number;
  if (isPunct(t, ')')) {
    start = matchBackward(toks, j);
    if (start < 0) return -1;
    const before = toks[start - 1];
    if (isWord(before, 'over') || isWord(before, 'filter')) return unitBackward(toks, start - 2);
    if (before && (before.kind === 'qident' || (before.kind === 'ident' && (!RESERVED.has(before.value) || before.value === 'exists')))) start -= 1;
  } else if (isPunct(t, ']')) {
    start = matchBackward(toks, j);
    if (start < 0) return -1;
    if (isWord(toks[start - 1], 'array')) return start - 1;
    return unitBackward(toks, start - 1) >= 0 ? unitBackward(toks, start - 1) : -1;
  } else if (isWord(t, 'end')) {
    start = caseBackward(toks, j);
  } else if (isAtom(t)) {
    start = j;
    if (t.kind === 'string' && toks[j - 1]?.kind === 'ident' && TYPED_LITERAL.has(toks[j - 1]!.value)) start = j - 1;
  } else return -1;
  if (start < 0) return -1;
  // a.b, x::type
  const prev = toks[start - 1];
  if (isPunct(prev, '.') || isPunct(prev, '::')) {
    const left = unitBackward(toks, start - 2);
    return left < 0 ? -1 : left;
  }
  return start;
}

/** End index (inclusive) of the operand unit starting at j, or -1. */
function unitForward(toks: readonly Tok[], j: number): number {
  const t = toks[j];
  if (!t) return -1;
  let end: number;
  if ((t.value === '-' || t.value === '+') && t.kind === 'op') {
    return unitForward(toks, j + 1);
  } else if (isPunct(t, '(')) {
    end = matchForward(toks, j);
  } else if (isWord(t, 'case')) {
    end = caseForward(toks, j);
  } else if ((isWord(t, 'array') && isPunct(toks[j + 1], '[')) || (isWord(t, 'exists') && isPunct(toks[j + 1], '('))) {
    end = matchForward(toks, j + 1);
  } else if (isAtom(t)) {
    end = j;
    if (t.kind === 'ident' && TYPED_LITERAL.has(t.value) && toks[j + 1]?.kind === 'string') end = j + 1;
    else if ((t.kind === 'ident' || t.kind === 'qident') && isPunct(toks[j + 1], '(')) {
      end = matchForward(toks, j + 1);
      if (end >= 0 && isWord(toks[end + 1], 'filter') && isPunct(toks[end + 2], '(')) end = matchForward(toks, end + 2);
      if (end >= 0 && isWord(toks[end + 1], 'over')) end = isPunct(toks[end + 2], '(') ? matchForward(toks, end + 2) : end + 2;
    }
  } else return -1;
  if (end < 0) return -1;
  return postfixForward(toks, end);
}

function postfixForward(toks: readonly Tok[], end: number): number {
  for (;;) {
    const next = toks[end + 1];
    if (isPunct(next, '.') || isPunct(next, '::')) {
      const after = unitForward(toks, end + 2);
      if (after < 0) return -1;
      end = after;
    } else if (isPunct(next, '[')) {
      end = matchForward(toks, end + 1);
      if (end < 0) return -1;
    } else return end;
  }
}

/** First token index of the left operand of the binary operator at k with precedence prec, or -1. */
export function leftOperand(toks: readonly Tok[], k: number, prec: number): number {
  let j = k - 1;
  let start = -1;
  for (;;) {
    const unit = unitBackward(toks, j);
    if (unit < 0) return start;
    start = unit;
    j = unit - 1;
    const t = toks[j];
    if (t && t.kind === 'op' && (t.value === '-' || t.value === '+') && isPrefixPosition(toks, j)) {
      start = j;
      j -= 1;
    }
    const p = binaryPrecedence(toks[j]);
    if (p < prec) return start;
    j -= 1;
  }
}

function isPrefixPosition(toks: readonly Tok[], j: number): boolean {
  const before = toks[j - 1];
  if (!before) return true;
  if (before.kind === 'op') return true;
  if (before.kind === 'punct') return before.value === '(' || before.value === ',';
  return before.kind === 'ident' && RESERVED.has(before.value);
}

/** Last token index of the right operand of the binary operator at k with precedence prec, or -1. */
export function rightOperand(toks: readonly Tok[], k: number, prec: number): number {
  let j = k + 1;
  for (;;) {
    const end = unitForward(toks, j);
    if (end < 0) return -1;
    const p = binaryPrecedence(toks[end + 1]);
    if (p <= prec) return end;
    j = end + 2;
  }
}
