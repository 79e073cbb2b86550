import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { ClassicLevel } from 'classic-level';
import type { TableId } from '../core/catalog.js';
import type { CachedRow } from './cached-row.js';
import { assert, SvcError } from '../core/errors.js';
import { fsyncIfPresent } from '../core/fsync.js';
import { PROJECTION_LIMITS } from './limits.js';
import { LevelPreparedWrite, putOps, reusedKeyViews, reusedValueViews, viewOf, type KvOp, type NativeBatch, type PreparedWrite } from './native-batch.js';

/**
 * The one adapter over classic-level. Keys and values are bytes; the layout lives in keys.ts.
 * Writes are not fsynced: the log is the truth, and every batch carries the consumer offset it
 * covers, so a batch lost in a crash is simply re-applied from the log. Before the log deletes
 * records an offset covers (retention), sync() makes the offsets durable.
 */
export type { KvOp, PreparedWrite } from './native-batch.js';

export interface RangeOptions {
  readonly gte?: Uint8Array;
  readonly gt?: Uint8Array;
  readonly lt?: Uint8Array;
  readonly lte?: Uint8Array;
  readonly reverse?: boolean;
  readonly limit?: number;
  /**
   * Most entries fetched from LevelDB per step. Steps start small and grow (x4) up to this:
   * a scan that stops early (LIMIT, EXISTS, a point in a range) reads few entries, a full scan
   * reaches the large steps after a few calls.
   */
  readonly batchSize?: number;
  readonly snapshot?: StoreSnapshot;
}

/** A store with, maybe, a cached point read of row keys (RowVersionedStore.getRowSync): what point reads use. */
export interface PointReadStore extends StateStore {
  /** `name`, when given, must be rowCacheName(key) (a caller that made it already: not made twice). */
  readonly getRowSync?: (tableId: TableId, key: Uint8Array, name?: string) => CachedRow;
  /** getRowSync by the row key as latin1 text (RowVersionedStore). */
  readonly getRowSyncByName?: (tableId: TableId, name: string) => CachedRow;
}

export interface GetManyOptions {
  readonly offThread?: boolean;
}

export interface StoreSnapshot {
  close(): Promise<void>;
}

export interface StateStore {
  get(key: Uint8Array, snapshot?: StoreSnapshot): Promise<Uint8Array | undefined>;
  /** A point read of the current state, answered at once (absent: this store has no synchronous reads; use get). */
  readonly getSync?: (key: Uint8Array) => Uint8Array | undefined;
  /** offThread: read in LevelDB's thread pool however few the keys (a caller whose event loop is the bottleneck). */
  getMany(keys: readonly Uint8Array[], snapshot?: StoreSnapshot, options?: GetManyOptions): Promise<(Uint8Array | undefined)[]>;
  /** Key/value pairs in key order (or reverse), fetched in bounded steps. */
  entries(range: RangeOptions): AsyncIterable<[Uint8Array, Uint8Array][]>;
  /** Writes `ops` atomically; with `prepared` (from prepare(), given its ops first), only the ops after them still go into the batch. */
  write(ops: readonly KvOp[], prepared?: PreparedWrite): Promise<void>;
  /**
   * A batch holding `ops` already, for a write() to come whose ops start with them: the per-op work
   * (one native call each, ~0.5 us) is done now, while the caller waits anyway (the log's fdatasync
   * of the record). Absent: the store has no such batches.
   */
  prepare?(ops: readonly KvOp[]): PreparedWrite;
  /** Bytes LevelDB holds in memory (memtables and block cache; absent: not known), for stats and the memory benchmark. */
  readonly memoryBytes?: () => number;
  /**
   * Makes every write resolved so far durable across a power loss (not just a process crash):
   * called before the log deletes segments that the stored offsets say are applied.
   */
  sync(): Promise<void>;
  /** True while the store is open (not closing, closed or failed to open). */
  isOpen(): boolean;
  snapshot(): StoreSnapshot;
  close(): Promise<void>;
}

const { rangeBatchKeysDefault, rangeBatchKeysFirst, syncGetKeysMax } = PROJECTION_LIMITS;

/**
 * LevelDB tuning, shared with the benchmarks' raw classic-level baseline so the comparison stays
 * fair. The write buffer (memtable) is LevelDB's default 4 MiB: it fills at ~64 bytes a single-row
 * insert, so a 32 MiB one kept growing for ~20 minutes of a steady insert load (the memory curve's
 * largest slope) and holds up to twice its size while one flushes; bulk inserts of 10,000 rows cost
 * the same CPU with either (bench/many-insert.ts, same run). The block cache holds decompressed
 * blocks of what reads miss in the row caches above it.
 */
export const STORE_OPTIONS = Object.freeze({
  keyEncoding: 'view',
  valueEncoding: 'view',
  createIfMissing: true,
  errorIfExists: false,
  compression: true,
  writeBufferSize: 4 * 1024 * 1024,
  cacheSize: 64 * 1024 * 1024,
  maxFileSize: 8 * 1024 * 1024,
} as const);

/**
 * The scratch store of a replay (openScratchStore) writes the whole log at once: a 32 MiB write
 * buffer turns that into fewer, larger compactions (on a 2-core machine the compaction thread
 * competes with the apply loop for CPU), and the store is reopened with STORE_OPTIONS after the swap.
 */
const SCRATCH_WRITE_BUFFER_BYTES = 32 * 1024 * 1024;

type Db = ClassicLevel<Uint8Array, Uint8Array>;

/** Opens (creating if missing) the LevelDB holding every projection's state. */
export async function openStateStore(location: string): Promise<StateStore> {
  const db: Db = new ClassicLevel<Uint8Array, Uint8Array>(location, STORE_OPTIONS);
  try {
    await db.open();
  } catch (error) {
    throw wrapOpenError(location, error);
  }
  return new ClassicLevelStore(db, location, false);
}

/**
 * Opens a NEW LevelDB (refused if one exists there) whose writes the store counts, so that replay
 * may bulk-load it (replay-bulk.ts, through bulkHostOf).
 */
export async function openScratchStore(location: string): Promise<StateStore> {
  const db: Db = new ClassicLevel<Uint8Array, Uint8Array>(location, { ...STORE_OPTIONS, writeBufferSize: SCRATCH_WRITE_BUFFER_BYTES, errorIfExists: true });
  try {
    await db.open();
  } catch (error) {
    throw wrapOpenError(location, error);
  }
  return new ClassicLevelStore(db, location, true);
}

/** What replay-bulk.ts's BulkLoader needs from the store it loads (a fresh scratch store). */
export interface BulkHost {
  readonly location: string;
  /** An upper bound of the highest sequence number LevelDB has used. */
  sequence: number;
  /** Closes and opens the database: LevelDB recovers the files written since. */
  reopen(): Promise<void>;
  readonly getSync: (key: Uint8Array) => Uint8Array | undefined;
  /** An ordinary write (the probes' deletes). */
  write(ops: readonly KvOp[]): Promise<void>;
  /** Tables in LevelDB's level 0. */
  levelZeroFiles(): number;
  /** Compacts the whole store. */
  compact(): Promise<void>;
  /** Key/value pairs in key order (what the store holds before replay-direct.ts replaces its files). */
  entries(range: RangeOptions): AsyncIterable<[Uint8Array, Uint8Array][]>;
  /** Closes the database, runs `task` (which may replace its files), then opens it again. */
  closedFor(task: () => Promise<void>): Promise<void>;
}

/** The store as a BulkHost when it is one from openScratchStore (null for any other store). */
export function bulkHostOf(store: StateStore): BulkHost | null {
  return store instanceof ClassicLevelStore && store.fresh ? store : null;
}

function wrapOpenError(location: string, error: unknown): SvcError {
  const code = (error as { code?: string }).code;
  const causeCode = ((error as { cause?: { code?: string } }).cause ?? {}).code;
  if (code === 'LEVEL_LOCKED' || causeCode === 'LEVEL_LOCKED') {
    return new SvcError(
      'DATA_DIR_LOCKED',
      `the data directory is in use by another svcdb process (lock held on ${location}); stop that process or choose another --data`,
      { location },
      error,
    );
  }
  const message = (error as Error).message ?? String(error);
  return new SvcError(
    'DATA_DIR_INVALID',
    `cannot open the projection store at ${location}: ${(error as { cause?: Error }).cause?.message ?? message}; run \`svcdb replay\` to rebuild it from the log`,
    { location },
    error,
  );
}

/**
 * Key/value ops packed in one buffer, each [0 del | 1 put] [u32 BE key length] key, then for a
 * put [u32 BE value length] value: how replay workers hand their effects to the main thread.
 */
export const PACKED_DEL = 0;
export const PACKED_PUT = 1;

const packedLength = (ops: Uint8Array, at: number): number => ((ops[at]! << 24) | (ops[at + 1]! << 16) | (ops[at + 2]! << 8) | ops[at + 3]!) >>> 0;

/** Calls `put` / `del` for each packed op, with views into `ops` (valid while `ops` is). */
export function forEachPackedOp(ops: Uint8Array, put: (key: Uint8Array, value: Uint8Array) => void, del: (key: Uint8Array) => void): void {
  let at = 0;
  while (at < ops.length) {
    const type = ops[at]!;
    const keyLength = packedLength(ops, at + 1);
    const key = ops.subarray(at + 5, at + 5 + keyLength);
    at += 5 + keyLength;
    if (type === PACKED_DEL) {
      del(key);
      continue;
    }
    const valueLength = packedLength(ops, at);
    put(key, ops.subarray(at + 4, at + 4 + valueLength));
    at += 4 + valueLength;
  }
}

/**
 * Builds one atomic batch of packed ops (see PACKED_PUT) now, and returns what writes it. On the
 * LevelDB store the ops go straight into a native batch, one call per op: abstract-level's array
 * batch copies and checks each op object, then the binding reads three properties and a type
 * string per op (replay profiles: the largest cost after LevelDB itself). The bytes are copied
 * into the native batch, so `ops` may be dropped at once. Other stores get ordinary ops.
 */
export function packedBatch(store: StateStore, ops: Uint8Array): () => Promise<void> {
  if (store instanceof ClassicLevelStore) return store.packedBatch(ops);
  const list: KvOp[] = [];
  forEachPackedOp(
    ops,
    (key, value) => list.push({ type: 'put', key, value }),
    (key) => list.push({ type: 'del', key }),
  );
  return () => store.write(list);
}

class ClassicLevelStore implements StateStore {
  /**
   * An upper bound of the highest sequence number LevelDB has given (each op written takes one; a
   * fresh database starts at 0): known only when `fresh`, for the bulk loader.
   */
  sequence = 0;

  constructor(
    private readonly db: Db,
    readonly location: string,
    readonly fresh: boolean,
  ) {}

  /** Closes and opens the database again (LevelDB recovers every *.log file added to it since). */
  reopen(): Promise<void> {
    return this.closedFor(async () => {});
  }

  async closedFor(task: () => Promise<void>): Promise<void> {
    await this.db.close();
    await task();
    try {
      await this.db.open({ createIfMissing: false, errorIfExists: false });
    } catch (error) {
      throw wrapOpenError(this.location, error);
    }
  }

  /** LevelDB's memtables (the one filling and the one being flushed) and block cache, as it counts them. */
  readonly memoryBytes = (): number => Number(this.db.getProperty('leveldb.approximate-memory-usage'));

  /** Tables in LevelDB's level 0 (past 8 it slows writes, at 12 stops them until compacted). */
  levelZeroFiles(): number {
    return Number(this.db.getProperty('leveldb.num-files-at-level0'));
  }

  /** Compacts every key (level 0 into level 1 and down; the keyspaces all start below 0xff). */
  compact(): Promise<void> {
    return this.db.compactRange(Uint8Array.of(0), Uint8Array.of(0xff));
  }

  get(key: Uint8Array, snapshot?: StoreSnapshot): Promise<Uint8Array | undefined> {
    // A point read: synchronous, as getMany's few keys are (PROJECTION_LIMITS.syncGetKeysMax says why).
    try {
      return Promise.resolve(snapshot ? this.db.getSync(key, { snapshot: snapshot as never }) : this.db.getSync(key));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** One key's current value, no promise (fast-point.ts); no options: abstract-level's fast path (same encodings). */
  readonly getSync = (key: Uint8Array): Uint8Array | undefined => this.db.getSync(key);

  getMany(keys: readonly Uint8Array[], snapshot?: StoreSnapshot, options?: GetManyOptions): Promise<(Uint8Array | undefined)[]> {
    if (keys.length <= syncGetKeysMax && options?.offThread !== true) {
      try {
        const options = snapshot ? { snapshot: snapshot as never } : null;
        return Promise.resolve(keys.map((key) => (options ? this.db.getSync(key, options) : this.db.getSync(key))));
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return snapshot ? this.db.getMany([...keys], { snapshot: snapshot as never }) : this.db.getMany([...keys]);
  }

  async *entries(range: RangeOptions): AsyncIterable<[Uint8Array, Uint8Array][]> {
    const { batchSize = rangeBatchKeysDefault, snapshot, ...bounds } = range;
    const options: Record<string, unknown> = { ...bounds };
    if (snapshot) options.snapshot = snapshot;
    if (options.limit === undefined) options.limit = -1;
    const iterator = this.db.iterator(options as never);
    let stepSize = Math.min(rangeBatchKeysFirst, batchSize);
    try {
      for (;;) {
        const entries = (await iterator.nextv(stepSize)) as [Uint8Array, Uint8Array][];
        stepSize = Math.min(stepSize * 4, batchSize);
        if (entries.length === 0) return;
        yield entries;
      }
    } finally {
      await iterator.close();
    }
  }

  write(ops: readonly KvOp[], prepared?: PreparedWrite): Promise<void> {
    const own = prepared instanceof LevelPreparedWrite && prepared.owner === this ? prepared.take() : null;
    if (prepared && own === null) prepared.discard(); // not one of ours, or used: its ops go in again below
    if (ops.length === 0 && own === null) return Promise.resolve();
    this.sequence += ops.length;
    // A chained batch: each op goes straight into the native batch. The array form clones every
    // op and resolves its encodings first, about twice the CPU per key (bulk inserts write 10k+).
    // The implementor methods, as packedBatch: the public put() builds an op object per call.
    if (this.db.status !== 'open') {
      own?.close().catch(() => undefined);
      return Promise.reject(new SvcError('STORAGE_UNAVAILABLE', `the projection store is ${this.db.status}`, {}));
    }
    const batch = own ?? this.nativeBatch();
    try {
      assert(own === null || ops.length >= (prepared as LevelPreparedWrite).count, 'a prepared write is given with the ops it holds first');
      putOps(batch, ops, own === null ? 0 : (prepared as LevelPreparedWrite).count);
    } catch (error) {
      return batch.close().then(() => Promise.reject(error));
    }
    // _write() leaves the batch attached to the database (see packedBatch): closed once written.
    return batch._write({}).finally(() => void batch.close().catch(() => undefined));
  }

  prepare(ops: readonly KvOp[]): PreparedWrite {
    // A closed store: an empty prepared write, and write() reports the status as it would.
    if (this.db.status !== 'open') return new LevelPreparedWrite(this, null, 0);
    const batch = this.nativeBatch();
    try {
      putOps(batch, ops, 0);
    } catch (error) {
      void batch.close().catch(() => undefined);
      throw error;
    }
    return new LevelPreparedWrite(this, batch, ops.length);
  }

  private nativeBatch(): NativeBatch {
    return (this.db as unknown as { _chainedBatch(): NativeBatch })._chainedBatch();
  }

  packedBatch(ops: Uint8Array): () => Promise<void> {
    if (ops.length === 0) return () => Promise.resolve();
    // abstract-level checks the status before each operation; the native calls below do not.
    const closed = () => Promise.reject(new SvcError('STORAGE_UNAVAILABLE', `the projection store is ${this.db.status}`, {}));
    if (this.db.status !== 'open') return closed;
    const batch = (this.db as unknown as { _chainedBatch(): NativeBatch })._chainedBatch();
    let at = 0;
    while (at < ops.length) {
      const type = ops[at]!;
      const keyLength = packedLength(ops, at + 1);
      const key = viewOf(ops, at + 5, keyLength, reusedKeyViews);
      at += 5 + keyLength;
      this.sequence += 1;
      if (type === PACKED_DEL) {
        batch._del(key);
        continue;
      }
      const valueLength = packedLength(ops, at);
      batch._put(key, viewOf(ops, at + 4, valueLength, reusedValueViews));
      at += 4 + valueLength;
    }
    // A chained batch stays attached to the database (and its native WriteBatch alive) until it is
    // closed: write() would close it, _write() does not, so it is closed here once written.
    const release = (): void => void batch.close().catch(() => undefined);
    return () => (this.db.status === 'open' ? batch._write({}).finally(release) : (release(), closed()));
  }

  /**
   * LevelDB writes each batch to its write-ahead file (*.log) without fsync. A write with
   * `sync: true` would fsync only the current one: an older *.log, switched at a memtable flush
   * whose table is not written yet, would stay in the page cache. So every *.log file is fsynced
   * (LevelDB has handed each resolved batch to the kernel), then the directory (new files' names).
   */
  isOpen(): boolean {
    return this.db.status === 'open';
  }

  async sync(): Promise<void> {
    const names = await readdir(this.location);
    for (const name of names) if (name.endsWith('.log')) await fsyncIfPresent(path.join(this.location, name));
    await fsyncIfPresent(this.location);
  }

  snapshot(): StoreSnapshot {
    return this.db.snapshot() as StoreSnapshot;
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
