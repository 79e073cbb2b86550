import type { SparseValues } from './data-common.js';
import type { PineconeMetric } from './index-store.js';

/**
 * Pinecone's score from the SQL distance: cosine similarity (1 - cosine distance), the squared
 * euclidean distance (Pinecone's euclidean score; nearest first), the dot product (-(<#>)).
 */
export function pineconeScore(metric: PineconeMetric, distance: number): number {
  switch (metric) {
    case 'cosine':
      return 1 - distance;
    case 'euclidean':
      return distance * distance;
    case 'dotproduct':
      return -distance;
  }
}

/** Dot product of two sparse vectors (indices need not be sorted). */
export function sparseDot(a: SparseValues, b: SparseValues): number {
  const weights = new Map<number, number>();
  a.indices.forEach((index, i) => weights.set(index, (weights.get(index) ?? 0) + (a.values[i] ?? 0)));
  let sum = 0;
  b.indices.forEach((index, i) => {
    sum += (weights.get(index) ?? 0) * (b.values[i] ?? 0);
  });
  return sum;
}

const isSparse = (value: unknown): value is SparseValues =>
  typeof value === 'object' && value !== null && Array.isArray((value as SparseValues).indices) && Array.isArray((value as SparseValues).values);

/** Hybrid scores over the dense candidates: dense dot product + sparse dot product, highest first. */
export function hybridRerank<T extends { row: Record<string, unknown>; score: number }>(candidates: readonly T[], query: SparseValues): T[] {
  return candidates
    .map((c) => {
      const stored = c.row['sparse_values'];
      return { ...c, score: c.score + (isSparse(stored) ? sparseDot(query, stored) : 0) };
    })
    .sort((x, y) => y.score - x.score);
}
