import type { Metric } from './vector-table.js';

/**
 * A search result's score from its distance (the SQL operator's value), higher is nearer for all
 * three: cosine 1 - d (the cosine similarity), l2 1 / (1 + d) (in (0, 1], 1 for the same vector),
 * inner_product -d (the dot product: `<#>` is its negative, as in pgvector).
 */
export function scoreOf(metric: Metric, distance: number): number {
  switch (metric) {
    case 'cosine':
      return 1 - distance;
    case 'l2':
      return 1 / (1 + distance);
    case 'inner_product':
      return -distance;
  }
}
