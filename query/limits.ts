import { assert } from '../core/errors.js';

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
  /** ef_search a vector query may name: the hnsw search beam, in candidates (pgvector allows 1..1000). */
  efSearchCandidatesMax: 1000,
  /** Key ranges one transaction may depend on before it is refused (each costs a check at commit). */
  txnReadSpansMax: 1_000_000,
  /** Ended transactions are remembered this long, so a late call hears why it ended rather than "not found". */
  txnEndedRetentionMs: 10 * 60_000,
  /** Ended transactions remembered at most (the oldest are forgotten first). */
  txnEndedCountMax: 10_000,
  /** How long after its statements' deadline a request's batch transaction expires (a backstop). */
  txnBatchExpiryMarginMs: 60_000,
  /**
   * Keys of others' writes kept to validate open transactions (a few hundred MB at most). Past it,
   * the oldest are dropped and the transactions that needed them can only end in a conflict.
   */
  txnRecentWriteKeysMax: 2_000_000,
  /** Below this many rows, a DML statement's read-ahead of keys is not worth it. */
  dmlPrefetchRowsMin: 2,
  /** Unique-index probes of one read-ahead in flight at once. */
  dmlPrefetchProbesInFlightMax: 64,
  /** Rewrite passes over one statement's tokens (a bound against a rewrite that never settles). */
  parseRewritesMax: 10_000,
});

// Relations between the limits, asserted once at load (TigerBeetle style).
assert(LIMITS.derivedNameCharsMax >= LIMITS.nameCharsMax, 'a derived name may be as long as a plain one');
assert(LIMITS.dmlPrefetchRowsMin >= 1 && LIMITS.dmlPrefetchProbesInFlightMax >= 1, 'read-ahead makes progress');
assert(LIMITS.txnRecentWriteKeysMax >= 2, 'shedding keeps half of the recent writes');

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
  /** Bytes the scan cache's rows may keep alive (exec/chunk.ts Chunk.bytes); 0: none. */
  readonly scanCacheBytesMax: number;
  /** hnsw search beam of a vector index scan whose query names none (pgvector's hnsw.ef_search). */
  readonly efSearchDefault: number;
  /**
   * How long a read that is given no timeout (GET /tables/{t}/rows/{id}'s direct read by key) may wait
   * at the read barrier before it fails with QUERY_TIMEOUT: the REST routes' default timeout_ms, which
   * its SQL path runs with (min(30 s, queryTimeoutMsMax)). Absent: READ_TIMEOUT_MS_DEFAULT.
   */
  readonly readTimeoutMsDefault?: number;
}

/** readTimeoutMsDefault when a config gives none: the REST routes' default statement timeout (30 s). */
export const READ_TIMEOUT_MS_DEFAULT = 30_000;

/** The defaults of core/settings.ts, for engines built without a config (tests, benchmarks). */
export const DEFAULT_SQL_LIMITS: SqlLimits = Object.freeze({
  queryTextBytesMax: 1_048_576,
  resultRowsMax: 100_000,
  materializedRowsMax: 5_000_000,
  dmlRowsMax: 1_000_000,
  planCacheEntriesMax: 512,
  scanCacheRowsMax: 2_000_000,
  scanCacheBytesMax: 128 * 1024 * 1024, // PostgreSQL's shared_buffers default
  efSearchDefault: 40, // pgvector's hnsw.ef_search
  readTimeoutMsDefault: READ_TIMEOUT_MS_DEFAULT,
});
