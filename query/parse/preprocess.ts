import { isPrefix, OP_FN, rewriteExtract, rewriteNegativeScales, rewritePrefixOperators } from './expr-rewrites.js';
import { LIMITS } from '../limits.js';
import { rewriteNotPrecedence } from './not-precedence.js';
import { leftOperand, matchForward, PREC, rightOperand, type Tok } from './operands.js';
import {
  LIMIT_PARAM_BASE,
  NATURAL_MARKER,
  FRAME_CODE_BASE,
  FRAME_CODES,
  limitBeforeOffset,
  rewriteRangeFrames,
  parenthesizeJoinConditions,
  quote,
  rewriteCrossJoins,
  rewriteLimitExpressions,
  rewriteNaturalJoins,
  synth,
  WINDOW_FN,
  wrapParenthesizedSetOps,
  wrapWindowCalls,
} from './query-rewrites.js';
import { tokenize, type Token } from './tokens.js';

export { LIMIT_PARAM_BASE, NATURAL_MARKER, FRAME_CODE_BASE, FRAME_CODES, OP_FN, WINDOW_FN };

/**
 * Rewrites one statement's tokens into text node-sql-parser (PostgreSQL dialect) can parse:
 * unquoted identifiers folded to lower case (PostgreSQL's rule; the parser keeps case), E'' and
 * $$ strings as plain literals, exact numeric literals as __svc_num('text'), VECTOR(n) as a
 * marker type, pgvector operators, ^ and IS [NOT] DISTINCT FROM as __svc_op('op', a, b), prefix
 * operators, EXTRACT and negative NUMERIC scales (expr-rewrites.ts), and a few clauses the parser
 * lacks (substring FROM/FOR, DELETE ... USING, DEFAULT VALUES, USING hnsw).
 */
export interface Rewritten {
  /** Text for node-sql-parser. */
  readonly text: string;
  /** Offset in `text` -> offset in the original statement. */
  origOffset(offset: number): number;
  /** CREATE INDEX ... USING hnsw was rewritten to a method the parser knows. */
  readonly hnsw: boolean;
  /** Dimensions of VECTOR(n) types in order of appearance (VECTOR without n: null). */
  readonly vectorDims: readonly (number | null)[];
  /** LIMIT/OFFSET expressions replaced by $LIMIT_PARAM_BASE+i (the parser takes only a number or $n there). */
  readonly limitExprs?: readonly string[];
}

export const NUM_FN = '__svc_num';
export const STR_PREFIX = '__svc_str_';

/** The value of a string literal as node-sql-parser returns it (undoing '' and the hex form above). */
export function literalValue(raw: string): string {
  if (raw.startsWith(STR_PREFIX)) return Buffer.from(raw.slice(STR_PREFIX.length), 'hex').toString('utf8');
  return raw.replaceAll("''", "'");
}
export const VECTOR_MARKER = 'tsvector';
export const PK_MARKER = '__svc_pk';

const SAFE_INTEGER = /^[0-9]{1,15}$/;
const BINARY_REWRITES: ReadonlyMap<string, number> = new Map([
  ['<->', PREC.other],
  ['<=>', PREC.other],
  ['<#>', PREC.other],
  ['^', PREC.pow],
  ['&', PREC.other],
  ['|', PREC.other],
  ['#', PREC.other],
  ['<<', PREC.other],
  ['>>', PREC.other],
]);

export function toToks(tokens: readonly Token[]): Tok[] {
  return tokens.map((t, i) => ({ kind: t.kind, text: t.text, value: t.value, orig: t.start, glued: i > 0 && tokens[i - 1]!.end === t.start }));
}

export function rewrite(tokens: readonly Token[]): Rewritten {
  let toks = toToks(tokens);
  const vectorDims: (number | null)[] = [];
  let hnsw = false;
  toks = toks.flatMap((t, i, all): Tok[] => {
    if (t.kind === 'ident') return [{ ...t, text: needsQuotes(all, i) ? `"${t.value}"` : t.value }];
    // node-sql-parser reads backslash escapes in standard strings: such literals travel hex-encoded.
    if (t.kind === 'string' && t.value.includes('\\')) return [{ ...t, text: `'${STR_PREFIX}${Buffer.from(t.value, 'utf8').toString('hex')}'` }];
    if (t.kind === 'string' && !t.text.startsWith("'")) return [{ ...t, text: quote(t.value) }];
    if (t.kind === 'number' && !SAFE_INTEGER.test(t.text)) {
      return [
        synth('ident', NUM_FN, t.orig, t.glued),
        synth('punct', '(', t.orig, true),
        synth('string', quote(t.text), t.orig, true),
        synth('punct', ')', t.orig, true),
      ];
    }
    return [t];
  });
  rewriteNegativeScales(toks);
  rewriteExtract(toks);
  for (let i = 1; i < toks.length; i++) {
    // -32768::smallint is -(32768::smallint) in PostgreSQL; the parser would fold the sign first.
    const t = toks[i]!;
    if (t.kind === 'number' && toks[i - 1]!.value === '-' && toks[i + 1]?.value === '::' && isPrefix(toks, i - 1)) {
      toks.splice(i, 1, synth('punct', '(', t.orig), { ...t, glued: true }, synth('punct', ')', t.orig, true));
      i += 2;
    }
  }
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    if (t.kind === 'ident' && t.value === 'vector' && isTypePosition(toks, i)) {
      if (toks[i + 1]?.value === '(' && toks[i + 2]?.kind === 'number' && toks[i + 3]?.value === ')') {
        vectorDims.push(Number(toks[i + 2]!.value));
        toks.splice(i, 4, synth('ident', VECTOR_MARKER, t.orig, t.glued));
      } else {
        vectorDims.push(null);
        toks[i] = synth('ident', VECTOR_MARKER, t.orig, t.glued);
      }
    } else if (t.kind === 'ident' && t.value === 'using' && toks[i + 1]?.value === 'hnsw' && toks[i - 1] !== undefined) {
      hnsw = true;
      toks[i + 1] = synth('ident', 'gist', toks[i + 1]!.orig);
    }
  }
  toks = rewriteClauses(toks);
  toks = parenthesizeJoinConditions(rewriteCrossJoins(rewriteNaturalJoins(toks)));
  toks = rewriteNotPrecedence(toks);
  toks = wrapWindowCalls(rewriteRangeFrames(toks));
  toks = wrapParenthesizedSetOps(toks);
  const limitExprs: string[] = [];
  toks = rewriteLimitExpressions(limitBeforeOffset(toks), limitExprs);
  toks = rewriteSymmetric(toks);
  toks = rewriteBinaryOperators(rewritePrefixOperators(toks));
  return { ...render(toks, vectorDims, hnsw), limitExprs };
}

/**
 * Words node-sql-parser reserves but PostgreSQL lets users name columns and tables with, and
 * where each is the keyword: anywhere else it is a name (`at TIMESTAMPTZ`, `SELECT partition`).
 */
const PARSER_ONLY_KEYWORDS: ReadonlyMap<string, (toks: readonly Tok[], i: number) => boolean> = new Map([
  ['at', (toks, i) => toks[i + 1]?.value === 'time' && toks[i + 2]?.value === 'zone'],
  ['partition', (toks, i) => toks[i + 1]?.value === 'by'],
  ['recursive', (toks, i) => toks[i - 1]?.value === 'with'],
]);

/**
 * An unquoted name the parser needs quoted: one containing $ (`SELECT $$a$$lo$$` is 'a' AS lo$$),
 * or a parser-only keyword used as a name.
 */
function needsQuotes(toks: readonly Tok[], i: number): boolean {
  const t = toks[i]!;
  if (t.value.includes('$')) return true;
  const isKeywordHere = PARSER_ONLY_KEYWORDS.get(t.value);
  return isKeywordHere !== undefined && !isKeywordHere(toks, i);
}

/** `vector` is a type name after ::, in a column definition, or in CAST(... AS vector). */
function isTypePosition(toks: readonly Tok[], i: number): boolean {
  const prev = toks[i - 1];
  if (!prev) return false;
  if (prev.value === '::' || prev.value === 'as' || prev.value === 'type') return true;
  return (
    (prev.kind === 'ident' || prev.kind === 'qident') &&
    (toks[i - 2]?.value === '(' || toks[i - 2]?.value === ',' || toks[i - 2]?.value === 'column' || toks[i - 2]?.value === 'add')
  );
}

export const ROWSET_FN = '__svc_rowset';

/**
 * UPDATE ... SET (a, b) = (x, y) -> SET a = x, b = y; SET (a, b) = (SELECT ...) ->
 * SET a = __svc_rowset(0, 2, (SELECT ...)), b = __svc_rowset(1, 2, (SELECT ...)) (see dml/update-delete.ts).
 */
function rewriteRowSet(out: Tok[]): void {
  for (let i = 1; i < out.length; i++) {
    const isSetList = (out[i - 1]!.value === 'set' || out[i - 1]!.value === ',') && out[i]!.value === '(';
    if (!isSetList) continue;
    const close = matchForward(out, i);
    if (close < 0 || out[close + 1]?.value !== '=' || out[close + 2]?.value !== '(') continue;
    const valuesClose = matchForward(out, close + 2);
    if (valuesClose < 0) continue;
    if (out[close + 3]?.value === 'select' || out[close + 3]?.value === 'with') {
      rowSubquerySet(out, i, close, valuesClose);
      continue;
    }
    const split = (from: number, to: number): Tok[][] => {
      const parts: Tok[][] = [[]];
      let depth = 0;
      for (let j = from; j < to; j++) {
        const v = out[j]!.value;
        if (v === '(' || v === '[') depth++;
        else if (v === ')' || v === ']') depth--;
        if (depth === 0 && v === ',' && out[j]!.kind === 'punct') parts.push([]);
        else parts[parts.length - 1]!.push(out[j]!);
      }
      return parts;
    };
    const columns = split(i + 1, close);
    const values = split(close + 3, valuesClose);
    if (columns.length !== values.length) continue;
    const o = out[i]!.orig;
    const unglue = (ts: Tok[]): Tok[] => ts.map((t, n) => (n === 0 ? { ...t, glued: false } : t));
    const assignments = columns.flatMap((c, k) => [...(k > 0 ? [synth('punct', ',', o)] : []), ...unglue(c), synth('op', '=', o), ...unglue(values[k]!)]);
    out.splice(i, valuesClose - i + 1, ...assignments);
  }
}

function rowSubquerySet(out: Tok[], open: number, close: number, valuesClose: number): void {
  const columns = out.slice(open + 1, close).filter((t) => !(t.kind === 'punct' && t.value === ','));
  const query = out.slice(close + 2, valuesClose + 1);
  const o = out[open]!.orig;
  const assignments = columns.flatMap((c, k) => [
    ...(k > 0 ? [synth('punct', ',', o)] : []),
    { ...c, glued: false },
    synth('op', '=', o),
    synth('ident', ROWSET_FN, o),
    synth('punct', '(', o, true),
    synth('number', String(k), o),
    synth('punct', ',', o),
    synth('number', String(columns.length), o),
    synth('punct', ',', o),
    ...query,
    synth('punct', ')', o),
  ]);
  out.splice(open, valuesClose - open + 1, ...assignments);
}

/** DELETE/UPDATE ... RETURNING without WHERE: node-sql-parser needs a WHERE before RETURNING. */
function whereBeforeReturning(out: Tok[]): void {
  let depth = 0;
  let sawWhere = false;
  for (let i = 0; i < out.length; i++) {
    const t = out[i]!;
    if (t.value === '(') depth++;
    else if (t.value === ')') depth--;
    else if (depth === 0 && t.kind === 'ident' && t.value === 'where') sawWhere = true;
    else if (depth === 0 && t.kind === 'ident' && t.value === 'returning') {
      if (!sawWhere) out.splice(i, 0, synth('ident', 'where', t.orig), synth('ident', 'true', t.orig));
      return;
    }
  }
}

const TYPED_LITERAL_TYPES = new Set([
  'bool',
  'boolean',
  'int',
  'int2',
  'int4',
  'int8',
  'integer',
  'smallint',
  'bigint',
  'text',
  'varchar',
  'numeric',
  'decimal',
  'real',
  'float4',
  'float8',
  'jsonb',
  'uuid',
]);
const KEYWORD_ALIASES = new Set(['true', 'false', 'null']);

/** `bool 't'` -> `'t'::bool` (PostgreSQL's typed literal); `AS true` -> `AS "true"`. */
function rewriteTypedLiterals(out: Tok[]): void {
  for (let i = 0; i < out.length; i++) {
    const t = out[i]!;
    if (t.kind === 'ident' && TYPED_LITERAL_TYPES.has(t.value) && out[i + 1]?.kind === 'string' && out[i - 1]?.value !== '::' && out[i - 1]?.value !== 'as') {
      out.splice(i, 2, { ...out[i + 1]!, glued: t.glued }, synth('punct', '::', t.orig, true), synth('ident', t.value, t.orig, true));
      i += 2;
    } else if (t.kind === 'ident' && KEYWORD_ALIASES.has(t.value) && out[i - 1]?.value === 'as' && out[i - 2]?.value !== '(') {
      out[i] = synth('qident', `"${t.value}"`, t.orig);
    }
  }
}

function rewriteClauses(toks: Tok[]): Tok[] {
  const out = [...toks];
  const first = out[0]?.value;
  rewriteTypedLiterals(out);
  if (first === 'delete' || first === 'update') whereBeforeReturning(out);
  if (first === 'update') rewriteRowSet(out);
  for (let i = 0; i < out.length; i++) {
    const t = out[i]!;
    // SELECT ALL and agg(ALL x): ALL is the default the grammar lacks a rule for; drop it.
    if (t.kind === 'ident' && t.value === 'select' && out[i + 1]?.kind === 'ident' && out[i + 1]?.value === 'all') out.splice(i + 1, 1);
    if (t.kind === 'ident' && out[i + 1]?.value === '(' && out[i + 2]?.kind === 'ident' && out[i + 2]?.value === 'all') out.splice(i + 2, 1);
    if (t.kind === 'ident' && t.value === 'substring' && out[i + 1]?.value === '(') rewriteSubstring(out, i + 1);
    if (t.kind === 'ident' && t.value !== 'count' && out[i + 1]?.value === '(' && out[i + 2]?.value === 'distinct' && out[i + 3]?.value !== 'on')
      markDistinct(out, i + 2);
    if (first === 'delete' && t.kind === 'ident' && t.value === 'using') out[i] = synth('punct', ',', t.orig);
    // WITH c AS (VALUES ...): node-sql-parser has no VALUES query there; select from it instead.
    if (t.value === 'as' && out[i + 1]?.value === '(' && out[i + 2]?.value === 'values') {
      const close = matchForward(out, i + 1);
      if (close > 0) {
        out.splice(close, 0, synth('punct', ')', t.orig), synth('ident', 'as', t.orig), synth('qident', '"*VALUES*"', t.orig));
        out.splice(i + 2, 0, synth('ident', 'select', t.orig), synth('op', '*', t.orig), synth('ident', 'from', t.orig), synth('punct', '(', t.orig));
      }
    }
    if (first === 'insert' && t.value === 'default' && out[i + 1]?.value === 'values') {
      out.splice(i, 2, synth('ident', 'values', t.orig), synth('punct', '(', t.orig), synth('ident', 'default', t.orig), synth('punct', ')', t.orig));
    }
    if (t.value === 'references' && (out[i + 1]?.kind === 'ident' || out[i + 1]?.kind === 'qident')) {
      let j = i + 2;
      if (out[j]?.value === '.') j += 2;
      if (out[j]?.value !== '(') out.splice(j, 0, synth('punct', '(', t.orig), synth('ident', PK_MARKER, t.orig), synth('punct', ')', t.orig));
    }
  }
  return out;
}

/** substring(x FROM a FOR b) -> substring(x, a, b); substring(x FOR b) -> substring(x, 1, b). */
function rewriteSubstring(toks: Tok[], open: number): void {
  const close = matchForward(toks, open);
  if (close < 0) return;
  let depth = 0;
  let sawFrom = false;
  for (let j = open + 1; j < close; j++) {
    const t = toks[j]!;
    if (t.value === '(' || t.value === '[') depth++;
    else if (t.value === ')' || t.value === ']') depth--;
    else if (depth === 0 && t.kind === 'ident' && t.value === 'from') {
      toks[j] = synth('punct', ',', t.orig);
      sawFrom = true;
    } else if (depth === 0 && t.kind === 'ident' && t.value === 'for') {
      if (sawFrom) toks[j] = synth('punct', ',', t.orig);
      else toks.splice(j, 1, synth('punct', ',', t.orig), synth('number', '1', t.orig), synth('punct', ',', t.orig));
      return;
    }
  }
}

export const DISTINCT_FN = '__svc_distinct';

/** agg(DISTINCT x, ...) -> agg(__svc_distinct(x), ...): node-sql-parser accepts DISTINCT only in count(). */
function markDistinct(toks: Tok[], at: number): void {
  const t = toks[at]!;
  let depth = 0;
  let end = toks.length;
  for (let j = at + 1; j < toks.length; j++) {
    const v = toks[j]!.value;
    if (v === '(' || v === '[') depth++;
    else if ((v === ')' || v === ']') && depth-- === 0) {
      end = j;
      break;
    } else if (depth === 0 && (v === ',' || (v === 'order' && toks[j + 1]?.value === 'by'))) {
      end = j;
      break;
    }
  }
  toks.splice(end, 0, synth('punct', ')', t.orig));
  toks.splice(at, 1, synth('ident', DISTINCT_FN, t.orig), synth('punct', '(', t.orig, true));
}

/** x BETWEEN SYMMETRIC a AND b -> x BETWEEN LEAST(a, b) AND GREATEST(a, b). */
function rewriteSymmetric(toks: Tok[]): Tok[] {
  for (let i = 0; i < toks.length; i++) {
    if (toks[i]!.value !== 'between' || toks[i + 1]?.value !== 'symmetric') continue;
    let depth = 0;
    let and = -1;
    for (let j = i + 2; j < toks.length; j++) {
      const v = toks[j]!.value;
      if (v === '(') depth++;
      else if (v === ')') depth--;
      else if (depth === 0 && v === 'and') {
        and = j;
        break;
      }
    }
    if (and < 0) return toks;
    const end = rightOperand(toks, and, PREC.keywordOp);
    if (end < 0) return toks;
    const a = toks.slice(i + 2, and);
    const b = toks.slice(and + 1, end + 1);
    const o = toks[i]!.orig;
    const pair = (fn: string): Tok[] => [synth('ident', fn, o), synth('punct', '(', o, true), ...a, synth('punct', ',', o), ...b, synth('punct', ')', o)];
    toks = [...toks.slice(0, i + 1), ...pair('least'), synth('ident', 'and', o), ...pair('greatest'), ...toks.slice(end + 1)];
  }
  return toks;
}

function rewriteBinaryOperators(input: Tok[]): Tok[] {
  let toks = input;
  for (let n = 0; n < LIMITS.parseRewritesMax; n++) {
    const found = findBinary(toks);
    if (!found) return toks;
    const { k, width, op, prec } = found;
    const start = leftOperand(toks, k, prec);
    const end = rightOperand(toks, k + width - 1, prec);
    if (start < 0 || end < 0) return toks; // let the parser report the error
    const at = toks[start]!;
    const call: Tok[] = [
      synth('ident', OP_FN, at.orig, at.glued),
      synth('punct', '(', at.orig, true),
      synth('string', quote(op), at.orig),
      synth('punct', ',', at.orig),
      ...toks.slice(start, k),
      synth('punct', ',', toks[k]!.orig),
      ...toks.slice(k + width, end + 1),
      synth('punct', ')', toks[end]!.orig),
    ];
    toks = [...toks.slice(0, start), ...call, ...toks.slice(end + 1)];
  }
  return toks;
}

function findBinary(toks: readonly Tok[]): { k: number; width: number; op: string; prec: number } | null {
  for (let k = 0; k < toks.length; k++) {
    const t = toks[k]!;
    if (t.kind === 'op' && BINARY_REWRITES.has(t.value)) return { k, width: 1, op: t.value, prec: BINARY_REWRITES.get(t.value)! };
    if (t.kind === 'ident' && t.value === 'is') {
      const not = toks[k + 1]?.value === 'not';
      const d = k + (not ? 2 : 1);
      if (toks[d]?.value === 'distinct' && toks[d + 1]?.value === 'from') {
        return { k, width: d + 2 - k, op: not ? 'is not distinct from' : 'is distinct from', prec: PREC.is };
      }
    }
  }
  return null;
}

function render(toks: readonly Tok[], vectorDims: (number | null)[], hnsw: boolean): Rewritten {
  let text = '';
  const outStarts: number[] = [];
  const origStarts: number[] = [];
  for (const t of toks) {
    if (text !== '' && !t.glued) text += ' ';
    outStarts.push(text.length);
    origStarts.push(t.orig);
    text += t.text;
  }
  const origOffset = (offset: number): number => {
    let lo = 0;
    let hi = outStarts.length - 1;
    if (hi < 0) return 0;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (outStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return origStarts[lo]! + Math.max(0, offset - outStarts[lo]!) * (offset >= text.length ? 1 : 0);
  };
  return { text, origOffset, hnsw, vectorDims };
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
