/**
 * The bracket expressions of PostgreSQL's regular expressions ('[a-z[:digit:]]', manual §9.7.3.2),
 * read for regex-translate.ts and written out as a v-mode class: ranges (with the cases of their
 * characters when matching ignores case), the named classes, collating elements and escapes. Kept
 * apart from the translator because a bracket has its own small grammar: inside it '-' makes a
 * range, ']' first is a character, and most escapes mean something else than outside.
 */
import { badRegex, CLASSES, COLLATING_NAMES, RE_ICASE, RE_NLSTOP, SHORTHAND } from './regex-syntax.js';
import { classRanges, complement, normalize, utf16Source } from './regex-utf16.js';

/** What the bracket reader needs of the translator: its place in the pattern and its escape reader. */
export interface PatternCursor {
  pos: number;
  readonly cps: readonly number[];
  /** The RE_* flags in force (an embedded option may have changed them). */
  readonly cflags: number;
  peek(ahead?: number): number | undefined;
  /** A character-entry escape (\n, \x41, \u0041, …), the backslash read. */
  charEscape(): number;
  isAlnum(c: number): boolean;
  /** Set once the UTF-16 form takes a character past U+00FF: it then depends on the text's characters. */
  wide: boolean;
}

/** The class operands with no character past U+00FF: digit (\\d), xdigit, ascii, cntrl. */
const NARROW_CLASSES = new Set([CLASSES['digit'], CLASSES['xdigit'], CLASSES['ascii'], CLASSES['cntrl']]);

/** One character as v-mode source: ASCII letters and digits as they are, anything else as \u{…}. */
export function lit(cp: number): string {
  return (cp >= 0x30 && cp <= 0x39) || (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a) ? String.fromCodePoint(cp) : `\\u{${cp.toString(16)}}`;
}

/** A one-character case mapping (towlower/towupper): a mapping to several characters keeps the character. */
function mapOne(cp: number, upper: boolean): number {
  const c = String.fromCodePoint(cp);
  const m = upper ? c.toUpperCase() : c.toLowerCase();
  const first = m.codePointAt(0)!;
  return m.length === (first > 0xffff ? 2 : 1) ? first : cp;
}

/** PostgreSQL's allcases(c): the lower and the upper case of c (not c itself when it is neither, as 'ǅ'). */
export function allCases(cp: number): number[] {
  const lc = mapOne(cp, false);
  const uc = mapOne(cp, true);
  return lc === uc ? [lc] : [lc, uc];
}

type BracketItem = { kind: 'char'; cp: number } | { kind: 'class'; text: string };

/**
 * A bracket expression, the '[' read: as a v-mode class, or with `utf16` (a limit, regex-utf16.ts
 * LATIN1, BMP or ANY) as the UTF-16 source of its code point set up to that limit.
 */
export function readBracket(r: PatternCursor, utf16: number | null): string {
  let negate = false;
  if (r.peek() === 0x5e) {
    negate = true;
    r.pos++;
  }
  let body = '';
  // The set as [lo, hi] pairs and class operands, for the UTF-16 form.
  const pairs: number[] = [];
  let first = true;
  for (;;) {
    const c = r.peek();
    if (c === undefined) throw badRegex('brackets [] not balanced');
    if (c === 0x5d && !first) {
      r.pos++;
      break;
    }
    first = false;
    const item = bracketItem(r);
    // A range: a character, '-', and a character other than the closing ']'.
    if (item.kind === 'char' && r.peek() === 0x2d && r.peek(1) !== undefined && r.peek(1) !== 0x5d) {
      r.pos++;
      const end = bracketItem(r);
      if (end.kind !== 'char' || end.cp < item.cp) throw badRegex('invalid character range');
      body += range(r, item.cp, end.cp, pairs);
      // A '-' right after a range starts another one from nothing ([a-c-e]); only before ']' is it a '-'.
      if (r.peek() === 0x2d && r.peek(1) !== undefined && r.peek(1) !== 0x5d) throw badRegex('invalid character range');
    } else if (item.kind === 'class' && r.peek() === 0x2d && r.peek(1) !== undefined && r.peek(1) !== 0x5d) {
      throw badRegex('invalid character range'); // a class cannot start a range
    } else if (item.kind === 'char') {
      const cases = r.cflags & RE_ICASE ? allCases(item.cp) : [item.cp];
      body += cases.map(lit).join('');
      for (const cp of cases) pairs.push(cp, cp);
    } else {
      body += item.text;
      if (utf16 !== null) pairs.push(...classRanges(item.text, utf16));
      if (!NARROW_CLASSES.has(item.text)) r.wide = true;
    }
  }
  if (negate && r.cflags & RE_NLSTOP) {
    body += '\\n';
    pairs.push(0x0a, 0x0a);
  }
  if (negate || pairs.some((cp) => cp > 0xff)) r.wide = true;
  if (utf16 !== null) return utf16Source(negate ? complement(normalize(pairs)) : normalize(pairs), utf16);
  if (body === '') return negate ? '[^]' : '[]';
  return `[${negate ? '^' : ''}${body}]`;
}

/** a-b; case-insensitive, with the cases of its characters that fall outside it (regc_locale.c range()). */
function range(r: PatternCursor, a: number, b: number, pairs: number[]): string {
  let out = `${lit(a)}-${lit(b)}`;
  pairs.push(a, b);
  if (!(r.cflags & RE_ICASE)) return out;
  if (b - a >= 100_000) throw badRegex('regular expression is too big');
  const extra = new Set<number>();
  for (let c = a; c <= b; c++) {
    for (const cc of [mapOne(c, false), mapOne(c, true)]) if (cc < a || cc > b) extra.add(cc);
  }
  for (const cc of extra) {
    out += lit(cc);
    pairs.push(cc, cc);
  }
  return out;
}

function bracketItem(r: PatternCursor): BracketItem {
  const c = r.cps[r.pos++]!;
  if (c === 0x5b && (r.peek() === 0x3a || r.peek() === 0x2e || r.peek() === 0x3d)) {
    const delim = r.cps[r.pos++]!;
    const start = r.pos;
    while (r.pos < r.cps.length && !(r.cps[r.pos] === delim && r.cps[r.pos + 1] === 0x5d)) r.pos++;
    if (r.pos >= r.cps.length) throw badRegex('brackets [] not balanced');
    const name = String.fromCodePoint(...r.cps.slice(start, r.pos));
    r.pos += 2;
    if (delim === 0x3a) {
      const cls = r.cflags & RE_ICASE && (name === 'upper' || name === 'lower') ? 'alpha' : name;
      const text = CLASSES[cls];
      if (text === undefined) throw badRegex('invalid character class');
      return { kind: 'class', text };
    }
    const cps = Array.from(name, (x) => x.codePointAt(0)!);
    if (cps.length === 1) return { kind: 'char', cp: cps[0]! };
    const named = delim === 0x2e ? COLLATING_NAMES[name] : undefined;
    if (named === undefined) throw badRegex('invalid collating element');
    return { kind: 'char', cp: named };
  }
  if (c === 0x5c) {
    const e = r.peek();
    if (e === undefined) throw badRegex('brackets [] not balanced');
    if (!r.isAlnum(e)) {
      r.pos++;
      return { kind: 'char', cp: e };
    }
    const ch = String.fromCodePoint(e);
    if (SHORTHAND[ch] !== undefined) {
      r.pos++;
      return { kind: 'class', text: SHORTHAND[ch] };
    }
    return { kind: 'char', cp: r.charEscape() };
  }
  return { kind: 'char', cp: c };
}
