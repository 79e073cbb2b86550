/**
 * Sets of code points, and their spelling in a RegExp without the u or v flag (UTF-16 units), for
 * the linear form of a pattern (regex-translate.ts `linear`).
 *
 * Why: V8 can fall back to its linear-time engine when a match backtracks too much (pattern.ts sets
 * the flag), which ends the exponential cases ('(a+)+$' against 'aaaa…!'), but that engine takes no
 * u or v flag. So a pattern is also written for UTF-16 units: a character outside the BMP as its
 * surrogate pair, a class as its BMP ranges plus its pairs. Such a form never matches half a pair,
 * so on a well-formed string (no lone surrogates; pattern.ts checks) it finds what the v form finds,
 * at the same unit indexes: no atom can start inside a pair.
 *
 * A set is a sorted array of disjoint inclusive ranges [lo0, hi0, lo1, hi1, …] that never holds a
 * surrogate code point (U+D800–U+DFFF: on a well-formed string there is none to match).
 */

export type Ranges = readonly number[];

const SURROGATE_LO = 0xd800;
const SURROGATE_HI = 0xdfff;
const MAX_CP = 0x10ffff;

/** Sorts and merges [lo, hi] pairs, leaving the surrogate code points out. */
export function normalize(pairs: readonly number[]): Ranges {
  const spans: [number, number][] = [];
  for (let i = 0; i < pairs.length; i += 2) {
    const lo = pairs[i]!;
    const hi = pairs[i + 1]!;
    // Cut the surrogate block out of the span.
    if (lo < SURROGATE_LO) spans.push([lo, Math.min(hi, SURROGATE_LO - 1)]);
    if (hi > SURROGATE_HI) spans.push([Math.max(lo, SURROGATE_HI + 1), hi]);
  }
  spans.sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  for (const [lo, hi] of spans) {
    if (out.length > 0 && lo <= out[out.length - 1]! + 1) out[out.length - 1] = Math.max(out[out.length - 1]!, hi);
    else out.push(lo, hi);
  }
  return out;
}

/** Every code point not in `r` (and no surrogate). */
export function complement(r: Ranges): Ranges {
  const pairs: number[] = [];
  let next = 0;
  for (let i = 0; i < r.length; i += 2) {
    if (r[i]! > next) pairs.push(next, r[i]! - 1);
    next = r[i + 1]! + 1;
  }
  if (next <= MAX_CP) pairs.push(next, MAX_CP);
  return normalize(pairs);
}

export const ALL: Ranges = normalize([0, MAX_CP]);

/**
 * The limits a UTF-16 form is written for: text whose characters are all Latin-1 (the usual case)
 * needs only that part of each class, which keeps V8's linear engine fast (it tries every range
 * of a class at every character: \p{Alphabetic} has some 760); text without surrogates needs no
 * pairs (a class's pairs are an alternation of hundreds of branches for alpha, tried at every
 * character the class does not take: 5x the CPU of a match on such text); any other well-formed
 * text: all.
 */
export const LATIN1 = 0xff;
export const BMP = 0xffff;
export const ANY = MAX_CP;

/** The code points of chunk [lo, hi] as a string (all of one UTF-16 width: no chunk spans U+FFFF). */
function chunkText(lo: number, hi: number): string {
  const width = lo > 0xffff ? 2 : 1;
  const units = new Uint16Array((hi - lo + 1) * width);
  for (let c = lo, i = 0; c <= hi; c++) {
    if (width === 1) units[i++] = c;
    else {
      units[i++] = 0xd800 + ((c - 0x10000) >> 10);
      units[i++] = 0xdc00 + ((c - 0x10000) & 0x3ff);
    }
  }
  return UTF16.decode(units);
}

const UTF16 = new TextDecoder('utf-16le');

/** The code points in order, cut where the UTF-16 width changes and around the surrogates. */
const CHUNKS: readonly [number, number][] = [
  [0, 0xff],
  [0x100, SURROGATE_LO - 1],
  [SURROGATE_HI + 1, 0xffff],
  ...Array.from({ length: 16 }, (_, i): [number, number] => [(i + 1) * 0x10000, (i + 1) * 0x10000 + 0xffff]),
];

const classCache = new Map<string, Ranges>();

/**
 * The code points a v-mode class operand matches (`\p{Alphabetic}`, `[\p{White_Space}--[…]]`, `\d`):
 * found once per operand by letting JavaScript itself match it against every code point, so the
 * set is exactly what the v form matches. The operands come from regex-syntax.ts's fixed tables,
 * so there are a few dozen at most; each takes some milliseconds, once per process. With `limit`
 * LATIN1 only the code points up to U+00FF are looked at (and returned).
 */
export function classRanges(operand: string, limit: number): Ranges {
  const key = `${limit}:${operand}`;
  let r = classCache.get(key);
  if (r === undefined) {
    const re = new RegExp(`[${operand}]+`, 'gv');
    const pairs: number[] = [];
    for (const [lo, hi] of CHUNKS) {
      if (lo > limit) break;
      const width = lo > 0xffff ? 2 : 1;
      for (const m of chunkText(lo, hi).matchAll(re)) {
        const first = lo + m.index / width;
        pairs.push(first, first + m[0].length / width - 1);
      }
    }
    r = normalize(pairs);
    classCache.set(key, r);
  }
  return r;
}

function unit(u: number): string {
  return `\\u${u.toString(16).padStart(4, '0')}`;
}

function unitRange(lo: number, hi: number): string {
  return lo === hi ? unit(lo) : `${unit(lo)}-${unit(hi)}`;
}

/** The code points of `r` up to `limit`. */
function upTo(r: Ranges, limit: number): Ranges {
  if (r.length === 0 || r[r.length - 1]! <= limit) return r;
  const out: number[] = [];
  for (let i = 0; i < r.length && r[i]! <= limit; i += 2) out.push(r[i]!, Math.min(r[i + 1]!, limit));
  return out;
}

/**
 * Source matching exactly one code point of `r` (up to `limit`) as UTF-16 units: a class of its
 * BMP part, and for the rest its surrogate pairs, grouped by lead unit ([\ud800-\ud83f][\udc00-\udfff]
 * and the like).
 */
export function utf16Source(all: Ranges, limit: number): string {
  const r = upTo(all, limit);
  let bmp = '';
  // [leadLo, leadHi, trailLo, trailHi]: lead units leadLo..leadHi each followed by trailLo..trailHi.
  const pairs: [number, number, number, number][] = [];
  const addPair = (lead: number, tLo: number, tHi: number): void => {
    const last = pairs[pairs.length - 1];
    if (last !== undefined && last[1] === lead - 1 && last[2] === tLo && last[3] === tHi) last[1] = lead;
    else pairs.push([lead, lead, tLo, tHi]);
  };
  for (let i = 0; i < r.length; i += 2) {
    const lo = r[i]!;
    const hi = r[i + 1]!;
    if (lo <= 0xffff) bmp += unitRange(lo, Math.min(hi, 0xffff));
    if (hi <= 0xffff) continue;
    const a = Math.max(lo, 0x10000) - 0x10000;
    const b = hi - 0x10000;
    const leadA = 0xd800 + (a >> 10);
    const leadB = 0xd800 + (b >> 10);
    const trailA = 0xdc00 + (a & 0x3ff);
    const trailB = 0xdc00 + (b & 0x3ff);
    if (leadA === leadB) {
      addPair(leadA, trailA, trailB);
      continue;
    }
    addPair(leadA, trailA, 0xdfff);
    for (let lead = leadA + 1; lead < leadB; lead++) addPair(lead, 0xdc00, 0xdfff);
    addPair(leadB, 0xdc00, trailB);
  }
  const branches = pairs.map(([l0, l1, t0, t1]) => `${l0 === l1 ? unit(l0) : `[${unitRange(l0, l1)}]`}${t0 === t1 ? unit(t0) : `[${unitRange(t0, t1)}]`}`);
  if (bmp !== '' || branches.length === 0) branches.unshift(`[${bmp}]`);
  return branches.length === 1 ? branches[0]! : `(?:${branches.join('|')})`;
}

/**
 * One code point as UTF-16 source: itself when an ASCII letter or digit, else its unit escapes (a
 * pair grouped, so a quantifier takes both). A lone surrogate in the pattern matches nothing: in
 * well-formed text every surrogate is half of a character.
 */
export function utf16Char(cp: number): string {
  if (cp >= SURROGATE_LO && cp <= SURROGATE_HI) return '[]';
  if ((cp >= 0x30 && cp <= 0x39) || (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a)) return String.fromCodePoint(cp);
  if (cp <= 0xffff) return unit(cp);
  const v = cp - 0x10000;
  return `(?:${unit(0xd800 + (v >> 10))}${unit(0xdc00 + (v & 0x3ff))})`;
}
