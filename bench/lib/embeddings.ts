/**
 * The vector benchmarks' data: embedding-like vectors (a LATENT-dim latent mapped to DIMS dims +
 * noise, seeded, so every run and every bench sees the same data), exact cosine ground truth,
 * recall@k, and the raw hnswlib-node baseline's type.
 */
import { createRequire } from 'node:module';
import { seededRandom as rng } from '../../test/helpers/random.js';

export const DIMS = 128;
export const LATENT = 16;
export const K = 10;

/** The part of hnswlib-node's HierarchicalNSW the benches use. */
export interface RawIndex {
  initIndex(opts: { maxElements: number; m: number; efConstruction: number; randomSeed: number }): void;
  addPoint(point: number[], label: number): void;
  setEf(ef: number): void;
  searchKnn(q: number[], k: number, filter?: (label: number) => boolean): { neighbors: number[] };
}
export const hnswlib = createRequire(import.meta.url)('hnswlib-node') as { HierarchicalNSW: new (space: string, dims: number) => RawIndex };

/** `count` embedding-like vectors (seed 42): a LATENT-dim gaussian latent through a fixed basis, plus noise. */
export function embeddings(count: number): Float32Array[] {
  const random = rng(42);
  const gauss = (): number => Math.sqrt(-2 * Math.log(random() + 1e-12)) * Math.cos(2 * Math.PI * random());
  const basis = Array.from({ length: LATENT }, () => Float32Array.from({ length: DIMS }, gauss));
  return Array.from({ length: count }, () => {
    const v = new Float32Array(DIMS);
    for (const row of basis) {
      const z = gauss();
      for (let d = 0; d < DIMS; d++) v[d]! += z * row[d]!;
    }
    for (let d = 0; d < DIMS; d++) v[d]! += 0.5 * gauss();
    return v;
  });
}

/** Cosine distance (1 - cosine similarity). */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0,
    na = 0,
    nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return 1 - dot / Math.sqrt(na * nb);
}

/** Exact top-K row numbers (0-based) among rows passing `keep`. */
export function exactTopK(data: readonly Float32Array[], q: Float32Array, keep: (i: number) => boolean): number[] {
  const scored: [number, number][] = [];
  for (let i = 0; i < data.length; i++) if (keep(i)) scored.push([cosine(data[i]!, q), i]);
  return scored
    .sort((a, b) => a[0] - b[0])
    .slice(0, K)
    .map(([, i]) => i);
}

/** Mean recall@K of `got` against `truth` (one list per query), 4 decimals (no float noise such as 0.9990000000000001). */
export const recallOf = (got: number[][], truth: number[][]): number =>
  Math.round((got.reduce((s, g, i) => s + g.filter((x) => truth[i]!.includes(x)).length, 0) / (truth.length * K)) * 10_000) / 10_000;
