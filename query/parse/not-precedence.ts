import { matchForward, type Tok } from './operands.js';

/**
 * `NOT (x) >= y` is `NOT ((x) >= y)` in PostgreSQL (NOT binds looser than comparison, tighter than
 * AND), but node-sql-parser applies NOT to the parenthesized operand alone. When a parenthesized
 * NOT operand is followed by an operator or a predicate keyword, the rest of the operand is put
 * inside explicit parentheses so both read it the same way.
 */
const PREDICATE_WORDS = new Set(['is', 'between', 'in', 'like', 'ilike', 'similar']);
/** Tokens that end a NOT operand at nesting depth 0. */
const END_WORDS = new Set([
  'and',
  'or',
  'then',
  'when',
  'else',
  'end',
  'from',
  'where',
  'group',
  'order',
  'limit',
  'offset',
  'having',
  'union',
  'intersect',
  'except',
  'as',
  'asc',
  'desc',
  'returning',
  'on',
  'using',
  'window',
  'fetch',
  'into',
  'nulls',
]);

export function rewriteNotPrecedence(toks: Tok[]): Tok[] {
  const out = [...toks];
  for (let i = 0; i < out.length; i++) {
    const t = out[i]!;
    if (t.kind !== 'ident' || t.value !== 'not' || out[i + 1]?.value !== '(' || out[i - 1]?.value === 'is') continue;
    const close = matchForward(out, i + 1);
    if (close < 0 || !continuesOperand(out, close + 1)) continue;
    const end = operandEnd(out, close + 1);
    out.splice(end, 0, { ...t, kind: 'punct', text: ')', value: ')', glued: false });
    out.splice(i + 1, 0, { ...t, kind: 'punct', text: '(', value: '(', glued: false });
  }
  return out;
}

function continuesOperand(toks: readonly Tok[], at: number): boolean {
  const next = toks[at];
  if (next === undefined) return false;
  if (next.kind === 'op') return next.value !== '::';
  if (next.kind !== 'ident') return false;
  if (next.value === 'not') return PREDICATE_WORDS.has(toks[at + 1]?.value ?? '');
  return PREDICATE_WORDS.has(next.value);
}

/** Index of the first token after the operand that starts at `from` (depth 0 end word, `)`, `,`, `;`). */
function operandEnd(toks: readonly Tok[], from: number): number {
  let depth = 0;
  let betweenPending = 0;
  for (let j = from; j < toks.length; j++) {
    const t = toks[j]!;
    if (t.kind === 'punct' && t.value === '(') depth++;
    else if (t.kind === 'punct' && t.value === ')') {
      if (depth === 0) return j;
      depth--;
    } else if (depth === 0 && t.kind === 'punct' && (t.value === ',' || t.value === ';')) return j;
    else if (depth === 0 && t.kind === 'ident') {
      if (t.value === 'between') betweenPending++;
      else if (t.value === 'and' && betweenPending > 0) betweenPending--;
      else if (END_WORDS.has(t.value)) return j;
    }
  }
  return toks.length;
}
