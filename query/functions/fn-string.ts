/**
 * String functions (PostgreSQL 15 "String Functions and Operators"). Positions and lengths count
 * characters (code points); case mapping is Unicode's (PostgreSQL with a UTF-8 database).
 */
import { createHash } from 'node:crypto';
import type { QType, QValue } from '../types/contract.js';
import { dataError, outOfRange } from '../types/errors.js';
import { arrayOf, T } from '../types/qtype.js';
import { TEXT_RESULT_CHARS_MAX } from '../types/limits.js';
import { charLength, chars, utf8Length } from '../types/text-order.js';
import { formatElement } from '../types/text-io.js';
import { formatSql } from './format.js';
import type { FnDef, Impl } from './registry.js';

function fn(name: string, params: QType[], ret: QType, impl: Impl): FnDef {
  return { name, params, ret, make: () => impl };
}

const s = (v: QValue | undefined): string => v as string;
const n = (v: QValue | undefined): number => v as number;

/** PostgreSQL's substring(s from start for count): positions before 1 eat into the count. */
export function substring(str: string, start: number, count?: number): string {
  if (count !== undefined && count < 0) throw dataError('negative substring length not allowed', '22011');
  const cs = chars(str);
  const from = Math.max(start, 1);
  const end = count === undefined ? cs.length + 1 : start + count; // exclusive, may overflow past the end
  if (end <= from) return '';
  return cs.slice(from - 1, end - 1).join('');
}

/**
 * Case mapping one character at a time, as PostgreSQL's towupper/towlower do: a character whose
 * full mapping is several characters ('ß' -> 'SS') keeps a single-character mapping or itself.
 */
const SINGLE_UPPER: Record<string, string> = { 'ß': 'ẞ' };
function mapCase(str: string, upper: boolean): string {
  const whole = upper ? str.toUpperCase() : str.toLowerCase();
  if (whole.length === str.length && /^\p{ASCII}*$/u.test(str)) return whole;
  let out = '';
  for (const c of str) {
    const m = upper ? c.toUpperCase() : c.toLowerCase();
    out += Array.from(m).length === 1 ? m : upper ? (SINGLE_UPPER[c] ?? c) : c;
  }
  return out;
}

function initcap(str: string): string {
  let out = '';
  let prevAlnum = false;
  for (const c of str) {
    const alnum = /[\p{L}\p{N}]/u.test(c);
    out += alnum ? mapCase(c, !prevAlnum) : c;
    prevAlnum = alnum;
  }
  return out;
}

function pad(str: string, len: number, fill: string, left: boolean): string {
  checkResultLength(len);
  const cs = chars(str);
  if (len <= 0) return '';
  if (cs.length >= len) return cs.slice(0, len).join('');
  const fc = chars(fill);
  if (fc.length === 0) return str;
  let p = '';
  for (let i = 0; i < len - cs.length; i++) p += fc[i % fc.length];
  return left ? p + str : str + p;
}

function trimChars(str: string, set: string, left: boolean, right: boolean): string {
  const cs = chars(str);
  const drop = new Set(chars(set));
  let a = 0,
    b = cs.length;
  if (left) while (a < b && drop.has(cs[a]!)) a++;
  if (right) while (b > a && drop.has(cs[b - 1]!)) b--;
  return cs.slice(a, b).join('');
}

function leftChars(str: string, k: number): string {
  const cs = chars(str);
  return (k >= 0 ? cs.slice(0, k) : cs.slice(0, Math.max(cs.length + k, 0))).join('');
}

function rightChars(str: string, k: number): string {
  const cs = chars(str);
  return (k >= 0 ? cs.slice(Math.max(cs.length - k, 0)) : cs.slice(Math.min(-k, cs.length))).join('');
}

function splitPart(str: string, delim: string, field: number): string {
  if (field === 0) throw dataError('field position must not be zero', '22023');
  const parts = delim === '' ? [str] : str.split(delim);
  const i = field > 0 ? field - 1 : parts.length + field;
  return i >= 0 && i < parts.length ? parts[i]! : '';
}

function checkResultLength(chars: number): void {
  if (chars > TEXT_RESULT_CHARS_MAX) throw outOfRange('requested length too large', `svcdb builds strings of at most ${TEXT_RESULT_CHARS_MAX} characters.`);
}

function repeat(str: string, count: number): string {
  if (count <= 0) return '';
  checkResultLength(str.length * count);
  return str.repeat(count);
}

function strpos(hay: string, needle: string): number {
  const i = hay.indexOf(needle);
  return i < 0 ? 0 : charLength(hay.slice(0, i)) + 1;
}

function translate(str: string, from: string, to: string): string {
  const f = chars(from),
    t = chars(to);
  let out = '';
  for (const c of chars(str)) {
    const i = f.indexOf(c);
    if (i < 0) out += c;
    else if (i < t.length) out += t[i];
  }
  return out;
}

function quoteIdent(str: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(str) ? str : `"${str.replace(/"/g, '""')}"`;
}

export function quoteLiteral(str: string): string {
  const body = str.replace(/'/g, "''");
  return str.includes('\\') ? `E'${body.replace(/\\/g, '\\\\')}'` : `'${body}'`;
}

function chr(code: number): string {
  if (code === 0) throw dataError('null character not permitted', '54000');
  if (code < 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) throw dataError('requested character too large for encoding: ' + code, '54000');
  return String.fromCodePoint(code);
}

function basicDefs(): FnDef[] {
  const defs: FnDef[] = [];
  for (const name of ['length', 'char_length', 'character_length']) defs.push(fn(name, [T.text], T.int4, ([a]) => charLength(s(a))));
  defs.push(
    fn('octet_length', [T.text], T.int4, ([a]) => utf8Length(s(a))),
    fn('bit_length', [T.text], T.int4, ([a]) => utf8Length(s(a)) * 8),
    fn('lower', [T.text], T.text, ([a]) => mapCase(s(a), false)),
    fn('upper', [T.text], T.text, ([a]) => mapCase(s(a), true)),
    fn('initcap', [T.text], T.text, ([a]) => initcap(s(a))),
    fn('substr', [T.text, T.int4], T.text, ([a, b]) => substring(s(a), n(b))),
    fn('substr', [T.text, T.int4, T.int4], T.text, ([a, b, c]) => substring(s(a), n(b), n(c))),
    fn('substring', [T.text, T.int4], T.text, ([a, b]) => substring(s(a), n(b))),
    fn('substring', [T.text, T.int4, T.int4], T.text, ([a, b, c]) => substring(s(a), n(b), n(c))),
    fn('strpos', [T.text, T.text], T.int4, ([a, b]) => strpos(s(a), s(b))),
    fn('position', [T.text, T.text], T.int4, ([a, b]) => strpos(s(a), s(b))),
    fn('left', [T.text, T.int4], T.text, ([a, b]) => leftChars(s(a), n(b))),
    fn('right', [T.text, T.int4], T.text, ([a, b]) => rightChars(s(a), n(b))),
    fn('lpad', [T.text, T.int4], T.text, ([a, b]) => pad(s(a), n(b), ' ', true)),
    fn('lpad', [T.text, T.int4, T.text], T.text, ([a, b, c]) => pad(s(a), n(b), s(c), true)),
    fn('rpad', [T.text, T.int4], T.text, ([a, b]) => pad(s(a), n(b), ' ', false)),
    fn('rpad', [T.text, T.int4, T.text], T.text, ([a, b, c]) => pad(s(a), n(b), s(c), false)),
    fn('ltrim', [T.text], T.text, ([a]) => trimChars(s(a), ' ', true, false)),
    fn('ltrim', [T.text, T.text], T.text, ([a, b]) => trimChars(s(a), s(b), true, false)),
    fn('rtrim', [T.text], T.text, ([a]) => trimChars(s(a), ' ', false, true)),
    fn('rtrim', [T.text, T.text], T.text, ([a, b]) => trimChars(s(a), s(b), false, true)),
    fn('btrim', [T.text], T.text, ([a]) => trimChars(s(a), ' ', true, true)),
    fn('btrim', [T.text, T.text], T.text, ([a, b]) => trimChars(s(a), s(b), true, true)),
    fn('replace', [T.text, T.text, T.text], T.text, ([a, b, c]) => (s(b) === '' ? s(a) : s(a).split(s(b)).join(s(c)))),
    fn('reverse', [T.text], T.text, ([a]) => chars(s(a)).reverse().join('')),
    fn('repeat', [T.text, T.int4], T.text, ([a, b]) => repeat(s(a), n(b))),
    fn('split_part', [T.text, T.text, T.int4], T.text, ([a, b, c]) => splitPart(s(a), s(b), n(c))),
    fn('starts_with', [T.text, T.text], T.bool, ([a, b]) => s(a).startsWith(s(b))),
    fn('translate', [T.text, T.text, T.text], T.text, ([a, b, c]) => translate(s(a), s(b), s(c))),
    fn('md5', [T.text], T.text, ([a]) => createHash('md5').update(s(a), 'utf8').digest('hex')),
    fn('chr', [T.int4], T.text, ([a]) => chr(n(a))),
    fn('ascii', [T.text], T.int4, ([a]) => (s(a).length === 0 ? 0 : s(a).codePointAt(0)!)),
    fn('quote_ident', [T.text], T.text, ([a]) => quoteIdent(s(a))),
    fn('quote_literal', [T.text], T.text, ([a]) => quoteLiteral(s(a))),
    fn('to_hex', [T.int4], T.text, ([a]) => (n(a) >>> 0).toString(16)),
    fn('to_hex', [T.int8], T.text, ([a]) => BigInt.asUintN(64, a as bigint).toString(16)),
    fn('string_to_array', [T.text, T.text], arrayOf(T.text), ([a, b]) => (s(a) === '' ? [] : b === null ? chars(s(a)) : s(a).split(s(b)))),
  );
  return defs;
}

/** Non-strict variadic functions: NULL arguments are skipped (concat, concat_ws) or printed (format). */
function variadicDefs(): FnDef[] {
  const text = (t: QType, v: QValue): string => formatElement(t, v);
  return [
    {
      name: 'concat',
      params: [],
      variadic: 'any',
      ret: T.text,
      strict: false,
      make: (p) => (args) => args.map((v, i) => (v === null ? '' : text(p[i]!, v))).join(''),
    },
    {
      name: 'concat_ws',
      params: [T.text],
      variadic: 'any',
      ret: T.text,
      strict: false,
      make:
        (p) =>
        ([sep, ...rest]) =>
          sep === null ? null : rest.flatMap((v, i) => (v === null ? [] : [text(p[i + 1]!, v)])).join(sep as string),
    },
    {
      name: 'format',
      params: [T.text],
      variadic: 'any',
      ret: T.text,
      strict: false,
      make:
        (p) =>
        ([f, ...rest]) =>
          f === null
            ? null
            : formatSql(
                f as string,
                rest.map((v, i) => (v === null ? null : text(p[i + 1]!, v))),
              ),
    },
    {
      name: 'quote_nullable',
      params: [T.text],
      ret: T.text,
      strict: false,
      make:
        () =>
        ([a]) =>
          a === null ? 'NULL' : quoteLiteral(a as string),
    },
    {
      name: 'array_to_string',
      params: ['anyarray', T.text],
      ret: T.text,
      make:
        (p) =>
        ([a, d]) =>
          flatten(a!)
            .filter((v) => v !== null)
            .map((v) => text(p[0]!.element!, v))
            .join(d as string),
    },
    {
      name: 'array_to_string',
      params: ['anyarray', T.text, T.text],
      ret: T.text,
      strict: false,
      make:
        (p) =>
        ([a, d, nul]) =>
          a === null || d === null
            ? null
            : flatten(a)
                .flatMap((v) => (v === null ? (nul === null ? [] : [nul as string]) : [text(p[0]!.element!, v)]))
                .join(d as string),
    },
  ];
}

function flatten(v: QValue): QValue[] {
  const out: QValue[] = [];
  const walk = (a: readonly QValue[]): void => {
    for (const e of a)
      if (Array.isArray(e)) walk(e);
      else out.push(e);
  };
  walk(v as readonly QValue[]);
  return out;
}

export const STRING_FN_DEFS: readonly FnDef[] = [...basicDefs(), ...variadicDefs()];
