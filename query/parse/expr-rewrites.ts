/**
 * Expression forms of PostgreSQL's grammar node-sql-parser lacks, rewritten to forms it parses:
 * prefix operators (`@ x` is abs, `|/ x`, `||/ x`, `~ x`), `EXTRACT(field FROM x)` for any field
 * (the parser knows a fixed list, without `julian`, and no quoted field), and a negative NUMERIC
 * scale (`numeric(2,-2)`; the parser takes only unsigned modifiers).
 */
import { PREC, rightOperand, type Tok } from './operands.js';
import { quote, synth } from './query-rewrites.js';

export const OP_FN = '__svc_op';
export const EXTRACT_FN = '__svc_extract';
/** numeric(p, -s) travels as numeric(p, NEGATIVE_SCALE_BASE + s); bind/type-names.ts decodes it. */
export const NEGATIVE_SCALE_BASE = 1_000_000;

const PREFIX_OPERATORS = new Set(['~', '@', '|/', '||/']);
const PREFIX_AFTER = new Set(['select', 'where', 'and', 'or', 'not', 'when', 'then', 'else', 'by', 'on', 'having', 'return', 'values']);

/** True when the operator at k is in prefix position (nothing that ends an operand before it). */
export function isPrefix(toks: readonly Tok[], k: number): boolean {
  const before = toks[k - 1];
  if (!before) return true;
  if (before.kind === 'op') return true;
  if (before.kind === 'punct') return before.value === '(' || before.value === ',';
  return before.kind === 'ident' && PREFIX_AFTER.has(before.value);
}

/**
 * Prefix `op x` -> __svc_op('op', x), rightmost first (so `@ @ x` and `- @ x` work). PostgreSQL
 * gives prefix operators the precedence of "other" operators: `@ -5 + 1` is @(-4), `~ 5 ^ 2` is ~(25.0).
 */
export function rewritePrefixOperators(input: Tok[]): Tok[] {
  let toks = input;
  for (let k = toks.length - 1; k >= 0; k--) {
    const at = toks[k]!;
    if (at.kind !== 'op' || !PREFIX_OPERATORS.has(at.value) || !isPrefix(toks, k)) continue;
    const end = rightOperand(toks, k, PREC.other);
    if (end < 0) continue; // the parser reports the error
    const call: Tok[] = [
      synth('ident', OP_FN, at.orig, at.glued),
      synth('punct', '(', at.orig, true),
      synth('string', quote(at.value), at.orig),
      synth('punct', ',', at.orig),
      ...toks.slice(k + 1, end + 1),
      synth('punct', ')', toks[end]!.orig),
    ];
    toks = [...toks.slice(0, k), ...call, ...toks.slice(end + 1)];
  }
  return toks;
}

/** EXTRACT(field FROM x) / EXTRACT('field' FROM x) -> __svc_extract('field', x). */
export function rewriteExtract(toks: Tok[]): void {
  for (let i = 0; i + 3 < toks.length; i++) {
    const t = toks[i]!;
    if (t.kind !== 'ident' || t.value !== 'extract' || toks[i + 1]?.value !== '(') continue;
    const field = toks[i + 2]!;
    const from = toks[i + 3]!;
    if ((field.kind !== 'ident' && field.kind !== 'string') || from.kind !== 'ident' || from.value !== 'from') continue;
    const fieldString = field.kind === 'string' ? field : synth('string', quote(field.value), field.orig);
    toks.splice(i, 4, synth('ident', EXTRACT_FN, t.orig, t.glued), synth('punct', '(', t.orig, true), fieldString, synth('punct', ',', from.orig, true));
  }
}

/** numeric(p, -s) / decimal(p, -s) -> numeric(p, NEGATIVE_SCALE_BASE + s). */
export function rewriteNegativeScales(toks: Tok[]): void {
  for (let i = 0; i + 6 < toks.length; i++) {
    const t = toks[i]!;
    if (t.kind !== 'ident' || (t.value !== 'numeric' && t.value !== 'decimal')) continue;
    const minus = toks[i + 4]!;
    const scale = toks[i + 5]!;
    const shape =
      toks[i + 1]!.value === '(' &&
      toks[i + 2]!.kind === 'number' &&
      toks[i + 3]!.value === ',' &&
      minus.kind === 'op' &&
      minus.value === '-' &&
      scale.kind === 'number' &&
      /^[0-9]{1,6}$/.test(scale.text) &&
      toks[i + 6]!.value === ')';
    if (!shape) continue;
    toks.splice(i + 4, 2, synth('number', String(NEGATIVE_SCALE_BASE + Number(scale.text)), minus.orig, minus.glued));
  }
}

/** The scale a parsed NUMERIC type modifier stands for (undoing rewriteNegativeScales). */
export function decodedScale(scale: number): number {
  return scale >= NEGATIVE_SCALE_BASE ? -(scale - NEGATIVE_SCALE_BASE) : scale;
}
