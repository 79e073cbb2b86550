/**
 * The regular-expression functions (PostgreSQL's "POSIX Regular Expressions" table): regexp_replace,
 * regexp_match, regexp_like, regexp_count, regexp_instr, regexp_substr, regexp_split_to_array and
 * substring(text from pattern); regexp_matches and regexp_split_to_table are set-returning
 * (exec/ops/function-scan.ts) and use the matching loop here.
 *
 * Positions count characters, as in PostgreSQL; JavaScript's indexes count UTF-16 units, so a
 * start position is converted to a unit index and back. The matching loop is PostgreSQL's
 * (setup_regexp_matches, replace_text_regexp): each search starts where the last match ended, one
 * character further after an empty match, and sees the whole string (a lookbehind reads before the
 * start position, '^' matches only at the string's start).
 */
import { SvcError } from '../../core/errors.js';
import type { QType, QValue } from '../types/contract.js';
import { dataError } from '../types/errors.js';
import { arrayOf, T } from '../types/qtype.js';
import { compileRegex, mayBacktrack, regexFor, regexOptions } from './pattern.js';
import { guarded } from './regex-guard.js';
import type { FnDef, Impl } from './registry.js';

function fn(name: string, params: QType[], ret: QType, impl: Impl): FnDef {
  return { name, params, ret, make: () => impl };
}

const s = (v: QValue | undefined): string => v as string;
const n = (v: QValue | undefined): number => v as number;

/** The UTF-16 index of character `chars` (0-based) of `str`, or str.length past its end. */
export function unitIndex(str: string, chars: number): number {
  let i = 0;
  for (let c = 0; c < chars && i < str.length; c++) {
    const code = str.charCodeAt(i);
    i += code >= 0xd800 && code <= 0xdbff && i + 1 < str.length ? 2 : 1;
  }
  return i;
}

/** The number of characters in str's first `units` UTF-16 units. */
function charCount(str: string, units: number): number {
  let c = 0;
  for (let i = 0; i < units; i++, c++) {
    const code = str.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < units) i++;
  }
  return c;
}

/** Takes one match; false: no more wanted. */
export type MatchVisitor = (m: RegExpExecArray) => boolean;

/**
 * The matches of `compiled` (from compileRegex: global, shared, so lastIndex is set here; its
 * UTF-16 form where it has one, pattern.ts regexFor) in `str` from unit index `from`, each given
 * to `visit` until it returns false, PostgreSQL's way: the next search starts at the end of a
 * match, one character later after an empty one. `degenerate: false` skips the empty matches
 * regexp_split_* ignores: at the end of the string or right where the previous match ended.
 * A form that may backtrack (pattern.ts mayBacktrack) walks all its matches as one guarded run,
 * stopped at the statement's deadline: `visit` keeps its state in its caller's variables.
 */
export function eachMatch(compiled: RegExp, str: string, from: number, degenerate: boolean, visit: MatchVisitor): void {
  const re = regexFor(compiled, str);
  if (mayBacktrack(compiled, re)) guarded(() => walkMatches(re, str, from, degenerate, visit));
  else walkMatches(re, str, from, degenerate, visit);
}

function walkMatches(re: RegExp, str: string, from: number, degenerate: boolean, visit: MatchVisitor): void {
  let start = from;
  let prevEnd = 0;
  while (start <= str.length) {
    re.lastIndex = start;
    const m = re.exec(str);
    if (m === null) return;
    const end = m.index + m[0].length;
    if ((degenerate || (m.index < str.length && end > prevEnd)) && !visit(m)) return;
    prevEnd = end;
    start = end;
    if (m[0].length === 0) start = unitAfter(str, end);
  }
}

function unitAfter(str: string, i: number): number {
  const code = str.charCodeAt(i);
  return i + (code >= 0xd800 && code <= 0xdbff && i + 1 < str.length ? 2 : 1);
}

function checkPositive(name: string, v: number): number {
  if (v <= 0) throw dataError(`invalid value for parameter "${name}": ${v}`, '22023');
  return v;
}

function checkNonNegative(name: string, v: number): number {
  if (v < 0) throw dataError(`invalid value for parameter "${name}": ${v}`, '22023');
  return v;
}

/**
 * PostgreSQL's replacement text: \1..\9 a group (empty when it took no part), \& the whole match,
 * \\ a backslash; a backslash before anything else is kept as it is.
 */
function expandReplacement(repl: string, m: RegExpExecArray): string {
  if (!repl.includes('\\')) return repl;
  let out = '';
  for (let i = 0; i < repl.length; i++) {
    const c = repl[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const next = repl[i + 1];
    if (next !== undefined && next >= '1' && next <= '9') {
      out += m[Number(next)] ?? '';
      i++;
    } else if (next === '&') {
      out += m[0];
      i++;
    } else if (next === '\\') {
      out += '\\';
      i++;
    } else {
      out += '\\';
    }
  }
  return out;
}

/**
 * regexp_replace(source, pattern, replacement [, start [, N]] [, flags]): the N-th match at or
 * after start replaced (every match when N is 0, or with flag g when N is not given).
 */
function regexpReplace(str: string, pattern: string, repl: string, start: number, nth: number | null, flags: string): string {
  const { cflags, global } = regexOptions(flags, 'regexp_replace', true);
  checkPositive('start', start);
  if (nth !== null) checkNonNegative('n', nth);
  const which = nth ?? (global ? 0 : 1);
  const re = compileRegex(pattern, cflags);
  let out = '';
  let copied = 0;
  let count = 0;
  eachMatch(re, str, unitIndex(str, start - 1), true, (m) => {
    count++;
    if (which > 0 && count < which) return true;
    out += str.slice(copied, m.index) + expandReplacement(repl, m);
    copied = m.index + m[0].length;
    return which === 0;
  });
  return count === 0 ? str : out + str.slice(copied);
}

/** The first match's groups as text[] (a group that took no part is NULL), or the whole match without groups. */
export function matchArray(m: RegExpExecArray): (string | null)[] {
  return m.length > 1 ? m.slice(1).map((g) => g ?? null) : [m[0]];
}

function firstMatch(str: string, pattern: string, flags: string, fnName: string): RegExpExecArray | null {
  const { cflags } = regexOptions(flags, fnName, false);
  const compiled = compileRegex(pattern, cflags);
  const re = regexFor(compiled, str);
  re.lastIndex = 0;
  return mayBacktrack(compiled, re) ? guarded(() => re.exec(str)) : re.exec(str);
}

/** The nth match at or after character `start` (1-based), with group indices (d flag) when `indices`. */
function nthMatch(str: string, pattern: string, start: number, nth: number, flags: string, fnName: string, indices: boolean): RegExpExecArray | null {
  const { cflags } = regexOptions(flags, fnName, false);
  const re = compileRegex(pattern, cflags, indices);
  let count = 0;
  let found: RegExpExecArray | null = null;
  eachMatch(re, str, unitIndex(str, start - 1), true, (m) => {
    if (++count < nth) return true;
    found = m;
    return false;
  });
  return found;
}

/** regexp_count(string, pattern [, start [, flags]]): the matches at or after start. */
function regexpCount(str: string, pattern: string, start: number, flags: string): number {
  const { cflags } = regexOptions(flags, 'regexp_count', false);
  checkPositive('start', start);
  const re = compileRegex(pattern, cflags);
  let count = 0;
  eachMatch(re, str, unitIndex(str, start - 1), true, () => {
    count++;
    return true;
  });
  return count;
}

/** regexp_instr(string, pattern [, start [, N [, endoption [, flags [, subexpr]]]]]): a character position, 0 for none. */
function regexpInstr(str: string, pattern: string, start: number, nth: number, endOption: number, flags: string, subexpr: number): number {
  checkPositive('start', start);
  checkPositive('n', nth);
  if (endOption !== 0 && endOption !== 1) throw dataError(`invalid value for parameter "endoption": ${endOption}`, '22023');
  checkNonNegative('subexpr', subexpr);
  const m = nthMatch(str, pattern, start, nth, flags, 'regexp_instr', subexpr > 0);
  if (m === null || subexpr >= m.length) return 0;
  const span = subexpr === 0 ? [m.index, m.index + m[0].length] : m.indices![subexpr];
  if (span === undefined) return 0;
  return charCount(str, span[endOption]!) + 1;
}

/** regexp_substr(string, pattern [, start [, N [, flags [, subexpr]]]]): the match's text, NULL for none. */
function regexpSubstr(str: string, pattern: string, start: number, nth: number, flags: string, subexpr: number): string | null {
  checkPositive('start', start);
  checkPositive('n', nth);
  checkNonNegative('subexpr', subexpr);
  const m = nthMatch(str, pattern, start, nth, flags, 'regexp_substr', false);
  if (m === null || subexpr >= m.length) return null;
  return m[subexpr] ?? null;
}

/** regexp_split_to_array / _table: the text between matches, empty matches at the ends or after a match ignored. */
export function regexpSplit(str: string, pattern: string, flags: string, fnName: string): string[] {
  const { cflags } = regexOptions(flags, fnName, false);
  const re = compileRegex(pattern, cflags);
  const pieces: string[] = [];
  let from = 0;
  eachMatch(re, str, 0, false, (m) => {
    pieces.push(str.slice(from, m.index));
    from = m.index + m[0].length;
    return true;
  });
  pieces.push(str.slice(from));
  return pieces;
}

/** substring(string from pattern): the first group's text (NULL when it took no part), or the whole match. */
function substringRegex(str: string, pattern: string): QValue {
  const m = firstMatch(str, pattern, '', 'substring');
  if (m === null) return null;
  return m.length > 1 ? (m[1] ?? null) : m[0];
}

function regexpLike(str: string, pattern: string, flags: string): boolean {
  return firstMatch(str, pattern, flags, 'regexp_like') !== null;
}

function regexpMatch(str: string, pattern: string, flags: string): QValue {
  const m = firstMatch(str, pattern, flags, 'regexp_match');
  return m === null ? null : matchArray(m);
}

const TT = [T.text, T.text];
const TEXTS = arrayOf(T.text);

/**
 * substring(s SIMILAR p ESCAPE e) (and the older substring(s FROM p FOR e)): PostgreSQL's parser
 * makes it substring(text, text, text). Refused by name rather than read as the integer form.
 */
function substringSimilar(): never {
  throw new SvcError('INVALID_QUERY', 'substring(… SIMILAR … ESCAPE …) is not supported', { reason: 'unsupported', sqlstate: '0A000' });
}

export const REGEX_FN_DEFS: readonly FnDef[] = [
  fn('substring', TT, T.text, ([a, b]) => substringRegex(s(a), s(b))),
  { name: 'substring', params: [T.text, T.text, T.text], ret: T.text, strict: false, make: () => substringSimilar },
  fn('regexp_replace', [...TT, T.text], T.text, ([a, b, c]) => regexpReplace(s(a), s(b), s(c), 1, null, '')),
  fn('regexp_replace', [...TT, T.text, T.text], T.text, ([a, b, c, d]) => regexpReplace(s(a), s(b), s(c), 1, null, s(d))),
  fn('regexp_replace', [...TT, T.text, T.int4], T.text, ([a, b, c, d]) => regexpReplace(s(a), s(b), s(c), n(d), null, '')),
  fn('regexp_replace', [...TT, T.text, T.int4, T.int4], T.text, ([a, b, c, d, e]) => regexpReplace(s(a), s(b), s(c), n(d), n(e), '')),
  fn('regexp_replace', [...TT, T.text, T.int4, T.int4, T.text], T.text, ([a, b, c, d, e, f]) => regexpReplace(s(a), s(b), s(c), n(d), n(e), s(f))),
  fn('regexp_match', TT, TEXTS, ([a, b]) => regexpMatch(s(a), s(b), '')),
  fn('regexp_match', [...TT, T.text], TEXTS, ([a, b, c]) => regexpMatch(s(a), s(b), s(c))),
  fn('regexp_like', TT, T.bool, ([a, b]) => regexpLike(s(a), s(b), '')),
  fn('regexp_like', [...TT, T.text], T.bool, ([a, b, c]) => regexpLike(s(a), s(b), s(c))),
  fn('regexp_count', TT, T.int4, ([a, b]) => regexpCount(s(a), s(b), 1, '')),
  fn('regexp_count', [...TT, T.int4], T.int4, ([a, b, c]) => regexpCount(s(a), s(b), n(c), '')),
  fn('regexp_count', [...TT, T.int4, T.text], T.int4, ([a, b, c, d]) => regexpCount(s(a), s(b), n(c), s(d))),
  fn('regexp_instr', TT, T.int4, ([a, b]) => regexpInstr(s(a), s(b), 1, 1, 0, '', 0)),
  fn('regexp_instr', [...TT, T.int4], T.int4, ([a, b, c]) => regexpInstr(s(a), s(b), n(c), 1, 0, '', 0)),
  fn('regexp_instr', [...TT, T.int4, T.int4], T.int4, ([a, b, c, d]) => regexpInstr(s(a), s(b), n(c), n(d), 0, '', 0)),
  fn('regexp_instr', [...TT, T.int4, T.int4, T.int4], T.int4, ([a, b, c, d, e]) => regexpInstr(s(a), s(b), n(c), n(d), n(e), '', 0)),
  fn('regexp_instr', [...TT, T.int4, T.int4, T.int4, T.text], T.int4, ([a, b, c, d, e, f]) => regexpInstr(s(a), s(b), n(c), n(d), n(e), s(f), 0)),
  fn('regexp_instr', [...TT, T.int4, T.int4, T.int4, T.text, T.int4], T.int4, ([a, b, c, d, e, f, g]) => regexpInstr(s(a), s(b), n(c), n(d), n(e), s(f), n(g))),
  fn('regexp_substr', TT, T.text, ([a, b]) => regexpSubstr(s(a), s(b), 1, 1, '', 0)),
  fn('regexp_substr', [...TT, T.int4], T.text, ([a, b, c]) => regexpSubstr(s(a), s(b), n(c), 1, '', 0)),
  fn('regexp_substr', [...TT, T.int4, T.int4], T.text, ([a, b, c, d]) => regexpSubstr(s(a), s(b), n(c), n(d), '', 0)),
  fn('regexp_substr', [...TT, T.int4, T.int4, T.text], T.text, ([a, b, c, d, e]) => regexpSubstr(s(a), s(b), n(c), n(d), s(e), 0)),
  fn('regexp_substr', [...TT, T.int4, T.int4, T.text, T.int4], T.text, ([a, b, c, d, e, f]) => regexpSubstr(s(a), s(b), n(c), n(d), s(e), n(f))),
  fn('regexp_split_to_array', TT, TEXTS, ([a, b]) => regexpSplit(s(a), s(b), '', 'regexp_split_to_array')),
  fn('regexp_split_to_array', [...TT, T.text], TEXTS, ([a, b, c]) => regexpSplit(s(a), s(b), s(c), 'regexp_split_to_array')),
];
