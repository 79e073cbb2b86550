import { rename, rm } from 'node:fs/promises';
import { SvcError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { Lsn } from '../core/units.js';
import type { Log } from '../log/index.js';
import type { DataDirLayout } from './data-dir.js';
import { sinkStateRange } from './keys.js';
import { openStateStore, type StateStore } from './state-store.js';
import { TablesProjection } from './tables-projection.js';
import { VectorProjection } from './vector-projection.js';

export interface RebuildProgress {
  readonly recordsDone: number;
  readonly recordsTotal: number;
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
}): Promise<{ records: number }> {
  const { log, layout } = options;
  if (log.firstLsn > 1) {
    throw new SvcError(
      'LOG_CORRUPT',
      `the log starts at LSN ${log.firstLsn} (older segments were retained away), so projections cannot be rebuilt from it; restore the full log from a backup`,
    );
  }
  await rm(layout.rebuildDir, { recursive: true, force: true });
  const scratch = await openStateStore(layout.rebuildDir);
  let records = 0;
  const total = log.durableLsn;
  try {
    const projection = await TablesProjection.load(scratch, options.logger);
    for await (const batch of log.read(1 as Lsn, { batchBytesMax: options.batchBytesMax, toLsn: total })) {
      await projection.applyBatch(batch);
      records += batch.length;
      options.onProgress({ recordsDone: records, recordsTotal: total });
    }
    await rebuildVectors(options, scratch, total);
    await carrySinkState(options.liveStore, scratch);
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
  await rm(old, { recursive: true, force: true });
  // A crash between the two swaps is harmless: either vector checkpoint is a valid cache of the log.
  await rm(layout.vectorDir, { recursive: true, force: true });
  await rename(layout.vectorRebuildDir, layout.vectorDir);
  return { records };
}

/** Sinks' own state (CDC positions, the webhook ledger) is not derived from the log: it moves over as it is. */
async function carrySinkState(live: StateStore, scratch: StateStore): Promise<void> {
  for await (const batch of live.entries({ ...sinkStateRange(), batchSize: 10_000 })) {
    await scratch.write(batch.map(([key, value]) => ({ type: 'put' as const, key, value })));
  }
}

/** The vector indexes, from the log over the rebuilt rows (backfills read them), checkpointed once at the end. */
async function rebuildVectors(
  options: { readonly log: Log; readonly layout: DataDirLayout; readonly batchBytesMax: number; readonly logger: Logger },
  scratch: StateStore,
  total: Lsn,
): Promise<void> {
  await rm(options.layout.vectorRebuildDir, { recursive: true, force: true });
  const vectors = await VectorProjection.load({
    dir: options.layout.vectorRebuildDir,
    store: scratch,
    tablesApplied: async () => {},
    checkpointRecordsMax: Number.MAX_SAFE_INTEGER,
    checkpointIntervalMs: Number.MAX_SAFE_INTEGER,
    logger: options.logger,
  });
  try {
    for await (const batch of options.log.read(1 as Lsn, { batchBytesMax: options.batchBytesMax, toLsn: total })) await vectors.applyBatch(batch);
    await vectors.checkpoint();
  } finally {
    await vectors.close();
  }
}
