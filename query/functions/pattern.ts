/**
 * LIKE/ILIKE and POSIX regular expressions, compiled to JavaScript RegExps and cached.
 * LIKE: '%' any run, '_' one character, '\' escapes the next character (a custom ESCAPE is turned
 * into '\' by like_escape, as PostgreSQL's parser does). Regexes: PostgreSQL's ARE syntax, rewritten
 * for JavaScript's v flag by regex-translate.ts.
 */
import { SvcError } from '../../core/errors.js';
import { dataError } from '../types/errors.js';
import { applyOption, RE_ICASE, translateRegex } from './regex-translate.js';
import { PATTERN_CACHE_ENTRIES_MAX } from '../types/limits.js';

/** Cached patterns, most recent kept; bounded so ad-hoc patterns cannot grow memory without limit. */
const cache = new Map<string, RegExp>();

function cached(key: string, build: () => RegExp): RegExp {
  let re = cache.get(key);
  if (re === undefined) {
    re = build();
    if (cache.size >= PATTERN_CACHE_ENTRIES_MAX) cache.delete(cache.keys().next().value!);
    cache.set(key, re);
  }
  return re;
}

function escapeRegex(c: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(c) ? `\\${c}` : c;
}

function likeToRegex(pattern: string, caseInsensitive: boolean): RegExp {
  let src = '';
  const cs = Array.from(pattern);
  for (let i = 0; i < cs.length; i++) {
    const c = cs[i]!;
    if (c === '\\') {
      if (i + 1 >= cs.length) throw dataError('LIKE pattern must not end with escape character', '22025');
      src += escapeRegex(cs[++i]!);
    } else if (c === '%') {
      src += '.*';
    } else if (c === '_') {
      src += '.';
    } else {
      src += escapeRegex(c);
    }
  }
  return new RegExp(`^${src}$`, caseInsensitive ? 'isu' : 'su');
}

/**
 * A pattern ending in a lone escape fails only when matching reaches that escape with text left
 * (PostgreSQL's MatchText): otherwise the match is simply false.
 */
function likeTrailingEscape(text: string, pattern: string, caseInsensitive: boolean): boolean {
  const head = pattern.slice(0, -1);
  const re = cached(`${caseInsensitive ? 'i' : 'l'}${head}`, () => {
    const full = likeToRegex(head, caseInsensitive);
    return new RegExp(full.source.replace(/\$$/, '.'), full.flags);
  });
  if (re.test(text)) throw dataError('LIKE pattern must not end with escape character', '22025');
  return false;
}

function endsWithLoneEscape(pattern: string): boolean {
  const m = /\\+$/.exec(pattern);
  return m !== null && m[0].length % 2 === 1;
}

/** text LIKE pattern (ILIKE when caseInsensitive). */
export function like(text: string, pattern: string, caseInsensitive: boolean): boolean {
  if (endsWithLoneEscape(pattern)) return likeTrailingEscape(text, pattern, caseInsensitive);
  const re = cached(`${caseInsensitive ? 'I' : 'L'}${pattern}`, () => likeToRegex(pattern, caseInsensitive));
  return re.test(text);
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

/**
 * Compiles a PostgreSQL regular expression (regex-translate.ts) with its RE_* flags, cached. The
 * RegExp has the g flag (matching starts at lastIndex) and is shared: a caller sets lastIndex
 * before every exec or test. `indices` adds the d flag (group positions, for regexp_instr).
 */
export function compileRegex(pattern: string, cflags: number, indices = false): RegExp {
  return cached(`R${cflags}${indices ? 'd' : ''}/${pattern}`, () => {
    const { source, flags } = translateRegex(pattern, cflags);
    try {
      return new RegExp(source, indices ? `${flags}d` : flags);
    } catch (err) {
      // The translator writes only what v accepts; this is a pattern it let through that JavaScript refuses.
      throw dataError(`invalid regular expression: ${(err as Error).message}`, '2201B');
    }
  });
}

/** text ~ pattern (~* when caseInsensitive). */
export function regexMatch(text: string, pattern: string, caseInsensitive: boolean): boolean {
  const re = compileRegex(pattern, caseInsensitive ? RE_ICASE : 0);
  re.lastIndex = 0;
  return re.test(text);
}
