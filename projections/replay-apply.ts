import { assert } from '../core/errors.js';
import { decodeLogRecord } from '../core/log-records.js';
import type { Lsn } from '../core/units.js';
import type { Log, LogEntry } from '../log/index.js';
import { encodeTableDef } from './catalog-codec.js';
import { PROJECTION_LIMITS } from './limits.js';
import { RecordHandoff } from './record-handoff.js';
import { chunkSummary, touchesVectors, type PreparedChunk } from './replay-chunk.js';
import { BulkLoader } from './replay-bulk.js';
import { startPreparer, type Preparer } from './replay-pool.js';
import { packedFromBatch } from './replay-sort.js';
import { bulkHostOf, packedBatch, type StateStore } from './state-store.js';
import type { TablesProjection } from './tables-projection.js';
import type { VectorProjection } from './vector-projection.js';

/** A run of consecutive log records sent to a worker, and the catalog epoch it was prepared against. */
interface Chunk {
  readonly entries: readonly LogEntry[];
  readonly epoch: number;
  readonly prepared: Promise<PreparedChunk>;
}

/** What a replay applied, and the level-0 tables it left (null: nothing was bulk-loaded). */
export interface ReplayCounts {
  readonly records: number;
  readonly rows: number;
  readonly levelZeroFiles: number | null;
  /**
   * The end, after every record is applied: the tables written, the store reopened and read back (or
   * LevelDB's recovery and compaction past the held bound). Wall and CPU ms of the process (every
   * thread): what bench/replay.ts reports as the phase split.
   */
  readonly finishMs: number;
  readonly finishCpuMs: number;
}

export interface ReplayApplyOptions {
  readonly log: Log;
  readonly toLsn: Lsn;
  readonly batchBytesMax: number;
  readonly store: StateStore;
  readonly tables: TablesProjection;
  readonly handoff: RecordHandoff;
  readonly vectors: VectorProjection;
  readonly onApplied: (recordsDone: number, rowsDone: number) => void;
  /** Who prepares records (tests choose); by default worker threads unless the log is small. */
  readonly preparer?: Preparer;
  /** Chunks with fewer bytes of ops are written as ordinary batches (tests choose; PROJECTION_LIMITS.replayBulkChunkBytesMin). */
  readonly bulkChunkBytesMin?: number;
  /** Staged bytes at which a background ingest starts (tests choose; PROJECTION_LIMITS.replayBulkIngestBytesMin). */
  readonly bulkIngestBytesMin?: number;
  /** Bytes of bulk-loaded chunks kept in memory to be written as tables at the end (tests choose; PROJECTION_LIMITS.replayHeldBytesMax). */
  readonly bulkHeldBytesMax?: number;
  /** Bytes of held chunks from which a worker writes part of the tables (tests choose; replay-direct.ts's default). */
  readonly tablesSplitBytesMin?: number;
}

/**
 * Applies the log to fresh projections in one pass. Worker threads decode records and compute
 * their key/value effects ahead of the main thread, which hands them to the tables projection
 * through its record handoff (the same path the live sequencer uses) in large batches; nothing
 * waits for readers (replay is offline). A record that changes the catalog is a barrier: the
 * main thread applies it itself, then the workers get the new catalog and every chunk prepared
 * against the old one is prepared again. The vector projection sees only the records that can
 * change it (catalog changes, rows of tables with hnsw indexes).
 */
export async function replayApply(options: ReplayApplyOptions): Promise<ReplayCounts> {
  const pool = options.preparer ?? startPreparer(options.toLsn);
  const reader = options.log.read(1 as Lsn, { batchBytesMax: options.batchBytesMax, toLsn: options.toLsn })[Symbol.asyncIterator]();
  const work = new ChunkQueue(pool, pool.size * PROJECTION_LIMITS.replayChunksAheadPerWorker);
  const done = { records: 0, rows: 0 };
  const host = bulkHostOf(options.store);
  const bulk =
    host === null
      ? null
      : new BulkLoader(
          host,
          {
            ingestBytesMin: options.bulkIngestBytesMin ?? PROJECTION_LIMITS.replayBulkIngestBytesMin,
            pendingBytesMax: PROJECTION_LIMITS.replayBulkPendingBytesMax,
            levelZeroFilesMax: PROJECTION_LIMITS.replayLevelZeroFilesMax,
            heldBytesMax: options.bulkHeldBytesMax ?? PROJECTION_LIMITS.replayHeldBytesMax,
            tableBytes: PROJECTION_LIMITS.replayTableBytes,
            ...(options.tablesSplitBytesMin === undefined ? {} : { splitBytesMin: options.tablesSplitBytesMin }),
          },
          pool.writeTables,
        );
  // The chunk being written: the next one is built into a native batch meanwhile (LevelDB writes on its own thread).
  let applying: Promise<void> = Promise.resolve();
  try {
    pool.setCatalog(catalogDefs(options.tables));
    for (;;) {
      const chunk = await work.next(async () => {
        const next = await reader.next();
        return next.done ? null : next.value;
      });
      if (chunk === null) break;
      const prepared = await chunk.prepared;
      assert(chunk.epoch === work.epoch, 'a barrier drops every chunk prepared against the old catalog');
      const write = chunkWrite(options.store, bulk, prepared, options.bulkChunkBytesMin ?? PROJECTION_LIMITS.replayBulkChunkBytesMin);
      await applying;
      const step = applyChunk(options, bulk, chunk.entries, prepared, write).then((applied) => {
        done.records += applied;
        done.rows += prepared.rows + (applied > prepared.count ? rowsOf(chunk.entries[prepared.count]!) : 0);
        options.onApplied(done.records, done.rows);
        return applied;
      });
      if (prepared.count < chunk.entries.length) {
        // A catalog change: the workers need the catalog after it, so wait for it here.
        const applied = await step;
        pool.setCatalog(catalogDefs(options.tables));
        work.barrier(chunk.entries.slice(applied));
        applying = Promise.resolve();
      } else {
        work.grow();
        applying = step.then(() => undefined);
        // Awaited before the next chunk is written; until then a failure must not count as unhandled.
        applying.catch(() => undefined);
      }
    }
    await applying;
    const finishStarted = performance.now();
    const cpuStarted = process.cpuUsage();
    const levelZeroFiles = (await bulk?.finish()) ?? null;
    const cpu = process.cpuUsage(cpuStarted);
    const finish = { finishMs: Math.round(performance.now() - finishStarted), finishCpuMs: Math.round((cpu.user + cpu.system) / 1000) };
    options.vectors.skipTo(options.toLsn);
    return { ...done, levelZeroFiles, ...finish };
  } finally {
    // On failure, nothing may still use the store when the caller closes it: the chunk being
    // written, then the bulk loader's ingests (which reopen it in the background).
    await applying.catch(() => undefined);
    await bulk?.idle();
    await reader.return?.();
    await pool.close();
  }
}

/**
 * The records read from the log and not applied yet: a few chunks being prepared (in log order)
 * and a backlog not sent yet. Chunks start small after a catalog change and grow while none
 * comes, so a log with frequent DDL wastes little work on chunks prepared against an old catalog.
 */
class ChunkQueue {
  epoch = 0;
  private inFlight: Chunk[] = [];
  private backlog: LogEntry[] = [];
  private chunkRecords: number = PROJECTION_LIMITS.replayChunkRecordsFirst;

  constructor(
    private readonly pool: Preparer,
    private readonly ahead: number,
  ) {}

  /** The oldest chunk, after sending more while fewer than `ahead` are out; null: the log is done. */
  async next(read: () => Promise<readonly LogEntry[] | null>): Promise<Chunk | null> {
    while (this.inFlight.length < this.ahead) {
      if (this.backlog.length === 0) {
        const batch = await read();
        if (batch === null) break;
        this.backlog = [...batch];
      }
      const take = Math.min(this.chunkRecords, this.backlog.length);
      this.inFlight.push(this.send(this.backlog.slice(0, take)));
      this.backlog = take === this.backlog.length ? [] : this.backlog.slice(take);
    }
    return this.inFlight.shift() ?? null;
  }

  /** The catalog changed: what follows is prepared again, in small chunks at first. */
  barrier(rest: readonly LogEntry[]): void {
    this.epoch += 1;
    this.chunkRecords = PROJECTION_LIMITS.replayChunkRecordsFirst;
    this.backlog = [...rest, ...this.inFlight.flatMap((chunk) => chunk.entries), ...this.backlog];
    this.inFlight = [];
  }

  /** A chunk applied without a catalog change: the next ones may be larger. */
  grow(): void {
    this.chunkRecords = Math.min(this.chunkRecords * 4, this.pool.chunkRecordsMax ?? PROJECTION_LIMITS.replayChunkRecordsMax);
  }

  private send(entries: readonly LogEntry[]): Chunk {
    const prepared = this.pool.prepare(entries);
    // Awaited when its turn comes; a chunk dropped at a barrier or a failure must not be an unhandled rejection.
    prepared.catch(() => undefined);
    return { entries, epoch: this.epoch, prepared };
  }
}

/**
 * What writes a chunk's key/value ops: into a fresh store, a large chunk (any chunk while the
 * loader holds chunks in memory) is bulk-loaded (replay-bulk.ts) unless the vector projection will apply some of its records (it may read their
 * rows); `bulked` says so. Otherwise what was bulk-loaded is ingested first (a later write of a key
 * must not be hidden by an earlier bulk-loaded one), then the ops are written as one batch.
 */
function chunkWrite(
  store: StateStore,
  bulk: BulkLoader | null,
  prepared: PreparedChunk,
  bulkBytesMin: number,
): { readonly write: () => Promise<void>; readonly bulked: boolean } {
  if (bulk === null) return { write: packedBatch(store, packedFromBatch(prepared.batch)), bulked: false };
  // A held chunk costs no reopen (replay-bulk.ts): small ones are held too, else each would make the held ones be ingested first.
  if ((prepared.batch.end >= bulkBytesMin || bulk.holding) && !prepared.vectorFlags.includes(1))
    return { write: () => bulk.append(prepared.batch), bulked: true };
  return {
    write: async () => {
      await bulk.ingest();
      await packedBatch(store, packedFromBatch(prepared.batch))();
    },
    bulked: false,
  };
}

/**
 * Applies the prepared records of a chunk and the barrier record after them (if any); returns how
 * many of the chunk's records that is. A bulk-loaded chunk without a barrier does not wait for the
 * store: its summary is applied in the loader's queue, after the ingest running meanwhile (the
 * store is closed while LevelDB recovers), and the next chunk is staged at once.
 */
async function applyChunk(
  options: ReplayApplyOptions,
  bulk: BulkLoader | null,
  entries: readonly LogEntry[],
  prepared: PreparedChunk,
  write: { readonly write: () => Promise<void>; readonly bulked: boolean },
): Promise<number> {
  // Rows and index entries first: the barrier record's own apply may read them (backfills, drops).
  await write.write();
  const count = Math.min(prepared.count + 1, entries.length);
  if (bulk !== null && write.bulked && count === prepared.count) {
    // Failures stay in the loader: the next append() or ingest() throws them.
    void bulk.run(() => applyRecords(options, entries, prepared, count)).catch(() => undefined);
    return count;
  }
  // A barrier record is applied through the store (and may read it): bulk-loaded rows go in first.
  if (count > prepared.count) await bulk?.ingest();
  await applyRecords(options, entries, prepared, count);
  return count;
}

/** The tables projection's part of a chunk (its summary, then the barrier record), then the vector projection's. */
async function applyRecords(options: ReplayApplyOptions, entries: readonly LogEntry[], prepared: PreparedChunk, count: number): Promise<void> {
  // The prepared records count as one, at the LSN of the last (chunkSummary): the projection then
  // does per chunk, not per record, what it would do for each (statistics, sequences, offset).
  const first = prepared.count > 0 ? prepared.count - 1 : 0;
  if (prepared.count > 0) options.handoff.put(entries[first]!.lsn, chunkSummary(prepared));
  await options.tables.applyBatch(first === 0 && count === entries.length ? entries : entries.slice(first, count));
  // The handoff also tells a live vector projection which records are rows only; replay's gets
  // only the records that concern it (below), so nothing else takes this mark.
  if (prepared.count > 0) options.handoff.takeRowsOnly(entries[first]!.lsn);
  const forVectors: LogEntry[] = [];
  for (let i = 0; i < count; i++) if (i >= prepared.count || touchesVectors(prepared, i)) forVectors.push(entries[i]!);
  if (forVectors.length > 0) await options.vectors.applyBatch(forVectors);
}

/** Row changes of a record the main thread applied itself (rare: a catalog change), counted for progress. */
function rowsOf(entry: LogEntry): number {
  return decodeLogRecord(entry.payload).ops.filter((op) => op.kind === 'row').length;
}

function catalogDefs(tables: TablesProjection): Uint8Array[] {
  return [...tables.catalog.tables()].map((entry) => encodeTableDef(entry.def));
}
