/**
 * The C collation: strings compare by Unicode code point (= UTF-8 byte order). JavaScript's `<`
 * compares UTF-16 code units, which differs only for supplementary characters against U+E000..U+FFFF.
 */

/** Code point order; -1, 0, 1. */
export function compareText(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate (0xD800-0xDFFF) stands for a code point above 0xFFFF: it outranks any other unit.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** Length in characters (code points), as PostgreSQL's length() counts them. */
export function charLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** True when the string holds no surrogate pairs (then code units are characters). */
export function isBmpOnly(s: string): boolean {
  return !/[\ud800-\udfff]/.test(s);
}

/** The characters (code points) of a string. */
export function chars(s: string): string[] {
  return isBmpOnly(s) ? s.split('') : Array.from(s);
}

/** UTF-8 byte length. */
export function utf8Length(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}
