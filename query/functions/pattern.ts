/**
 * LIKE/ILIKE and POSIX regular expressions, compiled to JavaScript RegExps and cached.
 * LIKE: '%' any run, '_' one character, '\' escapes the next character (a custom ESCAPE is turned
 * into '\' by like_escape, as PostgreSQL's parser does). Regexes: PostgreSQL's ARE syntax, rewritten
 * for JavaScript's v flag by regex-translate.ts.
 *
 * No pattern may hold the event loop for long (one statement would stall every request, and a
 * statement timeout cannot interrupt a running RegExp). JavaScript's engine backtracks: '(a+)+$'
 * against 'aaaa…!' is exponential, and LIKE '%a%a%a%b' written as /^.*a.*a.*a.*b$/ is cubic. So:
 * - LIKE never runs as one RegExp with '%' in it: its pieces between the '%' are found in order,
 *   each at its leftmost place (likeMatches), which is linear in the text for each piece.
 * - A regex also gets a UTF-16 form (regex-utf16.ts) that V8 moves to its linear-time engine once a
 *   match has backtracked too much (the flag set below); used on well-formed text (regexFor).
 * - What that engine cannot run (lookarounds, the word constraints \m \M \y \Y, back references, the
 *   n flag's anchors, regexp_instr's subexpression positions, bounds it refuses: `{0,255}`,
 *   `(ab){2,20}`) still backtracks, and runs under regex-guard.ts's watchdog, which stops it at
 *   the statement's deadline (QUERY_TIMEOUT, as any statement past its timeout_ms).
 */
import { setFlagsFromString } from 'node:v8';
import { SvcError } from '../../core/errors.js';
import { dataError } from '../types/errors.js';
import { applyOption, RE_ICASE, translateRegex, translateRegexUtf16, type TranslatedRegex } from './regex-translate.js';
import { guarded } from './regex-guard.js';
import { PATTERN_CACHE_ENTRIES_MAX } from '../types/limits.js';
import { ANY, BMP, LATIN1 } from './regex-utf16.js';

// V8 reads this when a RegExp is created: every regex created after it (ours are compiled at query
// time, below) that the linear engine can run switches to it after 50,000 backtracks
// (--regexp-backtracks-before-fallback) instead of backtracking on exponentially. Set here, where the
// patterns are compiled, so every process that runs SQL has it (svcdb serve, replay, in-process tests).
setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');
// And the l flag (a RegExp only that engine runs), which V8 refuses at once for a pattern that
// engine cannot take: linearForm asks it so, which is how a UTF-16 form with bounds too large for
// it is known (V8 then never falls back, and the match has to run under the watchdog).
setFlagsFromString('--enable-experimental-regexp-engine');

/** Cached patterns, most recent kept; bounded so ad-hoc patterns cannot grow memory without limit. */
const cache = new Map<string, CompiledRegex | LikeMatcher>();

function cached<T extends CompiledRegex | LikeMatcher>(key: string, build: () => T): T {
  let re = cache.get(key) as T | undefined;
  if (re === undefined) {
    re = build();
    if (cache.size >= PATTERN_CACHE_ENTRIES_MAX) cache.delete(cache.keys().next().value!);
    cache.set(key, re);
  }
  return re;
}

const SURROGATE = /[\ud800-\udfff]/;

/** Whether every character of `text` is Latin-1. */
function isLatin1(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0xff) return false;
  return true;
}

/**
 * A compiled regex: its v form, and its UTF-16 forms (translateRegexUtf16), which V8 can move to
 * its linear engine. `narrow`: the one UTF-16 form of a pattern that takes no character past
 * U+00FF, for every text. Else each form is written the first time a text needs it: for Latin-1
 * text, for text without surrogates, for any well-formed text. None (`linear` false) for a
 * lookaround or a back reference, nor with the d flag, nor for bounds V8's linear engine refuses
 * (linearForm): the v form then, which may backtrack (mayBacktrack) unless `bounded`
 * (TranslatedRegex.bounded: no quantifier, alternative or back reference, so one path per start).
 */
class CompiledRegex {
  readonly narrow: RegExp | null;
  private readonly linear: boolean;
  private latin1: RegExp | null | undefined;
  private bmp: RegExp | null | undefined;
  private any: RegExp | null | undefined;

  constructor(
    readonly v: RegExp,
    private readonly pattern: string,
    private readonly cflags: number,
    withForms: boolean,
    readonly bounded: boolean,
  ) {
    const latin1 = withForms ? translateRegexUtf16(pattern, cflags, LATIN1) : null;
    const form = linearForm(latin1);
    this.linear = form !== null;
    this.narrow = latin1?.wide === false ? form : null;
    this.latin1 = form;
  }

  /**
   * The RegExp to run on `text`: the UTF-16 form for it when there is one and `text` is well
   * formed (no lone surrogate, which the v form matches as a character and the UTF-16 form never
   * does), else the v form. Both find the same matches at the same indexes; set lastIndex on the
   * one returned.
   */
  forText(text: string): RegExp {
    // Most patterns: no look at the text (which costs more than the match of a short row).
    if (this.narrow !== null) return this.narrow;
    if (!this.linear) return this.v;
    if (isLatin1(text)) return this.latin1 ?? this.v;
    if (!SURROGATE.test(text)) {
      if (this.bmp === undefined) this.bmp = this.form(BMP);
      return this.bmp ?? this.v;
    }
    if (!(text as string & { isWellFormed(): boolean }).isWellFormed()) return this.v;
    if (this.any === undefined) this.any = this.form(ANY);
    return this.any ?? this.v;
  }

  /**
   * Whether `form` (forText's RegExp for a text) is the v form, which V8 never moves to its linear
   * engine, of a pattern that is not `bounded`: its match may backtrack without end and runs guarded
   * (regex-guard.ts). Every UTF-16 form kept is one that engine takes.
   */
  mayBacktrack(form: RegExp): boolean {
    return form === this.v && !this.bounded;
  }

  private form(limit: number): RegExp | null {
    return linearForm(translateRegexUtf16(this.pattern, this.cflags, limit));
  }
}

/**
 * A UTF-16 form as a RegExp, or null when V8's linear engine cannot run it. The l flag (a RegExp
 * only that engine runs) is refused at once for such a pattern: a bound above 16 (`{0,255}`), or
 * bounds that nest to more than 16 copies (`(ab){2,20}`, `(a{2,5}){4}`); V8 never falls back to
 * that engine for them, so the form would backtrack as the v form does, and the v form is used.
 */
function linearForm(t: TranslatedRegex | null): RegExp | null {
  if (t === null) return null;
  try {
    if (!new RegExp(t.source, `${t.flags}l`).flags.includes('l')) return null;
  } catch {
    return null;
  }
  return new RegExp(t.source, t.flags);
}

/** CompiledRegex.mayBacktrack for compileRegex's RegExp `compiled` and `form`, regexFor's RegExp for it and a text. */
export function mayBacktrack(compiled: RegExp, form: RegExp): boolean {
  return COMPILED.get(compiled)?.mayBacktrack(form) ?? form === compiled;
}

/** compileRegex's RegExp to its CompiledRegex, for regexFor. */
const COMPILED = new WeakMap<RegExp, CompiledRegex>();

/** The RegExp to run on `text` for `re` from compileRegex (CompiledRegex.forText); set lastIndex on it. */
export function regexFor(re: RegExp, text: string): RegExp {
  return COMPILED.get(re)?.forText(text) ?? re;
}

function escapeRegex(c: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(c) ? `\\${c}` : c;
}

/**
 * A LIKE pattern as the RegExp sources of its pieces between the '%' ('_' is '.', one character;
 * the rest literal): 'ab%c_%' is ['ab', 'c.', ''].
 */
function likePieces(pattern: string): string[] {
  const pieces: string[] = [];
  let src = '';
  const cs = Array.from(pattern);
  for (let i = 0; i < cs.length; i++) {
    const c = cs[i]!;
    if (c === '\\') {
      if (i + 1 >= cs.length) throw dataError('LIKE pattern must not end with escape character', '22025');
      src += escapeRegex(cs[++i]!);
    } else if (c === '%') {
      pieces.push(src);
      src = '';
    } else if (c === '_') {
      src += '.';
    } else {
      src += escapeRegex(c);
    }
  }
  pieces.push(src);
  return pieces;
}

/**
 * A compiled LIKE pattern: with no '%', one anchored RegExp (`whole`); else the first piece
 * anchored at the start, the middle ones searched for in order, the last anchored at the end.
 */
interface LikeMatcher {
  readonly whole: RegExp | null;
  readonly head: RegExp | null;
  readonly middle: readonly RegExp[];
  readonly tail: RegExp | null;
}

function likeMatcher(pattern: string, caseInsensitive: boolean): LikeMatcher {
  const flags = caseInsensitive ? 'isu' : 'su';
  const pieces = likePieces(pattern);
  if (pieces.length === 1) return { whole: new RegExp(`^${pieces[0]!}$`, flags), head: null, middle: [], tail: null };
  const head = pieces[0]!;
  const tail = pieces[pieces.length - 1]!;
  return {
    whole: null,
    head: head === '' ? null : new RegExp(head, `y${flags}`),
    middle: pieces.slice(1, -1).flatMap((p) => (p === '' ? [] : [new RegExp(p, `g${flags}`)])),
    tail: tail === '' ? null : new RegExp(`(?:${tail})$`, `g${flags}`),
  };
}

/**
 * Whether `text` matches. Each piece matches a fixed number of characters, so taking every middle
 * piece at its leftmost place after the one before leaves the most text to the rest: the pattern
 * matches exactly when this finds a place for each. Each search is linear in the text (times the
 * piece), where one RegExp with a '.*' per '%' backtracks to the power of the number of '%'.
 */
function likeMatches(m: LikeMatcher, text: string): boolean {
  if (m.whole !== null) return m.whole.test(text);
  let at = 0;
  if (m.head !== null) {
    m.head.lastIndex = 0;
    if (!m.head.test(text)) return false;
    at = m.head.lastIndex;
  }
  for (const re of m.middle) {
    re.lastIndex = at;
    if (!re.test(text)) return false;
    at = re.lastIndex;
  }
  if (m.tail === null) return true;
  m.tail.lastIndex = at;
  return m.tail.test(text);
}

/**
 * A pattern ending in a lone escape fails only when matching reaches that escape with text left
 * (PostgreSQL's MatchText): otherwise the match is simply false. Reaching it with text left is
 * the rest of the pattern matching, then one character, then anything: `rest_%`.
 */
function likeTrailingEscape(text: string, pattern: string, caseInsensitive: boolean): boolean {
  const reached = `${pattern.slice(0, -1)}_%`;
  const m = cached(`${caseInsensitive ? 'I' : 'L'}${reached}`, () => likeMatcher(reached, caseInsensitive));
  if (likeMatches(m, text)) throw dataError('LIKE pattern must not end with escape character', '22025');
  return false;
}

function endsWithLoneEscape(pattern: string): boolean {
  const m = /\\+$/.exec(pattern);
  return m !== null && m[0].length % 2 === 1;
}

/** text LIKE pattern (ILIKE when caseInsensitive). */
export function like(text: string, pattern: string, caseInsensitive: boolean): boolean {
  if (endsWithLoneEscape(pattern)) return likeTrailingEscape(text, pattern, caseInsensitive);
  const m = cached(`${caseInsensitive ? 'I' : 'L'}${pattern}`, () => likeMatcher(pattern, caseInsensitive));
  return likeMatches(m, text);
}

/** like_escape(pattern, escape): rewrites a pattern with a custom escape character to use '\'. */
export function likeEscape(pattern: string, escape: string): string {
  const esc = Array.from(escape);
  if (esc.length > 1) throw dataError('invalid escape string', '22025', 'Escape string must be empty or one character.');
  let out = '';
  const cs = Array.from(pattern);
  for (let i = 0; i < cs.length; i++) {
    const c = cs[i]!;
    if (esc.length === 0) {
      out += c === '\\' ? '\\\\' : c;
    } else if (c === esc[0]) {
      if (i + 1 >= cs.length) throw dataError('LIKE pattern must not end with escape character', '22025');
      out += `\\${cs[++i]!}`;
    } else if (c === '\\') {
      out += '\\\\';
    } else {
      out += c;
    }
  }
  return out;
}

/**
 * Reads a function's flags argument (PostgreSQL's parse_re_flags): the RE_* compile bits and
 * whether g was given. `fn` names the function in PostgreSQL's error for g where it takes none.
 */
export function regexOptions(options: string, fn: string, globalAllowed: boolean): { cflags: number; global: boolean } {
  let cflags = 0;
  let global = false;
  for (const letter of options) {
    if (letter !== 'g') cflags = applyOption(cflags, letter, false);
    else if (globalAllowed) global = true;
    else {
      const hint = fn === 'regexp_match' ? { hint: 'Use the regexp_matches function instead.' } : {};
      throw new SvcError('TYPE_MISMATCH', `${fn}() does not support the "global" option`, { sqlstate: '22023', ...hint });
    }
  }
  return { cflags, global };
}

/** The cached CompiledRegex of a PostgreSQL regular expression with its RE_* flags (compileRegex). */
function compiledRegex(pattern: string, cflags: number, indices: boolean): CompiledRegex {
  return cached(`R${cflags}${indices ? 'd' : ''}/${pattern}`, () => {
    const { source, flags, bounded } = translateRegex(pattern, cflags);
    let re: RegExp;
    try {
      re = new RegExp(source, indices ? `${flags}d` : flags);
    } catch (err) {
      // The translator writes only what v accepts; this is a pattern it let through that JavaScript refuses.
      throw dataError(`invalid regular expression: ${(err as Error).message}`, '2201B');
    }
    // The d flag (group positions) keeps V8's linear engine out: no UTF-16 form then.
    const compiled = new CompiledRegex(re, pattern, cflags, !indices, bounded === true);
    COMPILED.set(re, compiled);
    return compiled;
  });
}

/**
 * Compiles a PostgreSQL regular expression (regex-translate.ts) with its RE_* flags, cached. The
 * RegExp has the g flag (matching starts at lastIndex) and is shared: a caller sets lastIndex
 * before every exec or test, on regexFor(re, text), and runs that guarded (regex-guard.ts) when
 * mayBacktrack says so. `indices` adds the d flag (group positions, for regexp_instr).
 */
export function compileRegex(pattern: string, cflags: number, indices = false): RegExp {
  return compiledRegex(pattern, cflags, indices).v;
}

/** text ~ pattern (~* when caseInsensitive); a match that may backtrack runs guarded (stopped at the statement's deadline). */
export function regexMatch(text: string, pattern: string, caseInsensitive: boolean): boolean {
  const compiled = compiledRegex(pattern, caseInsensitive ? RE_ICASE : 0, false);
  const re = compiled.forText(text);
  re.lastIndex = 0;
  return compiled.mayBacktrack(re) ? guarded(() => re.test(text)) : re.test(text);
}
