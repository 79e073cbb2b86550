/**
 * The template of to_date / to_timestamp cut into nodes the way PostgreSQL's parse_format
 * (formatting.c) cuts it, so the reader in to-date.ts can walk the input node by node as
 * PostgreSQL does. Keywords are matched case-sensitively in PostgreSQL's spellings (YYYY or yyyy,
 * Month or MONTH or month; "Hh24" is no keyword but three literal characters), longest first.
 * Keywords the reader does not take (IYYY, Q, WW, J, TZ, the TM prefix, the TH and SP suffixes, …)
 * are refused as not supported: read as literal text they would give a wrong date.
 */
import { SvcError } from '../../core/errors.js';

/** A numeric field: its canonical name and its width when the next node is a digit. */
export interface NumberNode {
  kind: 'number';
  key: string;
  /** As written in the template (for error messages). */
  written: string;
  width: number;
  /** FM prefix: read as many digits as there are. */
  fm: boolean;
}
export interface WordNode {
  kind: 'word';
  key: 'MONTH' | 'MON' | 'DAY' | 'DY' | 'AM' | 'A.M.';
  written: string;
}
/** FX: from here on, fixed format (no skipping of spaces, one input character per separator). */
export interface FxNode {
  kind: 'fx';
}
/** A separator (ASCII punctuation), a space, or any other character (letters, quoted text). */
export interface CharNode {
  kind: 'separator' | 'space' | 'char';
  /** Only a single digit character matters (is_next_separator); kept for that. */
  text: string;
}
export type TemplateNode = NumberNode | WordNode | FxNode | CharNode;

const NUMBER_WIDTHS: Record<string, number> = {
  YYYY: 4,
  HH24: 2,
  HH12: 2,
  DDD: 3,
  YY: 2,
  MM: 2,
  DD: 2,
  HH: 2,
  MI: 2,
  SS: 2,
  MS: 3,
  US: 6,
  FF1: 1,
  FF2: 2,
  FF3: 3,
  FF4: 4,
  FF5: 5,
  FF6: 6,
};
/** PM and P.M. read the same words as AM and A.M. (either half of the day). */
const WORD_KEYS: Record<string, WordNode['key']> = {
  MONTH: 'MONTH',
  MON: 'MON',
  DAY: 'DAY',
  DY: 'DY',
  AM: 'AM',
  PM: 'AM',
  'A.M.': 'A.M.',
  'P.M.': 'A.M.',
};
/** PostgreSQL's other to_date keywords: refused. */
const REFUSED = [
  'A.D.',
  'AD',
  'B.C.',
  'BC',
  'CC',
  'D',
  'IDDD',
  'ID',
  'IW',
  'IYYY',
  'IYY',
  'IY',
  'I',
  'J',
  'OF',
  'Q',
  'RM',
  'SSSSS',
  'SSSS',
  'TZH',
  'TZM',
  'TZ',
  'WW',
  'W',
  'Y,YYY',
  'YYY',
  'Y',
];
/** Keywords PostgreSQL also spells with a capital first letter only. */
const CAPITALISED = ['MONTH', 'MON', 'DAY', 'DY'];

/** Every spelling PostgreSQL knows → its canonical (upper-case) name, longest spellings first. */
const SPELLINGS: [string, string][] = (() => {
  const all = [...Object.keys(NUMBER_WIDTHS), ...Object.keys(WORD_KEYS), ...REFUSED, 'FX'];
  const out: [string, string][] = [];
  for (const key of all) {
    out.push([key, key], [key.toLowerCase(), key]);
    if (CAPITALISED.includes(key)) out.push([key[0] + key.slice(1).toLowerCase(), key]);
  }
  return out.sort((a, b) => b[0].length - a[0].length);
})();

function refuse(what: string): SvcError {
  return new SvcError('INVALID_QUERY', `template pattern "${what}" in to_date/to_timestamp is not supported`, { reason: 'unsupported' });
}

/** PostgreSQL's is_separator_char: printable ASCII that is not a letter or a digit. */
export function isSeparatorChar(c: string | undefined): boolean {
  return c !== undefined && c > ' ' && c < '\x7f' && !/[A-Za-z0-9]/.test(c);
}

/** C's isspace. */
export function isSpaceChar(c: string | undefined): boolean {
  return c === ' ' || c === '\t' || c === '\n' || c === '\v' || c === '\f' || c === '\r';
}

function literal(c: string): CharNode {
  return { kind: isSeparatorChar(c) ? 'separator' : isSpaceChar(c) ? 'space' : 'char', text: c };
}

export function parseTemplate(format: string): TemplateNode[] {
  const nodes: TemplateNode[] = [];
  let i = 0;
  while (i < format.length) {
    let fm = false;
    const prefix = format.slice(i, i + 2);
    if (prefix === 'FM' || prefix === 'fm') {
      fm = true;
      i += 2;
    } else if (prefix === 'TM' || prefix === 'tm') throw refuse(prefix);
    if (i >= format.length) break;
    const hit = SPELLINGS.find(([spelling]) => format.startsWith(spelling, i));
    if (hit) {
      const [written, key] = hit;
      i += written.length;
      const postfix = format.slice(i, i + 2);
      if (postfix === 'TH' || postfix === 'th' || postfix === 'SP') throw refuse(written + postfix);
      if (key in NUMBER_WIDTHS) nodes.push({ kind: 'number', key, written, width: NUMBER_WIDTHS[key]!, fm });
      else if (key in WORD_KEYS) nodes.push({ kind: 'word', key: WORD_KEYS[key]!, written });
      else if (key === 'FX') nodes.push({ kind: 'fx' });
      else throw refuse(written);
      continue;
    }
    if (format[i] === '"') {
      // Quoted text: each character is a literal (never a separator); a backslash quotes the next.
      i++;
      while (i < format.length) {
        if (format[i] === '"') {
          i++;
          break;
        }
        if (format[i] === '\\' && i + 1 < format.length) i++;
        const c = String.fromCodePoint(format.codePointAt(i)!);
        nodes.push({ kind: 'char', text: c });
        i += c.length;
      }
      continue;
    }
    // Outside quotes a backslash is special only before a double quote.
    if (format[i] === '\\' && format[i + 1] === '"') i++;
    const c = String.fromCodePoint(format.codePointAt(i)!);
    nodes.push(literal(c));
    i += c.length;
  }
  return nodes;
}
