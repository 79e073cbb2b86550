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
const PARSER_WINDOW_NAMES = new Set(['sum', 'count', 'avg', 'min', 'max', 'row_number', 'rank', 'dense_rank', 'lag', 'lead', 'first_value', 'last_value', 'nth_value', 'ntile']);
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
      synth('ident', 'sum', o, t.glued), synth('punct', '(', o, true), synth('ident', WINDOW_FN, o), synth('punct', '(', o, true),
      synth('string', quote(t.value), o), ...(args.length > 0 ? [synth('punct', ',', o), ...args.map((a, n) => (n === 0 ? { ...a, glued: false } : a))] : []),
      synth('punct', ')', o), synth('punct', ')', o),
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
      ...toks.slice(0, i), synth('ident', 'select', o), synth('op', '*', o), synth('ident', 'from', o), ...toks.slice(i, close + 1),
      synth('ident', 'as', o), synth('qident', '"*SELECT*"', o), ...toks.slice(close + 1),
    ];
    i += 3;
  }
  return toks;
}

/** LIMIT 2 + 1 -> LIMIT $1000000 with the expression kept aside (bound by the binder). */
export function rewriteLimitExpressions(toks: Tok[], exprs: string[]): Tok[] {
  for (let i = 0; i < toks.length; i++) {
    const word = toks[i]!.value;
    if ((word !== 'limit' && word !== 'offset') || toks[i]!.kind !== 'ident') continue;
    let depth = 0;
    let end = i + 1;
    for (; end < toks.length; end++) {
      const v = toks[end]!.value;
      if (v === '(') depth++;
      else if (v === ')') {
        if (depth === 0) break;
        depth--;
      } else if (depth === 0 && toks[end]!.kind === 'ident' && ['offset', 'limit', 'for', 'fetch', 'union', 'intersect', 'except', 'rows', 'row', 'returning'].includes(v)) break;
      else if (depth === 0 && v === ';') break;
    }
    const body = toks.slice(i + 1, end);
    const simple = body.length === 1 && (body[0]!.kind === 'number' || body[0]!.kind === 'param' || body[0]!.value === 'all');
    if (simple || body.length === 0) continue;
    exprs.push(body.map((t) => t.text).join(' '));
    toks = [...toks.slice(0, i + 1), synth('param', `$${LIMIT_PARAM_BASE + exprs.length - 1}`, body[0]!.orig), ...toks.slice(end)];
  }
  return toks;
}
