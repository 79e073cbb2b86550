import { assert } from '../core/errors.js';

/**
 * Fixed limits of the projections layer, in one place (ARCHITECTURE.md: nothing unbounded, units
 * last). Options an operator tunes come from config; these bound batch sizes and walks.
 */
export const PROJECTION_LIMITS = Object.freeze({
  /** Keys one LevelDB range read returns per batch when its caller names no size. */
  rangeBatchKeysDefault: 1024,
  /** The first batch of a range read is this small (a LIMIT 1 or a point range reads little), then grows. */
  rangeBatchKeysFirst: 16,
  /**
   * Up to this many keys are read with getSync on the main thread: a point read from LevelDB's
   * block cache or the OS page cache takes a few microseconds, less than the thread-pool round trip
   * of an async get (which was the largest single cost of a primary-key query over HTTP).
   */
  syncGetKeysMax: 16,
  /**
   * Bytes of memory the point-read cache may hold (row-versions.ts getRowSync), counted as key +
   * value + ROW_CACHE_ENTRY_OVERHEAD_BYTES each plus what a reader keeps with it (its JSON text and
   * row, CachedRow.remember) (~130,000 small rows with a point SELECT's answer kept each, ~300,000 without):
   * past it the oldest quarter goes (makeRoom). A table's
   * entries go when a write to its rows starts, so the bound is the memory, not the staleness.
   */
  pointCacheBytesMax: 64 * 1024 * 1024,
  /**
   * A Map or Set that every write adds to and deletes from (the record handoff, the pending
   * overlay's index) is replaced by a copy of its few live entries after this many deletes (the
   * handoff's deletes; the overlay counts records released, each up to 64 keys deleted). V8
   * links each hash table a Map outgrows to the one that replaces it (for iterators): once one of
   * them has reached the old generation (the Map sat idle across two scavenges, as during bulk
   * loads), every later table and every value it held survives each scavenge through that link
   * until a full GC, and a new link forms before one comes. Measured: ~2-3 MB promoted per scavenge
   * and 10-25 ms scavenges under single-row inserts after bulk loads, 0.1 MB and 1-3 ms without.
   * A new Map starts a chain of its own; the copy costs a few dozen sets per this many writes.
   */
  churnedMapRenewDeletes: 1024,
  /**
   * Ops of a row-only record from which the sequencer builds its effects (and the store's batch)
   * once the log has written it, while its fdatasync runs (sequencer.ts appendedRows): ~1.5 ms of a
   * 1,000-row VALUES insert, ~10 ms of a 10,000-row bulk request. Smaller records build them
   * before the append: single-row writes would only pay the extra wait.
   */
  deferredEffectsOpsMin: 512,
  /**
   * Row and index keys appended but not yet applied (the pending overlay) past which the next writer
   * waits, before it builds its record, until the projections applied everything durable
   * (sequencer.ts submit). A write is answered once durable and reads wait at the read barrier for
   * the apply: this bounds that wait (this many keys plus the records still syncing) and the
   * overlay's memory when bulk writers outrun the apply. Single-row writes at 50 connections keep a
   * few hundred keys pending.
   */
  unappliedKeysMax: 65_536,
  /** Rows per batch of the writer's view scans (sequencer.ts). */
  writerScanBatchRows: 1024,
  /** Deletes and backfills run in chunks of this many keys (each chunk one LevelDB batch). */
  bulkChunkKeys: 10_000,
  /** Rows read per batch when a new vector index is filled from its table. */
  vectorBackfillBatchRows: 1000,
  /** Rows decoded and queued between two turns of the event loop (a 50k-row record must not hold it). */
  vectorApplyRowsPerTurn: 4096,
  /**
   * Graph changes posted to the hnsw worker before the apply waits for it, at the next record
   * boundary: a stop past its drain (projections.ts STOP_DRAIN_MS_DEFAULT) then waits for about
   * this many inserts (~0.5 s at 128 dimensions), not a whole read batch (4 MiB of vectors).
   */
  vectorSyncRowsMax: 2048,
  /** First capacity of a new hnsw index, in elements; it doubles as it fills. */
  vectorIndexElementCountInitial: 1024,
  /** Changes buffered before they are posted to the hnsw worker in one message. */
  vectorOpsPerMessageMax: 256,
  /** Replay's worker threads that decode records beside the main thread (one per spare core, at most this many). */
  replayWorkersMax: 4,
  /** A log with fewer records is replayed on the main thread alone (a worker takes longer to start than they take). */
  replayWorkerRecordsMin: 20_000,
  /** Chunks of records being prepared by the replay workers ahead of the one being applied, per worker. */
  replayChunksAheadPerWorker: 2,
  /** Records in the first chunk prepared after a catalog change (chunks grow x4 from there while none comes). */
  replayChunkRecordsFirst: 256,
  /** Most records in one prepared chunk (one tables-projection batch). */
  replayChunkRecordsMax: 65_536,
  /**
   * Staged bytes of bulk-loaded batches (replay-bulk.ts) at which LevelDB starts recovering them in
   * the background while later chunks decode: each ingest reopens the store (~10-40 ms) and leaves
   * at least one table in level 0, so not much smaller.
   */
  replayBulkIngestBytesMin: 32 * 1024 * 1024,
  /**
   * Staged bytes at which replay waits for the running ingest: recovery puts every table it writes
   * in level 0, where more than 8 slow writes (and 12 stop them).
   */
  replayBulkPendingBytesMax: 128 * 1024 * 1024,
  /**
   * Level-0 tables a replay may leave behind; with more it compacts the store before the swap.
   * LevelDB slows every write once 8 are there and stops writes at 12: below 8 the server's own
   * background compaction catches up without holding a write.
   */
  replayLevelZeroFilesMax: 7,
  /**
   * Bytes of bulk-loaded chunks (their sorted WriteBatches) a replay keeps in memory to write the
   * store's tables itself at the end (replay-direct.ts: no level-0 tables, no compaction); a larger
   * log stages the rest for LevelDB's recovery as before. ~67 MB per million 5-row-record rows.
   */
  replayHeldBytesMax: 256 * 1024 * 1024,
  /** Size at which replay cuts the tables it writes: the store's own (STORE_OPTIONS.maxFileSize), as its compactions cut them. */
  replayTableBytes: 8 * 1024 * 1024,
  /**
   * A chunk with fewer bytes of ops goes through an ordinary batch: making bulk-loaded ops visible
   * reopens LevelDB (~10-40 ms), which a log with DDL between small chunks would pay at each barrier.
   */
  replayBulkChunkBytesMin: 1024 * 1024,
  /** Entries looked at by one walk of a data directory (a large one holds a few thousand). */
  dataDirWalkEntriesMax: 200_000,
  /** Directory levels below the root a walk descends (svcdb's own layout is two deep). */
  dataDirWalkDepthMax: 8,
  /** Offending entries a report or an error names. */
  dataDirTooOpenListedMax: 20,
});

// Relations between the limits, asserted once at load (TigerBeetle style).
assert(PROJECTION_LIMITS.rangeBatchKeysFirst <= PROJECTION_LIMITS.rangeBatchKeysDefault, 'a range read starts small and grows');
assert(PROJECTION_LIMITS.replayBulkIngestBytesMin <= PROJECTION_LIMITS.replayBulkPendingBytesMax, 'replay ingests in the background before it waits');
assert(PROJECTION_LIMITS.rangeBatchKeysFirst >= 1 && PROJECTION_LIMITS.vectorApplyRowsPerTurn >= 1, 'reads and applies make progress');
