/**
 * Array text I/O as PostgreSQL's array_in/array_out: '{1,2,NULL}', '{{1,2},{3,4}}', elements
 * double-quoted when empty, 'NULL', or holding braces, commas, quotes, backslashes or spaces.
 * Arrays of arrays are multi-dimensional (nested JS arrays), except where the element type's own
 * value is a JS array (jsonb).
 */
import type { QType, QValue } from './contract.js';
import { dataError } from './errors.js';

/** Formats one element's text, quoting it when array_out would. */
function quoteElement(s: string): string {
  if (s === '' || /^null$/i.test(s) || /[{},"\\\s]/.test(s)) {
    return `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  }
  return s;
}

/** array_out. `formatElement` gives the element type's text of a non-null element. */
export function formatArray(value: readonly QValue[], element: QType, formatElement: (v: QValue) => string): string {
  const nested = element.name !== 'jsonb';
  const walk = (arr: readonly QValue[]): string =>
    `{${arr
      .map((v) => {
        if (v === null) return 'NULL';
        if (nested && Array.isArray(v)) return walk(v as readonly QValue[]);
        return quoteElement(formatElement(v));
      })
      .join(',')}}`;
  return walk(value);
}

/** array_in. `parseElement` is the element type's input function. */
export function parseArray(text: string, parseElement: (s: string) => QValue): QValue[] {
  const bad = (detail: string): Error => dataError(`malformed array literal: "${text}"`, '22P02', detail);
  let s = text.trim();
  // Optional dimension decoration '[1:3]={...}' is accepted and ignored.
  const dims = /^(\[\s*-?\d+\s*(:\s*-?\d+\s*)?\])+\s*=\s*/.exec(s);
  if (dims) s = s.slice(dims[0].length);
  let pos = 0;
  const skipWs = (): void => {
    while (pos < s.length && /\s/.test(s[pos]!)) pos++;
  };
  // Each level's shape ('2,3' for two sub-arrays of three, '' for scalars): siblings must agree,
  // since PostgreSQL's arrays are rectangular.
  const shapes: string[] = [];
  const parseLevel = (): QValue[] => {
    if (s[pos] !== '{') throw bad('Array value must start with "{" or dimension information.');
    pos++;
    const out: QValue[] = [];
    let shape: string | null = null;
    const same = (next: string): void => {
      if (shape !== null && shape !== next) throw bad('Multidimensional arrays must have sub-arrays with matching dimensions.');
      shape = next;
    };
    skipWs();
    if (s[pos] === '}') {
      pos++;
      shapes.push('0');
      return out;
    }
    for (;;) {
      skipWs();
      if (s[pos] === '{') {
        out.push(parseLevel());
        same(shapes.pop()!);
      } else {
        out.push(parseScalar());
        same('');
      }
      skipWs();
      const c = s[pos];
      if (c === ',') {
        pos++;
        continue;
      }
      if (c === '}') {
        pos++;
        shapes.push(`${out.length},${shape ?? ''}`);
        return out;
      }
      throw bad('Unexpected end of input.');
    }
  };
  const parseScalar = (): QValue => {
    if (s[pos] === '"') {
      pos++;
      let v = '';
      for (;;) {
        if (pos >= s.length) throw bad('Unexpected end of input.');
        const c = s[pos++]!;
        if (c === '\\') {
          v += s[pos++] ?? '';
          continue;
        }
        if (c === '"') break;
        v += c;
      }
      return parseElement(v);
    }
    let v = '';
    let sawEscape = false;
    while (pos < s.length && s[pos] !== ',' && s[pos] !== '}') {
      const c = s[pos++]!;
      if (c === '{' || c === '"') throw bad('Unexpected "' + c + '" character.');
      if (c === '\\') {
        v += s[pos++] ?? '';
        sawEscape = true;
        continue;
      }
      v += c;
    }
    const trimmed = sawEscape ? v : v.trim();
    if (trimmed === '') throw bad('Unexpected "," character.');
    if (!sawEscape && /^null$/i.test(trimmed)) return null;
    return parseElement(trimmed);
  };
  const result = parseLevel();
  skipWs();
  if (pos !== s.length) throw bad('Junk after closing right brace.');
  // '{{},{}}' has no elements: PostgreSQL makes it the empty array.
  return /^[0-9,]*$/.test(shapes[0] ?? '') && /(^|,)0(,|$)/.test(shapes[0] ?? '') ? [] : result;
}
