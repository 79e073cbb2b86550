import { rename, rm } from 'node:fs/promises';
import { SvcError } from '../core/errors.js';
import { fsyncPath } from '../core/fsync.js';
import type { Logger } from '../core/logger.js';
import type { Lsn } from '../core/units.js';
import type { Log } from '../log/index.js';
import type { DataDirLayout } from './data-dir.js';
import { sinkStateRange } from './keys.js';
import { RecordHandoff } from './record-handoff.js';
import { replayApply, type ReplayCounts } from './replay-apply.js';
import { InThreadPreparer, ReplayPool, SharedPreparer, type Preparer } from './replay-pool.js';
import { openScratchStore, type StateStore } from './state-store.js';
import { TablesProjection } from './tables-projection.js';
import { VectorProjection } from './vector-projection.js';

export interface RebuildProgress {
  readonly recordsDone: number;
  readonly recordsTotal: number;
  readonly rowsDone: number;
}

/**
 * Rebuilds every projection from the start of the log into a scratch store, then swaps it in.
 * The live store stays open (and locked) until the swap, so no server can start on a half-built
 * state; a rebuild that dies leaves the old state untouched and its scratch is removed at the
 * next start.
 */
export async function rebuildProjections(options: {
  readonly log: Log;
  readonly layout: DataDirLayout;
  readonly liveStore: StateStore;
  readonly batchBytesMax: number;
  readonly logger: Logger;
  readonly onProgress: (progress: RebuildProgress) => void;
  /** Threads decoding records: 0 the main thread alone; by default workers unless the log is small (tests choose). */
  readonly workerThreads?: number;
  /** With workerThreads, the main thread prepares chunks too (replay-pool.ts SharedPreparer; by default it does with one worker). */
  readonly mainThreadShare?: boolean;
  /** Chunks with fewer bytes of ops are not bulk-loaded (tests choose; PROJECTION_LIMITS.replayBulkChunkBytesMin). */
  readonly bulkChunkBytesMin?: number;
  /** Staged bytes at which a background ingest starts (tests choose; PROJECTION_LIMITS.replayBulkIngestBytesMin). */
  readonly bulkIngestBytesMin?: number;
  /** Bytes of bulk-loaded chunks written as tables at the end (tests choose; PROJECTION_LIMITS.replayHeldBytesMax). */
  readonly bulkHeldBytesMax?: number;
  /** Bytes of held chunks from which a worker writes part of the tables (tests choose). */
  readonly tablesSplitBytesMin?: number;
}): Promise<ReplayCounts> {
  const { log, layout } = options;
  if (log.firstLsn > 1) {
    throw new SvcError(
      'LOG_CORRUPT',
      `the log starts at LSN ${log.firstLsn} (older segments were retained away), so projections cannot be rebuilt from it; restore the full log from a backup`,
    );
  }
  await rm(layout.rebuildDir, { recursive: true, force: true });
  const scratch = await openScratchStore(layout.rebuildDir);
  const total = log.durableLsn;
  let replayed: ReplayCounts;
  try {
    replayed = await rebuildFromLog(options, scratch, total);
    await carrySinkState(options.liveStore, scratch);
    // The old state is deleted below, so the new one must be on disk first: the sinks' state
    // (CDC positions, the webhook ledger) cannot be rebuilt from the log.
    await scratch.sync();
  } finally {
    await scratch.close();
  }
  await options.liveStore.close();
  const old = `${layout.stateDir}.old`;
  await rm(old, { recursive: true, force: true });
  await rename(layout.stateDir, old).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
  await rename(layout.rebuildDir, layout.stateDir);
  await fsyncPath(layout.root); // the renames reach the disk before the old state is removed
  await rm(old, { recursive: true, force: true });
  // A crash between the two swaps is harmless: either vector checkpoint is a valid cache of the log.
  await rm(layout.vectorDir, { recursive: true, force: true });
  await rename(layout.vectorRebuildDir, layout.vectorDir);
  await fsyncPath(layout.root);
  return replayed;
}

function chosenPreparer(workerThreads: number, mainThreadShare: boolean): Preparer {
  if (workerThreads === 0) return new InThreadPreparer();
  const pool = ReplayPool.start(workerThreads);
  return mainThreadShare ? new SharedPreparer(pool) : pool;
}

/** Sinks' own state (CDC positions, the webhook ledger) is not derived from the log: it moves over as it is. */
async function carrySinkState(live: StateStore, scratch: StateStore): Promise<void> {
  for await (const batch of live.entries({ ...sinkStateRange(), batchSize: 10_000 })) {
    await scratch.write(batch.map(([key, value]) => ({ type: 'put' as const, key, value })));
  }
}

/**
 * The tables and vector projections, in one pass over the log (replay-apply.ts); the vector
 * indexes are checkpointed once at the end.
 */
async function rebuildFromLog(
  options: {
    readonly log: Log;
    readonly layout: DataDirLayout;
    readonly batchBytesMax: number;
    readonly logger: Logger;
    readonly onProgress: (progress: RebuildProgress) => void;
    readonly workerThreads?: number;
    readonly mainThreadShare?: boolean;
    readonly bulkChunkBytesMin?: number;
    readonly bulkIngestBytesMin?: number;
    readonly bulkHeldBytesMax?: number;
    readonly tablesSplitBytesMin?: number;
  },
  scratch: StateStore,
  total: Lsn,
): Promise<ReplayCounts> {
  await rm(options.layout.vectorRebuildDir, { recursive: true, force: true });
  const handoff = new RecordHandoff();
  const tables = await TablesProjection.load(scratch, options.logger, handoff);
  const vectors = await VectorProjection.load({
    dir: options.layout.vectorRebuildDir,
    store: scratch,
    // Replay applies a batch to the tables before the vectors see it, so backfills read those rows.
    tablesApplied: async () => {},
    checkpointRecordsMax: Number.MAX_SAFE_INTEGER,
    checkpointIntervalMs: Number.MAX_SAFE_INTEGER,
    logger: options.logger,
  });
  try {
    const replayed = await replayApply({
      log: options.log,
      toLsn: total,
      batchBytesMax: options.batchBytesMax,
      store: scratch,
      tables,
      handoff,
      vectors,
      onApplied: (recordsDone, rowsDone) => options.onProgress({ recordsDone, recordsTotal: total, rowsDone }),
      ...(options.bulkChunkBytesMin === undefined ? {} : { bulkChunkBytesMin: options.bulkChunkBytesMin }),
      ...(options.bulkIngestBytesMin === undefined ? {} : { bulkIngestBytesMin: options.bulkIngestBytesMin }),
      ...(options.bulkHeldBytesMax === undefined ? {} : { bulkHeldBytesMax: options.bulkHeldBytesMax }),
      ...(options.tablesSplitBytesMin === undefined ? {} : { tablesSplitBytesMin: options.tablesSplitBytesMin }),
      ...(options.workerThreads === undefined ? {} : { preparer: chosenPreparer(options.workerThreads, options.mainThreadShare === true) }),
    });
    await vectors.checkpoint();
    return replayed;
  } finally {
    await vectors.close();
  }
}
