/**
 * LIKE/ILIKE and POSIX regular expressions, compiled to JavaScript RegExps and cached.
 * LIKE: '%' any run, '_' one character, '\' escapes the next character (a custom ESCAPE is turned
 * into '\' by like_escape, as PostgreSQL's parser does). Regexes: PostgreSQL's ARE syntax is close
 * to JavaScript's; [[:class:]] and \m \M \y \Y \A \Z are translated, '.' matches newlines as in ARE.
 */
import { dataError } from '../types/errors.js';
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

const CLASSES: Record<string, string> = {
  alpha: 'a-zA-Z',
  digit: '0-9',
  alnum: 'a-zA-Z0-9',
  upper: 'A-Z',
  lower: 'a-z',
  space: '\\s',
  punct: '!-\\/:-@\\[-`{-~',
  xdigit: '0-9A-Fa-f',
  word: '\\w',
  blank: ' \\t',
  cntrl: '\\x00-\\x1f\\x7f',
  print: '\\x20-\\x7e',
  graph: '\\x21-\\x7e',
};

function translateRegex(src: string): string {
  return src
    .replace(/\[:([a-z]+):\]/g, (m, name: string) => CLASSES[name] ?? m)
    .replace(/\\m/g, '\\b(?=\\w)')
    .replace(/\\M/g, '\\b(?<=\\w)')
    .replace(/\\y/g, '\\b')
    .replace(/\\Y/g, '\\B')
    .replace(/\\A/g, '^')
    .replace(/\\Z/g, '$(?![\\s\\S])');
}

/** Compiles a PostgreSQL regular expression ('invalid regular expression' on failure). */
export function compileRegex(pattern: string, flags: string): RegExp {
  return cached(`R${flags}/${pattern}`, () => {
    let src = pattern;
    let f = flags;
    const embedded = /^\(\?([a-z]+)\)/.exec(src);
    if (embedded) {
      src = src.slice(embedded[0].length);
      if (embedded[1]!.includes('i')) f += 'i';
    }
    try {
      return new RegExp(translateRegex(src), Array.from(new Set(`${f}s`)).join(''));
    } catch (err) {
      throw dataError(`invalid regular expression: ${(err as Error).message}`, '2201B');
    }
  });
}

export function regexMatch(text: string, pattern: string, caseInsensitive: boolean): boolean {
  return compileRegex(pattern, caseInsensitive ? 'i' : '').test(text);
}
