/** The vector settings of core/settings.ts (a Config satisfies it). */
export interface VectorLimits {
  readonly vectorDimensionsMax: number;
  readonly vectorIndexRecordsMax: number;
  readonly vectorMetadataBytesMax: number;
  readonly vectorUpsertCountMax: number;
  readonly resultRowsMax: number;
  readonly queryTimeoutMsMax: number;
  /** Bounds a filter's SQL text, as any query's. */
  readonly queryTextBytesMax: number;
}

/** top_k / topK: the spec's default, and Pinecone's maximum. */
export const TOP_K_DEFAULT = 10;
export const TOP_K_MAX = 10_000;

/** ids per fetch (the spec's limit). */
export const FETCH_IDS_MAX = 100;

/** Time limit of the SQL a vector request runs (as POST /query's default). */
export function vectorTimeoutMs(limits: VectorLimits): number {
  return Math.min(30_000, limits.queryTimeoutMsMax);
}

/** top_k bounded by the server's max_result_rows too. */
export function topKMax(limits: VectorLimits): number {
  return Math.min(TOP_K_MAX, limits.resultRowsMax);
}
