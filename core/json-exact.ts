/**
 * JSONB documents as PostgreSQL keeps them: numbers are numeric (exact, scale kept: 1.0 stays 1.0,
 * 12345678901234567890123 keeps its digits) and the JSON null is a value distinct from SQL NULL.
 * A number whose canonical text a double prints back exactly stays a JS number (the common case:
 * every other layer keeps working on it); any other becomes a JsonNumber holding that text.
 * A top-level JSON null is JSON_NULL (SQL NULL is `null`); inside arrays and objects `null` is the JSON null.
 */

/** A JSON number a double cannot hold exactly: its canonical numeric text ('1.0', '12345678901234567890123'). */
import { randomBytes } from 'node:crypto';

export class JsonNumber {
  constructor(readonly text: string) {}

  /** A plain JSON.stringify sees the nearest double; stringifyJson writes the exact text. */
  toJSON(): number | string {
    return exactMode ? `${MARK}${this.text}${MARK}` : Number(this.text);
  }
}

/** The JSON null as a jsonb value of its own (a top-level `'null'::jsonb`, `'{"a":null}'::jsonb -> 'a'`). */
export class JsonNull {
  toJSON(): null {
    return null;
  }
}

export const JSON_NULL: JsonNull = Object.freeze(new JsonNull());

/** A JSON document (core/values.ts JsonValue). Declared here so values.ts and this file do not import each other. */
export type JsonDocument = null | boolean | number | string | JsonNumber | JsonNull | JsonDocument[] | { [key: string]: JsonDocument };
type JsonValue = JsonDocument;

/** True for both spellings of the JSON null (JSON_NULL at top level, `null` inside containers). */
export function isJsonNull(v: unknown): boolean {
  return v === null || v === JSON_NULL;
}

// The marker of a number's text inside stringified output: control characters (JSON.stringify escapes
// them, so the marker shows as \u0001...) around a random per-process tag, so no stored string can forge it.
const TAG = randomBytes(9).toString('base64url');
const MARK = `\u0001${TAG}\u0001`;
const MARK_ESCAPED_START = `"\\u0001${TAG}\\u0001`;
const MARK_ESCAPED = new RegExp(`"\\\\u0001${TAG}\\\\u0001([-0-9.]*)\\\\u0001${TAG}\\\\u0001"`, 'g');
let exactMode = false;

/** JSON.stringify that writes JsonNumber texts as the numbers they are (storage, wire). */
export function stringifyJson(value: unknown, space?: number): string {
  exactMode = true;
  let text: string;
  try {
    text = JSON.stringify(value, undefined, space);
  } finally {
    exactMode = false;
  }
  return text !== undefined && text.includes(MARK_ESCAPED_START) ? text.replace(MARK_ESCAPED, '$1') : text;
}

/** A JSON number token as PostgreSQL's numeric text: plain notation, scale kept ('1.50'), '1e2' -> '100'. */
export function canonicalNumberText(token: string): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(token);
  if (m === null) throw new SyntaxError(`bad JSON number ${token}`);
  const frac = m[3] ?? '';
  const exp = m[4] === undefined ? 0 : Number(m[4]);
  if (!Number.isSafeInteger(exp) || Math.abs(exp) > 1_000_000) throw new RangeError('value overflows numeric format');
  const scale = Math.max(0, frac.length - exp);
  let digits = m[2]! + frac; // value = digits * 10^(exp - frac.length)
  const shift = exp - frac.length + scale; // digits * 10^shift has `scale` fraction digits
  if (shift > 0) digits += '0'.repeat(shift);
  else if (shift < 0) digits = digits.slice(0, digits.length + shift);
  digits = digits.padStart(scale + 1, '0');
  let intPart = digits.slice(0, digits.length - scale).replace(/^0+(?=\d)/, '');
  const fracPart = digits.slice(digits.length - scale);
  const zero = /^0*$/.test(intPart + fracPart);
  if (intPart === '') intPart = '0';
  const sign = m[1] === '-' && !zero ? '-' : '';
  return scale > 0 ? `${sign}${intPart}.${fracPart}` : `${sign}${intPart}`;
}

/** A JSON number as PostgreSQL's numeric prints it: plain notation, never an exponent. */
export function formatJsonNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return Object.is(n, -0) ? '0' : String(n);
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(n.toExponential())!;
  const sign = m[1]!,
    digits = m[2]! + (m[3] ?? ''),
    exp = Number(m[4]);
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  if (digits.length <= exp + 1) return sign + digits + '0'.repeat(exp + 1 - digits.length);
  return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
}

/** The run-time form of a JSON number token: a double when it prints back as the canonical text. */
export function jsonNumber(token: string): number | JsonNumber {
  const text = canonicalNumberText(token);
  const n = Number(text);
  return Number.isFinite(n) && formatJsonNumber(n) === text ? n : new JsonNumber(text);
}

// JSON.parse keeps every number exactly when each is a plain decimal without trailing fraction zeros
// and of at most 15 digits (a double prints such a number back as written). ALL_PLAIN matches texts made
// of strings, other punctuation and such numbers only; MANY_DIGITS finds 16 digits in a row (a dot allowed).
const MANY_DIGITS = /(?:\d\.?){16}/;
const ALL_PLAIN = /^(?:[^"\d-]|"(?:[^"\\]|\\.)*"|-?(?:0|[1-9]\d*)(?:\.\d*[1-9])?(?![\d.eE]))*$/;

function needsExactParse(text: string): boolean {
  return MANY_DIGITS.test(text) || !ALL_PLAIN.test(text);
}

/** Parses JSON text keeping numbers exact; a top-level null is JSON_NULL. Throws SyntaxError like JSON.parse. */
export function parseJsonExact(text: string): JsonValue {
  // JSON.parse is ~15x faster than the exact parser: used whenever every number reads back from its double.
  const v = (needsExactParse(text) ? new ExactParser(text).document() : JSON.parse(text)) as JsonValue;
  return v === null ? JSON_NULL : v;
}

type Json = JsonValue;

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
// Raw control characters inside are refused by the JSON.parse that decodes the token.
const STRING = /"(?:[^"\\]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const WHITESPACE = /[ \t\n\r]*/y;

/** Strict JSON (RFC 8259), as JSON.parse, except that numbers come back through jsonNumber. */
class ExactParser {
  private pos = 0;
  constructor(private readonly text: string) {}

  document(): Json {
    const v = this.value();
    this.skip();
    if (this.pos !== this.text.length) this.fail();
    return v;
  }

  private fail(): never {
    throw new SyntaxError(`Unexpected token in JSON at position ${this.pos}`);
  }

  private skip(): void {
    WHITESPACE.lastIndex = this.pos;
    WHITESPACE.exec(this.text);
    this.pos = WHITESPACE.lastIndex;
  }

  private token(re: RegExp): string | null {
    re.lastIndex = this.pos;
    const m = re.exec(this.text);
    if (m === null) return null;
    this.pos = re.lastIndex;
    return m[0];
  }

  private string(): string {
    const t = this.token(STRING);
    if (t === null) this.fail();
    return JSON.parse(t) as string;
  }

  private value(): Json {
    this.skip();
    const c = this.text[this.pos];
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === '"') return this.string();
    for (const [word, v] of LITERALS) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return v;
      }
    }
    const n = this.token(NUMBER);
    if (n === null) this.fail();
    return jsonNumber(n) as Json;
  }

  private array(): Json[] {
    this.pos++;
    const out: Json[] = [];
    this.skip();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return out;
    }
    for (;;) {
      out.push(this.value());
      this.skip();
      const c = this.text[this.pos++];
      if (c === ']') return out;
      if (c !== ',') this.fail();
    }
  }

  private object(): { [key: string]: Json } {
    this.pos++;
    const out: { [key: string]: Json } = {};
    this.skip();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.skip();
      const key = this.string();
      this.skip();
      if (this.text[this.pos++] !== ':') this.fail();
      const v = this.value();
      setOwn(out, key, v);
      this.skip();
      const c = this.text[this.pos++];
      if (c === '}') return out;
      if (c !== ',') this.fail();
    }
  }
}

const LITERALS: readonly (readonly [string, Json])[] = [
  ['true', true],
  ['false', false],
  ['null', null],
];

/**
 * Sets `key` as an own, enumerable property, also when it is `__proto__`: a plain assignment of
 * that name would set the object's prototype instead (the value vanishes from JSON, or an object
 * value becomes the prototype). A column or JSON key may be named so.
 */
export function setOwn(o: object, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  else (o as Record<string, unknown>)[key] = value;
}
