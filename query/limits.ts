/** Fixed limits of the SQL engine (ARCHITECTURE.md: nothing unbounded). */
export const LIMITS = Object.freeze({
  /** Rows per batch passed between operators. */
  batchRows: 1024,
  /** Candidates a filtered hnsw index scan may fetch in one round before it scans exactly instead. */
  vectorCandidatesMax: 20_000,
  /** Statement text longer than this is not cached. */
  planCacheTextBytesMax: 64 * 1024,
  /** Nested view expansion. */
  viewDepthMax: 32,
  /** Longest table, view, schema or column name (POST /tables allows the same). */
  nameCharsMax: 128,
  /** Longest index or constraint name: generated ones join a table's name with its columns'. */
  derivedNameCharsMax: 1024,
});

/** Limits an operator may set (core/settings.ts), handed to the engine by the composition root. */
export interface SqlLimits {
  /** Request SQL text (the spec's max_query_size_bytes). */
  readonly queryTextBytesMax: number;
  /** Result rows any request may ask for (the spec's max_result_rows). */
  readonly resultRowsMax: number;
  /** Rows a blocking operator (sort, hash join build, hash aggregate, window, distinct) may hold. */
  readonly materializedRowsMax: number;
  /** Rows one DML statement may change (one log record). */
  readonly dmlRowsMax: number;
  /** Statements whose plans are kept (LRU by statement text). */
  readonly planCacheEntriesMax: number;
  /** Decoded rows of whole tables kept for the next full scan (exec/scan-cache.ts); 0: none. */
  readonly scanCacheRowsMax: number;
  /** hnsw search beam of a vector index scan whose query names none (pgvector's hnsw.ef_search). */
  readonly efSearchDefault: number;
}

/** The defaults of core/settings.ts, for engines built without a config (tests, benchmarks). */
export const DEFAULT_SQL_LIMITS: SqlLimits = Object.freeze({
  queryTextBytesMax: 1_048_576,
  resultRowsMax: 100_000,
  materializedRowsMax: 5_000_000,
  dmlRowsMax: 1_000_000,
  planCacheEntriesMax: 512,
  scanCacheRowsMax: 2_000_000,
  efSearchDefault: 40, // pgvector's hnsw.ef_search
});
