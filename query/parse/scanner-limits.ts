/**
 * Two limits of PostgreSQL's scanner that svcdb does not share: it truncates identifiers to 63 bytes
 * (NAMEDATALEN), and it reads the text as a C string, so a NUL ends it. svcdb names may be 128
 * characters (its catalog checks them, query/ddl/names.ts) and a NUL must reach that check rather
 * than cut the statement short. So before PostgreSQL's scanner sees a request, each identifier longer
 * than 63 bytes or holding a NUL, and each string literal holding a NUL, is swapped for a short
 * placeholder; the translated statements get the originals back. Requests without such tokens (all
 * but a few) pass through untouched.
 */
import { randomBytes } from 'node:crypto';
import { tokenize, type Token } from './tokens.js';

/** PostgreSQL's NAMEDATALEN - 1. */
const IDENTIFIER_BYTES_MAX = 63;

/** Placeholders of one request: bare placeholder -> the token's value, quoted placeholder -> its source text. */
export interface Swaps {
  readonly values: ReadonlyMap<string, string>;
  readonly texts: ReadonlyMap<string, string>;
}

/** Cheap test: could the request hold a token PostgreSQL's scanner would cut? (False positives only cost a tokenize.) */
function mayNeedSwaps(sql: string): boolean {
  if (sql.includes('\u0000')) return true;
  let run = 0;
  for (let i = 0; i < sql.length; i++) {
    const c = sql.charCodeAt(i);
    if (c === 34) {
      const close = sql.indexOf('"', i + 1);
      if (close < 0) return false;
      if (close - i - 1 > IDENTIFIER_BYTES_MAX / 3) return true;
      i = close;
      run = 0;
      continue;
    }
    const wordy = c > 127 || (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36;
    run = wordy ? run + (c > 127 ? 3 : 1) : 0;
    if (run > IDENTIFIER_BYTES_MAX) return true;
  }
  return false;
}

function needsSwap(t: Token): boolean {
  if (t.kind === 'string') return t.value.includes('\u0000');
  if (t.kind !== 'ident' && t.kind !== 'qident') return false;
  return t.value.includes('\u0000') || Buffer.byteLength(t.value, 'utf8') > IDENTIFIER_BYTES_MAX;
}

/** The request with its long or NUL-bearing tokens swapped out, or null when it has none. */
export function swapOut(sql: string): { readonly sql: string; readonly swaps: Swaps } | null {
  if (!mayNeedSwaps(sql)) return null;
  let tokens: Token[];
  try {
    tokens = tokenize(sql);
  } catch {
    return null; // PostgreSQL's own scanner reports the error
  }
  const swapped = tokens.filter(needsSwap);
  if (swapped.length === 0) return null;
  const nonce = randomBytes(4).toString('hex');
  const values = new Map<string, string>();
  const texts = new Map<string, string>();
  let out = '';
  let pos = 0;
  swapped.forEach((t, n) => {
    const bare = `svc_${nonce}_${n}`;
    const quoted = t.kind === 'string' ? `'${bare}'` : `"${bare}"`;
    values.set(bare, t.value);
    texts.set(quoted, t.text);
    out += sql.slice(pos, t.start) + quoted;
    pos = t.end;
  });
  return { sql: out + sql.slice(pos), swaps: { values, texts } };
}

/** A copy of a translated tree (or text) with the original tokens back in place of the placeholders. */
export function swapBack<T>(value: T, swaps: Swaps): T {
  return restore(value, swaps) as T;
}

function restore(value: unknown, swaps: Swaps): unknown {
  if (typeof value === 'string') {
    const exact = swaps.values.get(value);
    if (exact !== undefined) return exact;
    let text = value;
    for (const [quoted, original] of swaps.texts) if (text.includes(quoted)) text = text.replaceAll(quoted, original);
    return text;
  }
  if (Array.isArray(value)) return value.map((v) => restore(v, swaps));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = restore(v, swaps);
    return out;
  }
  return value;
}
