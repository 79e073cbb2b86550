/**
 * The tables of PostgreSQL's ARE syntax that regex-translate.ts reads patterns with: the compile
 * flags and option letters, the character classes as JavaScript v-mode class operands (PostgreSQL's
 * own Unicode definitions, src/common/unicode_category.c pg_u_is*, the POSIX-compatible variants
 * its builtin C.UTF-8 locale uses), the escapes, and the collating-element names.
 */
import { SvcError } from '../../core/errors.js';
import { dataError } from '../types/errors.js';

/** PostgreSQL's compile flags (REG_ICASE, REG_NLSTOP, REG_NLANCH, REG_EXPANDED, REG_QUOTE). */
export const RE_ICASE = 1;
/** '.' and a negated bracket do not match a newline (flags n, m, p). */
export const RE_NLSTOP = 2;
/** '^' and '$' also match just after and before a newline (flags n, m, w). */
export const RE_NLANCH = 4;
/** White space and #-comments in the pattern are ignored (flag x). */
export const RE_EXPANDED = 8;
/** The whole pattern is literal text (flag q). */
export const RE_QUOTE = 16;

/** PostgreSQL's message for a pattern it cannot compile (regerror's text). */
export function badRegex(reason: string): Error {
  return dataError(`invalid regular expression: ${reason}`, '2201B');
}

/** Applies one option letter (a function's flags argument or an embedded `(?…)`) to `cflags`. */
export function applyOption(cflags: number, letter: string, embedded: boolean): number {
  switch (letter) {
    case 'i':
      return cflags | RE_ICASE;
    case 'c':
      return cflags & ~RE_ICASE;
    case 'm':
    case 'n':
      return cflags | RE_NLSTOP | RE_NLANCH;
    case 'p':
      return (cflags | RE_NLSTOP) & ~RE_NLANCH;
    case 'w':
      return (cflags | RE_NLANCH) & ~RE_NLSTOP;
    case 's':
      return cflags & ~(RE_NLSTOP | RE_NLANCH);
    case 'x':
      return cflags | RE_EXPANDED;
    case 't':
      return cflags & ~RE_EXPANDED;
    case 'q':
      return cflags | RE_QUOTE;
    case 'b':
    case 'e':
      throw new SvcError('INVALID_QUERY', `regular expression option "${letter}" (${letter === 'b' ? 'basic' : 'extended'} POSIX syntax) is not supported`, {
        reason: 'unsupported',
        sqlstate: '0A000',
      });
    default:
      if (embedded) throw badRegex('invalid embedded option');
      throw dataError(`invalid regular expression option: "${letter}"`, '22023');
  }
}

// Character classes as v-mode class operands.
const ALPHA = '\\p{Alphabetic}';
// JavaScript's \d is ASCII digits in every mode, as PostgreSQL's [[:digit:]] (and matched faster than [0-9]).
const DIGIT = '\\d';
const ALNUM = '[\\p{Alphabetic}0-9]';
const WORD = '[\\p{Alphabetic}0-9_]';
// PostgreSQL asks the C library (iswspace, iswlower, ...); glibc and musl both leave the no-break
// spaces (U+00A0, U+2007, U+202F) out of space and blank: they join words, as a letter does.
const NO_BREAK_SPACES = '\\u00a0\\u2007\\u202f';
const SPACE = `[\\p{White_Space}--[${NO_BREAK_SPACES}]]`;
// The C library's lower is "has a (simple) uppercase mapping" (towupper(c) != c) and its upper
// "has a lowercase mapping": not Unicode's Lowercase/Uppercase, which count ª, º and ʰ (no
// uppercase) and ĸ (a lowercase letter with no uppercase) but not the titlecase ǅ, which is both.
// Changes_When_Lowercased is exactly that for upper. Changes_When_Uppercased also counts the
// letters whose only uppercase is several characters (ß → SS, ﬁ → FI, Greek with iota): the C
// library has no uppercase for them, save ß, which glibc names lowercase by hand.
const UPPERCASE_ONLY_FULL =
  '\\u0149\\u01f0\\u0390\\u03b0\\u0587\\u1e96-\\u1e9a\\u1f50\\u1f52\\u1f54\\u1f56\\u1f88-\\u1f8f\\u1f98-\\u1f9f\\u1fa8-\\u1faf' +
  '\\u1fb2\\u1fb4\\u1fb6\\u1fb7\\u1fbc\\u1fc2\\u1fc4\\u1fc6\\u1fc7\\u1fcc\\u1fd2\\u1fd3\\u1fd6\\u1fd7\\u1fe2-\\u1fe4\\u1fe6\\u1fe7' +
  '\\u1ff2\\u1ff4\\u1ff6\\u1ff7\\u1ffc\\ufb00-\\ufb06\\ufb13-\\ufb17';
const GRAPH = `[^\\p{Cc}\\p{Cs}\\p{Cn}${SPACE}]`;
export const CLASSES: Record<string, string> = {
  alpha: ALPHA,
  digit: DIGIT,
  alnum: ALNUM,
  upper: '\\p{Changes_When_Lowercased}',
  lower: `[\\p{Changes_When_Uppercased}--[${UPPERCASE_ONLY_FULL}]]`,
  space: SPACE,
  blank: `[\\t[\\p{Zs}--[${NO_BREAK_SPACES}]]]`,
  cntrl: '\\p{Cc}',
  graph: GRAPH,
  print: `[${GRAPH}\\p{Zs}]`,
  punct: '[[\\p{P}\\p{S}]--\\p{Alphabetic}]',
  xdigit: '[0-9A-Fa-f]',
  // regc_locale.c's two classes past POSIX's: word is alnum and '_' (\\w), ascii U+0000 to U+007F.
  word: WORD,
  ascii: '\\p{ASCII}',
};
export const SHORTHAND: Record<string, string> = { d: DIGIT, s: SPACE, w: WORD, D: '\\D', S: `[^${SPACE}]`, W: `[^${WORD}]` };
export const WORD_START = `(?<!${WORD})(?=${WORD})`;
export const WORD_END = `(?<=${WORD})(?!${WORD})`;
export const CONSTRAINT_ESCAPES: Record<string, string> = {
  A: '^',
  Z: '$',
  m: WORD_START,
  M: WORD_END,
  y: `(?:${WORD_START}|${WORD_END})`,
  Y: `(?:(?<=${WORD})(?=${WORD})|(?<!${WORD})(?!${WORD}))`,
};
export const CHAR_ESCAPES: Record<string, number> = { a: 7, b: 8, B: 0x5c, e: 0x1b, f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09, v: 0x0b };
/** The collating-element names of regc_locale.c that users write ([[.hyphen.]]); others are refused. */
export const COLLATING_NAMES: Record<string, number> = {
  NUL: 0,
  tab: 9,
  newline: 10,
  space: 32,
  'exclamation-mark': 33,
  'quotation-mark': 34,
  'number-sign': 35,
  'dollar-sign': 36,
  'percent-sign': 37,
  ampersand: 38,
  apostrophe: 39,
  'left-parenthesis': 40,
  'right-parenthesis': 41,
  asterisk: 42,
  'plus-sign': 43,
  comma: 44,
  hyphen: 45,
  'hyphen-minus': 45,
  period: 46,
  'full-stop': 46,
  slash: 47,
  solidus: 47,
  colon: 58,
  semicolon: 59,
  'less-than-sign': 60,
  'equals-sign': 61,
  'greater-than-sign': 62,
  'question-mark': 63,
  'commercial-at': 64,
  'left-square-bracket': 91,
  backslash: 92,
  'reverse-solidus': 92,
  'right-square-bracket': 93,
  circumflex: 94,
  'circumflex-accent': 94,
  underscore: 95,
  low_line: 95,
  'grave-accent': 96,
  'left-brace': 123,
  'left-curly-bracket': 123,
  'vertical-line': 124,
  'right-brace': 125,
  'right-curly-bracket': 125,
  tilde: 126,
  DEL: 127,
};
/** RE_DUPMAX: the largest count a bound may give. */
export const DUP_MAX = 255;
