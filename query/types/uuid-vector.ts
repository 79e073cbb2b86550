/** UUID and pgvector VECTOR text I/O. */
import { dataError, invalidInput } from './errors.js';
import { formatFloat } from './scalar-text.js';

/** uuid_in: 32 hex digits, optional braces, a hyphen allowed after any group of four; output lower-case canonical. */
export function parseUuid(text: string): string {
  let s = text.trim();
  if (s.startsWith('{')) {
    if (!s.endsWith('}')) throw invalidInput('uuid', text);
    s = s.slice(1, -1);
  }
  let hex = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '-' && hex.length > 0 && hex.length % 4 === 0 && i + 1 < s.length && s[i + 1] !== '-') continue;
    if (!/[0-9a-fA-F]/.test(c)) throw invalidInput('uuid', text);
    hex += c;
  }
  if (hex.length !== 32) throw invalidInput('uuid', text);
  return formatUuidHex(hex.toLowerCase());
}

export function formatUuidHex(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** pgvector's vector_in: '[1,2,3]'. Elements are float4; NaN and infinities are refused. */
export function parseVector(text: string): Float32Array {
  const s = text.trim();
  if (!s.startsWith('[') || !s.endsWith(']')) {
    throw dataError(`invalid input syntax for type vector: "${text}"`, '22P02', 'Vector contents must start with "[".');
  }
  const inner = s.slice(1, -1).trim();
  if (inner === '') throw dataError('vector must have at least 1 dimension', '22000');
  const parts = inner.split(',');
  const out = new Float32Array(parts.length);
  parts.forEach((p, i) => {
    const t = p.trim();
    if (!/^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$|^[+-]?(?:inf|infinity|nan)$/i.test(t)) {
      throw dataError(`invalid input syntax for type vector: "${text}"`, '22P02');
    }
    out[i] = checkVectorElement(Number(/^[+-]?(?:inf|infinity)$/i.test(t) ? (t.startsWith('-') ? -Infinity : Infinity) : /nan/i.test(t) ? NaN : Number(t)));
  });
  return out;
}

export function checkVectorElement(v: number): number {
  if (Number.isNaN(v)) throw dataError('NaN not allowed in vector', '22000');
  const f = Math.fround(v);
  if (!Number.isFinite(f)) throw dataError('infinite value not allowed in vector', '22000');
  return f;
}

/** vector_out: '[1,2.5,3]', each element as float4out prints it. */
export function formatVector(v: Float32Array): string {
  let out = '[';
  for (let i = 0; i < v.length; i++) out += (i > 0 ? ',' : '') + formatFloat(v[i]!, true);
  return out + ']';
}

/** vector(n) typmod check. */
export function checkVectorDimension(v: Float32Array, dimension: number | undefined): Float32Array {
  if (dimension !== undefined && v.length !== dimension) {
    throw dataError(`expected ${dimension} dimensions, not ${v.length}`, '22000');
  }
  return v;
}
