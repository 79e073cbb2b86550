import { SvcError } from '../../core/errors.js';
import { matchForward, type Tok } from './operands.js';

/**
 * Query-level rewrites for what node-sql-parser's grammar lacks: window calls it cannot parse
 * with OVER, a parenthesized member of a set operation, and LIMIT/OFFSET expressions.
 */
export function synth(kind: Tok['kind'], text: string, orig: number, glued = false): Tok {
  return { kind, text, value: kind === 'ident' ? text.toLowerCase() : text, orig, glued };
}

export const quote = (s: string): string => `'${s.replaceAll("'", "''")}'`;

export const LIMIT_PARAM_BASE = 1_000_000;
export const WINDOW_FN = '__svc_win';
/** Window calls node-sql-parser parses with OVER (others are wrapped as sum(__svc_win('f', args...))). */
const PARSER_WINDOW_NAMES = new Set([
  'sum',
  'count',
  'avg',
  'min',
  'max',
  'row_number',
  'rank',
  'dense_rank',
  'lag',
  'lead',
  'first_value',
  'last_value',
  'nth_value',
  'ntile',
]);
const SET_OPS = new Set(['union', 'intersect', 'except']);

/** f(args) OVER (...) for functions the grammar lacks there -> sum(__svc_win('f', args)) OVER (...). */
export function wrapWindowCalls(toks: Tok[]): Tok[] {
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    if (t.kind !== 'ident' || toks[i + 1]?.value !== '(' || PARSER_WINDOW_NAMES.has(t.value) || toks[i - 1]?.value === '.') continue;
    const close = matchForward(toks, i + 1);
    if (close < 0 || toks[close + 1]?.value !== 'over') continue;
    const args = toks.slice(i + 2, close);
    const o = t.orig;
    const inner: Tok[] = [
      synth('ident', 'sum', o, t.glued),
      synth('punct', '(', o, true),
      synth('ident', WINDOW_FN, o),
      synth('punct', '(', o, true),
      synth('string', quote(t.value), o),
      ...(args.length > 0 ? [synth('punct', ',', o), ...args.map((a, n) => (n === 0 ? { ...a, glued: false } : a))] : []),
      synth('punct', ')', o),
      synth('punct', ')', o),
    ];
    toks = [...toks.slice(0, i), ...inner, ...toks.slice(close + 1)];
  }
  return toks;
}

/** (SELECT ...) as a member of a set operation -> SELECT * FROM (SELECT ...) AS "*SELECT*". */
export function wrapParenthesizedSetOps(toks: Tok[]): Tok[] {
  for (let i = 0; i < toks.length; i++) {
    if (toks[i]!.value !== '(' || toks[i + 1]?.value !== 'select') continue;
    const close = matchForward(toks, i);
    if (close < 0) continue;
    let before = toks[i - 1]?.value;
    if ((before === 'all' || before === 'distinct') && SET_OPS.has(toks[i - 2]?.value ?? '')) before = toks[i - 2]!.value;
    const after = toks[close + 1]?.value;
    const afterSetOp = before !== undefined && SET_OPS.has(before);
    const beforeSetOp = after !== undefined && SET_OPS.has(after);
    const atStart = before === undefined || before === '(';
    const atEnd = after === undefined || after === ')' || after === 'order' || after === 'limit';
    if (!((afterSetOp && (atEnd || beforeSetOp)) || (atStart && beforeSetOp))) continue;
    const o = toks[i]!.orig;
    toks = [
      ...toks.slice(0, i),
      synth('ident', 'select', o),
      synth('op', '*', o),
      synth('ident', 'from', o),
      ...toks.slice(i, close + 1),
      synth('ident', 'as', o),
      synth('qident', '"*SELECT*"', o),
      ...toks.slice(close + 1),
    ];
    i += 3;
  }
  return toks;
}

/** LIMIT 2 + 1 -> LIMIT $1000000 with the expression kept aside (bound by the binder). */
const CLAUSE_END = ['offset', 'limit', 'for', 'fetch', 'union', 'intersect', 'except', 'rows', 'row', 'returning'];

/** Index just past a LIMIT/OFFSET clause's expression starting at `i` (the keyword). */
function clauseEnd(toks: readonly Tok[], i: number): number {
  let depth = 0;
  let end = i + 1;
  for (; end < toks.length; end++) {
    const v = toks[end]!.value;
    if (v === '(') depth++;
    else if (v === ')') {
      if (depth === 0) break;
      depth--;
    } else if (depth === 0 && toks[end]!.kind === 'ident' && CLAUSE_END.includes(v)) break;
    else if (depth === 0 && v === ';') break;
  }
  return end;
}

/**
 * OFFSET m LIMIT n -> LIMIT n OFFSET m. PostgreSQL takes both orders; node-sql-parser reads the
 * OFFSET and silently drops a LIMIT after it.
 */
export function limitBeforeOffset(toks: Tok[]): Tok[] {
  for (let i = 0; i < toks.length; i++) {
    if (toks[i]!.kind !== 'ident' || toks[i]!.value !== 'offset') continue;
    const offsetEnd = clauseEnd(toks, i);
    if (toks[offsetEnd]?.kind !== 'ident' || toks[offsetEnd]!.value !== 'limit') continue;
    const limitEnd = clauseEnd(toks, offsetEnd);
    const offset = toks.slice(i, offsetEnd);
    const limit = toks.slice(offsetEnd, limitEnd);
    toks = [...toks.slice(0, i), ...limit, ...offset, ...toks.slice(limitEnd)];
    i = limitEnd - 1;
  }
  return toks;
}

export function rewriteLimitExpressions(toks: Tok[], exprs: string[]): Tok[] {
  for (let i = 0; i < toks.length; i++) {
    const word = toks[i]!.value;
    if ((word !== 'limit' && word !== 'offset') || toks[i]!.kind !== 'ident') continue;
    const end = clauseEnd(toks, i);
    const body = toks.slice(i + 1, end);
    const simple = body.length === 1 && (body[0]!.kind === 'number' || body[0]!.kind === 'param' || body[0]!.value === 'all');
    if (simple || body.length === 0) continue;
    exprs.push(body.map((t) => t.text).join(' '));
    toks = [...toks.slice(0, i + 1), synth('param', `$${LIMIT_PARAM_BASE + exprs.length - 1}`, body[0]!.orig), ...toks.slice(end)];
  }
  return toks;
}

/** Words that end a join condition at its own parenthesis depth (`left`/`right`/`full` only before JOIN or OUTER). */
const CONDITION_END = new Set([
  'where',
  'group',
  'having',
  'order',
  'limit',
  'offset',
  'fetch',
  'union',
  'intersect',
  'except',
  'window',
  'returning',
  'on',
  'join',
  'inner',
  'cross',
  'natural',
  'using',
  'for',
]);
const JOIN_SIDES = new Set(['left', 'right', 'full']);

/**
 * JOIN ... ON cond -> ON (cond), and `a JOIN b ON cond, c` -> `(a JOIN b ON (cond)), c`.
 * node-sql-parser reads `ON x = y, c` as the expression list (x = y, c) and fails on
 * `ON x = y, c AS d`; in PostgreSQL the comma ends the condition and the join before it.
 */
export function parenthesizeJoinConditions(toks: Tok[]): Tok[] {
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    if (t.kind !== 'ident' || t.value !== 'on') continue;
    const chainStart = joinChainStart(toks, i);
    if (chainStart < 0) continue;
    const end = conditionEnd(toks, i + 1);
    if (end <= i + 1) continue;
    const o = toks[i + 1]!.orig;
    const wrapped = toks[i + 1]!.value === '(' && matchForward(toks, i + 1) === end - 1;
    const condition = wrapped ? toks.slice(i + 1, end) : [synth('punct', '(', o), ...toks.slice(i + 1, end), synth('punct', ')', toks[end - 1]!.orig, true)];
    if (toks[end]?.value !== ',') {
      toks = [...toks.slice(0, i + 1), ...condition, ...toks.slice(end)];
      continue;
    }
    const s = toks[chainStart]!.orig;
    toks = [
      ...toks.slice(0, chainStart),
      synth('punct', '(', s),
      ...toks.slice(chainStart, i + 1),
      ...condition,
      synth('punct', ')', o, true),
      ...toks.slice(end),
    ];
    i++;
  }
  return toks;
}

/** The first token of the join chain an ON belongs to (after FROM or a comma), or -1 when the ON is not a join's. */
function joinChainStart(toks: readonly Tok[], at: number): number {
  let depth = 0;
  let sawJoin = false;
  for (let j = at - 1; j >= 0; j--) {
    const t = toks[j]!;
    if (t.kind === 'punct' && t.value === ')') depth++;
    else if (t.kind === 'punct' && t.value === '(') {
      if (depth === 0) return sawJoin ? j + 1 : -1;
      depth--;
    } else if (depth > 0) continue;
    else if (t.kind === 'ident' && t.value === 'join') sawJoin = true;
    else if (t.kind === 'ident' && t.value === 'on' && !sawJoin) return -1;
    else if ((t.kind === 'ident' && (t.value === 'from' || t.value === 'select')) || (t.kind === 'punct' && t.value === ',')) return sawJoin ? j + 1 : -1;
  }
  return -1;
}
/**
 * CROSS JOIN x -> JOIN x ON true: the grammar lacks CROSS JOIN, and a comma would bind looser
 * than the joins after it (`a CROSS JOIN b RIGHT JOIN c` is (a x b) RIGHT JOIN c).
 */
export function rewriteCrossJoins(toks: Tok[]): Tok[] {
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    if (t.kind !== 'ident' || t.value !== 'cross' || toks[i + 1]?.value !== 'join') continue;
    const end = conditionEnd(toks, i + 2);
    const o = toks[end - 1]!.orig;
    toks = [...toks.slice(0, i), ...toks.slice(i + 1, end), synth('ident', 'on', o), synth('ident', 'true', o), ...toks.slice(end)];
  }
  return toks;
}

/** The USING column that stands for NATURAL's "every column name both sides have" (bind/from.ts). */
export const NATURAL_MARKER = '__svc_natural';

/**
 * NATURAL [INNER | LEFT | RIGHT | FULL [OUTER]] JOIN x -> ... JOIN x USING (__svc_natural): the
 * grammar reads NATURAL as an alias; the binder knows the columns, so it expands the marker.
 */
export function rewriteNaturalJoins(toks: Tok[]): Tok[] {
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    if (t.kind !== 'ident' || t.value !== 'natural') continue;
    let join = i + 1;
    while (join < toks.length && ['inner', 'left', 'right', 'full', 'outer'].includes(toks[join]!.value)) join++;
    if (toks[join]?.value !== 'join') continue;
    const end = conditionEnd(toks, join + 1);
    const o = toks[end - 1]!.orig;
    const using = [synth('ident', 'using', o), synth('punct', '(', o), synth('ident', NATURAL_MARKER, o, true), synth('punct', ')', o, true)];
    toks = [...toks.slice(0, i), ...toks.slice(i + 1, end), ...using, ...toks.slice(end)];
  }
  return toks;
}

/**
 * Frame bounds the grammar cannot read, written as `<code> FOLLOWING` (bind/window-frame.ts
 * decodes them): a RANGE frame's CURRENT ROW, and an end bound that PRECEDES (n, or UNBOUNDED
 * for PostgreSQL's error). Offsets above FRAME_CODE_BASE are not used as such.
 */
export const FRAME_CODE_BASE = 1_000_000_000;
export const FRAME_CODES = { rangeCurrent: 1_999_999_999, endUnboundedPreceding: 1_999_999_998 } as const;

/**
 * The grammar has ROWS frames only, whose end does not precede: RANGE [BETWEEN] ... -> ROWS
 * BETWEEN ... with the bounds above as codes. (RANGE UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING
 * is the same frame in either mode.) RANGE with an offset is refused here.
 */
export function rewriteRangeFrames(toks: Tok[]): Tok[] {
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    const next = toks[i + 1]?.value;
    if (t.kind === 'ident' && t.value === 'rows' && next === 'between') {
      toks = encodePrecedingEnd(toks, i + 2);
      continue;
    }
    if (t.kind !== 'ident' || t.value !== 'range' || (next !== 'between' && next !== 'unbounded' && next !== 'current' && toks[i + 1]?.kind !== 'number'))
      continue;
    const between = next === 'between';
    let j = between ? i + 2 : i + 1;
    const bounds: Tok[][] = [];
    for (let b = 0; b < (between ? 2 : 1); b++) {
      const first = toks[j];
      const second = toks[j + 1];
      if (!first || !second) return toks;
      if (first.kind === 'number' || (first.value === 'current' && second.value !== 'row')) {
        throw new SvcError('INVALID_QUERY', 'RANGE with offset PRECEDING/FOLLOWING is not supported', { reason: 'unsupported' });
      }
      bounds.push(first.value === 'current' ? frameCode(FRAME_CODES.rangeCurrent, first.orig) : [first, second]);
      j += 2;
      if (between && b === 0) {
        if (toks[j]?.value !== 'and') return toks;
        j += 1;
      }
    }
    if (!between) bounds.push(frameCode(FRAME_CODES.rangeCurrent, t.orig));
    const o = t.orig;
    const frame = [synth('ident', 'rows', o), synth('ident', 'between', o), ...bounds[0]!, synth('ident', 'and', o), ...bounds[1]!];
    toks = encodePrecedingEnd([...toks.slice(0, i), ...frame, ...toks.slice(j)], i + 2);
  }
  return toks;
}

const frameCode = (code: number, orig: number): Tok[] => [synth('number', String(code), orig), synth('ident', 'following', orig)];

/** In `ROWS BETWEEN <start> AND <end>` (from the start bound at `at`): an end that precedes as a code. */
function encodePrecedingEnd(toks: Tok[], at: number): Tok[] {
  const and = toks[at + 2]?.value === 'and' ? at + 2 : -1;
  const end = toks[and + 1];
  const word = toks[and + 2];
  if (and < 0 || !end || word?.value !== 'preceding') return toks;
  let code: number;
  if (end.value === 'unbounded') code = FRAME_CODES.endUnboundedPreceding;
  else if (end.kind === 'number' && /^\d+$/.test(end.value) && Number(end.value) < FRAME_CODE_BASE) code = FRAME_CODE_BASE + Number(end.value);
  else return toks;
  return [...toks.slice(0, and + 1), ...frameCode(code, end.orig), ...toks.slice(and + 3)];
}

/** Index just past the condition that starts at `from`. */
function conditionEnd(toks: readonly Tok[], from: number): number {
  let depth = 0;
  for (let j = from; j < toks.length; j++) {
    const t = toks[j]!;
    if (t.kind === 'punct' && (t.value === '(' || t.value === '[')) depth++;
    else if (t.kind === 'punct' && (t.value === ')' || t.value === ']')) {
      if (depth === 0) return j;
      depth--;
    } else if (depth === 0 && t.kind === 'punct' && (t.value === ',' || t.value === ';')) return j;
    else if (depth === 0 && t.kind === 'ident') {
      if (CONDITION_END.has(t.value)) return j;
      const next = toks[j + 1]?.value;
      if (JOIN_SIDES.has(t.value) && (next === 'join' || next === 'outer')) return j;
    }
  }
  return toks.length;
}
