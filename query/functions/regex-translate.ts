/**
 * PostgreSQL's regular expressions (ARE, "Advanced Regular Expressions", manual §9.7.3) rewritten
 * as the source of a JavaScript RegExp with the v flag.
 *
 * Why a translator and not the pattern as it is: PostgreSQL matches characters (code points) and
 * JavaScript without u/v matches UTF-16 units, so '.' took half of an emoji; with u/v the pattern
 * syntax is strict ('[\w-]', a lone '{' are errors) and differs from ARE in places ('\b' is a
 * backspace in ARE, '\B' a backslash, '\y' a word boundary; '^' after a newline only with the n
 * flag; parentheses inside a lookahead do not capture). Every construct is read here and written
 * out in the form v understands, so each character is one character and the errors are
 * PostgreSQL's (`invalid regular expression: quantifier operand invalid`, …).
 *
 * Bracket expressions are read by regex-bracket.ts. Character classes (regex-syntax.ts) follow
 * PostgreSQL's Unicode definitions (pg_u_is*) where the C libraries agree, and the C library's where they part (PostgreSQL asks iswlower() and friends):
 * alpha is Unicode's Alphabetic, upper and lower the letters with a lowercase or uppercase mapping,
 * space White_Space less the no-break spaces, punct the punctuation and symbol categories less
 * Alphabetic, digit and xdigit ASCII only; \w and [[:word:]] are [[:alnum:]_].
 * Case-insensitive matching is PostgreSQL's: a letter stands for its lower and upper case
 * (allcases() in regc_locale.c), spelled out here rather than left to JavaScript's i flag, whose
 * Unicode case folding differs ('ſ' would match 's').
 *
 * Not the same: JavaScript picks the first alternative that matches where PostgreSQL's engine
 * picks the longest overall match of a pattern without quantifiers ('a|ab' takes 'ab' there).
 */
import { allCases, lit, readBracket, type PatternCursor } from './regex-bracket.js';
import { ALL, classRanges, complement, normalize, utf16Char, utf16Source } from './regex-utf16.js';
import {
  applyOption,
  badRegex,
  CHAR_ESCAPES,
  CONSTRAINT_ESCAPES,
  DUP_MAX,
  RE_EXPANDED,
  RE_ICASE,
  RE_NLANCH,
  RE_NLSTOP,
  RE_QUOTE,
  SHORTHAND,
  WORD_END,
  WORD_START,
} from './regex-syntax.js';

export { applyOption, RE_ICASE } from './regex-syntax.js';

/** Thrown by the UTF-16 translation at a construct V8's linear engine cannot run. */
const NOT_LINEAR = new Error('no linear form');
const ALL_BUT_NEWLINE = complement([0x0a, 0x0a]);

export interface TranslatedRegex {
  readonly source: string;
  /** 'gsv', plus 'i' where a back reference must compare without case. */
  readonly flags: string;
  /**
   * UTF-16 form only: whether it takes any character past U+00FF. When not, the form is the same
   * for every text and serves any text, a lone surrogate too: no atom of it matches a surrogate or
   * can start inside a pair, under either flag.
   */
  readonly wide?: boolean;
  /**
   * v form only: no quantifier, no alternative (`|`) and no back reference. Matched by
   * backtracking, such a pattern has one path per start position (the only alternatives it holds
   * are \y's and \Y's, which exclude each other), so a match takes time linear in the text times
   * the pattern, as on the linear engine: pattern.ts runs it without the watchdog.
   */
  readonly bounded?: boolean;
}

class Translator implements PatternCursor {
  pos = 0;
  wide = false;
  private groups = 0;
  private lookaround = 0;
  private backref = false;
  /** A quantifier or an alternative was read (TranslatedRegex.bounded). */
  private choices = false;
  readonly cps: number[];

  constructor(
    pattern: string,
    public cflags: number,
    /** Write the UTF-16 form (regex-utf16.ts) for text up to this code point: no u or v flag, so V8's linear engine can take it. */
    private readonly utf16: number | null = null,
  ) {
    this.cps = Array.from(pattern, (c) => c.codePointAt(0)!);
  }

  translate(): TranslatedRegex {
    this.prefix();
    let source: string;
    if (this.cflags & RE_QUOTE) {
      source = '';
      while (this.pos < this.cps.length) source += this.literal(this.cps[this.pos++]!);
    } else {
      source = this.alternation();
      if (this.pos < this.cps.length) throw badRegex('parentheses () not balanced'); // a ')' with no '('
    }
    if (this.utf16 !== null) return { source, flags: 'g', wide: this.wide };
    const icaseBackref = this.backref && (this.cflags & RE_ICASE) !== 0;
    return { source, flags: icaseBackref ? 'gisv' : 'gsv', bounded: !this.choices && !this.backref };
  }

  /** `***=` (the rest is literal), `***:` (the rest is an ARE) and embedded options `(?inx)` at the start. */
  private prefix(): void {
    if (this.startsWith('***=')) {
      this.pos = 4;
      this.cflags |= RE_QUOTE;
      return;
    }
    if (this.startsWith('***:')) this.pos = 4;
    if (this.cflags & RE_QUOTE) return;
    if (this.peek() === 0x28 && this.peek(1) === 0x3f && this.isLetter(this.peek(2))) {
      let i = this.pos + 2;
      while (i < this.cps.length && this.isLetter(this.cps[i])) this.cflags = applyOption(this.cflags, String.fromCodePoint(this.cps[i++]!), true);
      if (this.cps[i] !== 0x29) throw badRegex('invalid embedded option');
      this.pos = i + 1;
    }
  }

  private alternation(): string {
    let out = this.branch();
    while (this.peek() === 0x7c) {
      this.pos++;
      this.choices = true;
      out += `|${this.branch()}`;
    }
    return out;
  }

  private branch(): string {
    let out = '';
    for (;;) {
      this.skipExpanded();
      const c = this.peek();
      if (c === undefined || c === 0x7c || c === 0x29) return out;
      if (this.isQuantifierStart()) throw badRegex('quantifier operand invalid');
      const atom = this.atom();
      this.skipExpanded();
      if (this.isQuantifierStart()) {
        if (atom.constraint) throw badRegex('quantifier operand invalid');
        this.choices = true;
        out += atom.text + this.quantifier();
        this.skipExpanded();
        if (this.isQuantifierStart()) throw badRegex('quantifier operand invalid');
      } else {
        out += atom.text;
      }
    }
  }

  private isQuantifierStart(): boolean {
    const c = this.peek();
    return c === 0x2a || c === 0x2b || c === 0x3f || (c === 0x7b && this.isDigit(this.peek(1)));
  }

  private quantifier(): string {
    const c = this.cps[this.pos++]!;
    let q: string;
    if (c === 0x7b) {
      const m = this.number();
      let n: number | null = m;
      let text = `{${m}`;
      if (this.peek() === 0x2c) {
        this.pos++;
        n = this.isDigit(this.peek()) ? this.number() : null;
        text += n === null ? ',' : `,${n}`;
      }
      if (this.peek() !== 0x7d) throw badRegex('braces {} not balanced');
      this.pos++;
      if (m > DUP_MAX || (n !== null && (n > DUP_MAX || n < m))) throw badRegex('invalid repetition count(s)');
      q = `${text}}`;
    } else {
      q = String.fromCodePoint(c);
    }
    if (this.peek() === 0x3f) {
      this.pos++;
      q += '?';
    }
    return q;
  }

  private number(): number {
    let v = 0;
    let digits = 0;
    while (this.isDigit(this.peek())) {
      v = v * 10 + (this.cps[this.pos++]! - 0x30);
      if (++digits > 6) throw badRegex('invalid repetition count(s)');
    }
    return v;
  }

  /** One atom; `constraint` atoms (anchors, lookarounds, word boundaries) take no quantifier. */
  private atom(): { text: string; constraint: boolean } {
    const c = this.cps[this.pos++]!;
    switch (c) {
      case 0x28:
        return this.group();
      case 0x5b:
        if (this.startsWithAt(this.pos - 1, '[[:<:]]') || this.startsWithAt(this.pos - 1, '[[:>:]]')) {
          const start = this.cps[this.pos + 2] === 0x3c;
          this.pos += 6;
          return { text: this.notLinear(start ? WORD_START : WORD_END), constraint: true };
        }
        return { text: readBracket(this, this.utf16), constraint: false };
      case 0x2e:
        this.wide = true;
        if (this.utf16 !== null) return { text: utf16Source(this.cflags & RE_NLSTOP ? ALL_BUT_NEWLINE : ALL, this.utf16), constraint: false };
        return { text: this.cflags & RE_NLSTOP ? '[^\\n]' : '.', constraint: false };
      case 0x5e:
        return { text: this.cflags & RE_NLANCH ? this.notLinear('(?<![^\\n])') : '^', constraint: true };
      case 0x24:
        return { text: this.cflags & RE_NLANCH ? this.notLinear('(?![^\\n])') : '$', constraint: true };
      case 0x5c:
        return this.escape();
      default:
        return { text: this.literal(c), constraint: false };
    }
  }

  private group(): { text: string; constraint: boolean } {
    let open = '(';
    let constraint = false;
    if (this.peek() === 0x3f) {
      const kinds = ['?:', '?=', '?!', '?<=', '?<!'];
      const kind = kinds.find((k) => this.startsWith(k));
      if (kind === undefined) throw badRegex('quantifier operand invalid');
      this.pos += kind.length;
      open = `(${kind}`;
      constraint = kind !== '?:';
      if (constraint) this.notLinear(open);
    } else if (this.lookaround > 0) {
      open = '(?:'; // parentheses inside a lookahead or lookbehind do not capture in PostgreSQL
    } else {
      this.groups++;
    }
    if (constraint) this.lookaround++;
    const inner = this.alternation();
    if (constraint) this.lookaround--;
    if (this.peek() !== 0x29) throw badRegex('parentheses () not balanced');
    this.pos++;
    return { text: `${open}${inner})`, constraint };
  }

  private escape(): { text: string; constraint: boolean } {
    const c = this.peek();
    if (c === undefined) throw badRegex('invalid escape \\ sequence');
    const ch = String.fromCodePoint(c);
    if (!this.isAlnum(c)) {
      this.pos++;
      return { text: this.literal(c), constraint: false };
    }
    if (CONSTRAINT_ESCAPES[ch] !== undefined) {
      this.pos++;
      // \A and \Z are ^ and $; the word constraints are lookarounds.
      const text = CONSTRAINT_ESCAPES[ch];
      return { text: text === '^' || text === '$' ? text : this.notLinear(text), constraint: true };
    }
    if (SHORTHAND[ch] !== undefined) {
      this.pos++;
      if (ch !== 'd') this.wide = true;
      return { text: this.utf16 !== null ? utf16Source(classRanges(SHORTHAND[ch], this.utf16), this.utf16) : SHORTHAND[ch], constraint: false };
    }
    if (c >= 0x31 && c <= 0x39) {
      // A back reference, PostgreSQL's heuristic: one digit, or a number no larger than the groups so far; else octal.
      const save = this.pos;
      const n = this.number();
      if (this.pos === save + 1 || (n > 0 && n <= this.groups)) {
        if (n > this.groups || this.lookaround > 0) throw badRegex('invalid backreference number');
        this.backref = true;
        this.notLinear('a back reference');
        return { text: `(?:\\${n})`, constraint: false };
      }
      this.pos = save;
    }
    return { text: this.literal(this.charEscape()), constraint: false };
  }

  /** A character-entry escape (the backslash read): \n \t \x41 \u0041 \U0001F600 \101 \cX …. */
  charEscape(): number {
    const c = this.cps[this.pos++]!;
    const ch = String.fromCodePoint(c);
    if (CHAR_ESCAPES[ch] !== undefined) return CHAR_ESCAPES[ch];
    if (ch === 'c') {
      const x = this.cps[this.pos++];
      if (x === undefined) throw badRegex('invalid escape \\ sequence');
      return x & 0x1f;
    }
    if (ch === 'x' || ch === 'u' || ch === 'U') {
      const [min, max] = ch === 'x' ? [1, 8] : ch === 'u' ? [4, 4] : [8, 8];
      return this.digitsValue(16, min, max);
    }
    if (c >= 0x30 && c <= 0x37) {
      this.pos--;
      const v = this.digitsValue(8, 1, 3);
      if (v > 0xff) throw badRegex('invalid escape \\ sequence');
      return v;
    }
    throw badRegex('invalid escape \\ sequence');
  }

  private digitsValue(base: number, min: number, max: number): number {
    let v = 0;
    let n = 0;
    while (n < max) {
      const c = this.peek();
      const d = c === undefined ? NaN : parseInt(String.fromCodePoint(c), base);
      if (Number.isNaN(d)) break;
      v = v * base + d;
      n++;
      this.pos++;
    }
    if (n < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) throw badRegex('invalid escape \\ sequence');
    return v;
  }

  /** An ordinary character; case-insensitive, the class of its cases. */
  private literal(cp: number): string {
    if (this.utf16 !== null) {
      const cases = this.cflags & RE_ICASE ? allCases(cp) : [cp];
      if (cases.some((c) => c > 0xff)) this.wide = true;
      return cases.length === 1 ? utf16Char(cases[0]!) : utf16Source(normalize(cases.flatMap((c) => [c, c])), this.utf16);
    }
    if (!(this.cflags & RE_ICASE)) return lit(cp);
    const cases = allCases(cp);
    return cases.length === 1 ? lit(cases[0]!) : `[${cases.map(lit).join('')}]`;
  }

  /**
   * `text` (a lookaround or back reference) in the v form; the UTF-16 form stops here: V8's linear
   * engine takes neither, so that form would backtrack as the v form does and buys nothing.
   */
  private notLinear(text: string): string {
    if (this.utf16 !== null) throw NOT_LINEAR;
    return text;
  }

  /** Expanded syntax (x): white space and #-comments between tokens are not part of the pattern. */
  private skipExpanded(): void {
    if (!(this.cflags & RE_EXPANDED)) return;
    for (;;) {
      const c = this.peek();
      if (c === undefined) return;
      if (/\s/u.test(String.fromCodePoint(c))) this.pos++;
      else if (c === 0x23) {
        while (this.pos < this.cps.length && this.cps[this.pos] !== 0x0a) this.pos++;
      } else return;
    }
  }

  peek(ahead = 0): number | undefined {
    return this.cps[this.pos + ahead];
  }

  private startsWith(text: string): boolean {
    return this.startsWithAt(this.pos, text);
  }

  private startsWithAt(at: number, text: string): boolean {
    for (let i = 0; i < text.length; i++) if (this.cps[at + i] !== text.charCodeAt(i)) return false;
    return true;
  }

  private isDigit(c: number | undefined): boolean {
    return c !== undefined && c >= 0x30 && c <= 0x39;
  }

  private isLetter(c: number | undefined): boolean {
    return c !== undefined && ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a));
  }

  isAlnum(c: number): boolean {
    return this.isDigit(c) || this.isLetter(c);
  }
}

/** Rewrites a PostgreSQL pattern compiled with `cflags` (RE_* bits) as a JavaScript v-mode RegExp's source and flags. */
export function translateRegex(pattern: string, cflags: number): TranslatedRegex {
  return new Translator(pattern, cflags).translate();
}

/**
 * The same pattern for UTF-16 units (regex-utf16.ts; flags 'g'), which V8 runs on its linear-time
 * engine once a match backtracks too much; null when the pattern has a lookaround, a word
 * constraint, a back reference or ^/$ at newlines (n flag): that engine takes none of them. For
 * text whose code points are all at most `limit` (regex-utf16.ts LATIN1, BMP or ANY). Call after
 * translateRegex accepted the pattern (this one does not check it again).
 */
export function translateRegexUtf16(pattern: string, cflags: number, limit: number): TranslatedRegex | null {
  try {
    return new Translator(pattern, cflags, limit).translate();
  } catch (err) {
    if (err === NOT_LINEAR) return null;
    throw err;
  }
}
