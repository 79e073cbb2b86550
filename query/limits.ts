/** Limits of the SQL engine, in one place (ARCHITECTURE.md: nothing unbounded). */
export const LIMITS = Object.freeze({
  /** Rows per batch passed between operators. */
  batchRows: 1024,
  /** Rows a blocking operator (sort, hash join build, hash aggregate, window, distinct) may hold. */
  materializedRowsMax: 5_000_000,
  /** Statements whose plans are kept (LRU by statement text). */
  planCacheEntriesMax: 512,
  /** Statement text longer than this is not cached. */
  planCacheTextBytesMax: 64 * 1024,
  /** Rows one DML statement may change (one log record). */
  dmlRowsMax: 1_000_000,
  /** Request SQL text (the spec's max_query_size_bytes). */
  queryTextBytesMax: 1_048_576,
  /** Result rows any request may ask for (the spec's max_result_rows). */
  resultRowsMax: 100_000,
  /** Nested view expansion. */
  viewDepthMax: 32,
});
