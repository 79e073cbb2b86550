/**
 * pgvector arithmetic, computed as pgvector does: float (32-bit) accumulation for distances,
 * double for the norm. Different dimensions are an error ('different vector dimensions 3 and 2').
 */
import { dataError } from '../types/errors.js';
import { checkVectorElement } from '../types/uuid-vector.js';

const f = Math.fround;

function sameDims(a: Float32Array, b: Float32Array): void {
  if (a.length !== b.length) throw dataError(`different vector dimensions ${a.length} and ${b.length}`, '22000');
}

/** <-> */
export function l2Distance(a: Float32Array, b: Float32Array): number {
  sameDims(a, b);
  let d = 0;
  for (let i = 0; i < a.length; i++) {
    const diff = f(a[i]! - b[i]!);
    d = f(d + f(diff * diff));
  }
  return Math.sqrt(d);
}

export function innerProduct(a: Float32Array, b: Float32Array): number {
  sameDims(a, b);
  let d = 0;
  for (let i = 0; i < a.length; i++) d = f(d + f(a[i]! * b[i]!));
  return d;
}

/** <=> : 1 - cosine similarity, NaN when a norm is zero. */
export function cosineDistance(a: Float32Array, b: Float32Array): number {
  sameDims(a, b);
  let dot = 0,
    na = 0,
    nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot = f(dot + f(a[i]! * b[i]!));
    na = f(na + f(a[i]! * a[i]!));
    nb = f(nb + f(b[i]! * b[i]!));
  }
  const sim = dot / Math.sqrt(na * nb);
  if (Number.isNaN(sim)) return NaN;
  return 1 - Math.max(-1, Math.min(1, sim));
}

/**
 * cosineDistance's norm of one argument: its squares summed in float (the same accumulation, in the
 * same order): a vector's is the same whatever it is compared with, so a caller comparing one query
 * with many rows computes the query's once (and may keep a row's).
 */
export function float32SquaredNorm(a: Float32Array): number {
  let n = 0;
  for (let i = 0; i < a.length; i++) n = f(n + f(a[i]! * a[i]!));
  return n;
}

/** cosineDistance(a, b) given float32SquaredNorm of each: the same number (its three sums are independent of each other). */
export function cosineDistanceOfNorms(a: Float32Array, b: Float32Array, na: number, nb: number): number {
  sameDims(a, b);
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot = f(dot + f(a[i]! * b[i]!));
  const sim = dot / Math.sqrt(na * nb);
  if (Number.isNaN(sim)) return NaN;
  return 1 - Math.max(-1, Math.min(1, sim));
}

export function l1Distance(a: Float32Array, b: Float32Array): number {
  sameDims(a, b);
  let d = 0;
  for (let i = 0; i < a.length; i++) d = f(d + f(Math.abs(a[i]! - b[i]!)));
  return d;
}

export function vectorNorm(a: Float32Array): number {
  let n = 0;
  for (let i = 0; i < a.length; i++) n += a[i]! * a[i]!;
  return Math.sqrt(n);
}

export function vectorConcat(a: Float32Array, b: Float32Array): Float32Array {
  const out = new Float32Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** Elementwise + - * with pgvector's overflow check. */
export function vectorElementwise(a: Float32Array, b: Float32Array, op: (x: number, y: number) => number): Float32Array {
  sameDims(a, b);
  const out = new Float32Array(a.length);
  for (let i = 0; i < a.length; i++) {
    const v = f(op(a[i]!, b[i]!));
    if (!Number.isFinite(v)) throw dataError('value out of range: overflow', '22003');
    out[i] = v;
  }
  return out;
}

export function l2Normalize(a: Float32Array): Float32Array {
  const n = vectorNorm(a);
  if (n === 0) return new Float32Array(a.length);
  return Float32Array.from(a, (x) => checkVectorElement(x / n));
}
