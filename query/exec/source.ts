import type { IndexId, TableId } from '../../core/catalog.js';
import {
  keys,
  type GetManyOptions,
  type RowVersionedStore,
  type RowWrite,
  type StoreSnapshot,
  type VectorHit,
  type WriteView,
} from '../../projections/index.js';
import { LIMITS } from '../limits.js';
import type { RowWriteSignal } from './scan-cache.js';

/** A byte range [gte, lt) over encoded keys (primary keys, or index keys followed by primary keys). */
export interface ByteRange {
  readonly gte?: Uint8Array;
  readonly lt?: Uint8Array;
  readonly reverse: boolean;
}

/**
 * Where operators read rows: a store snapshot for queries, the writer's view (pending changes
 * included) for the reads of a DML statement.
 */
export interface RowSource {
  /** [encoded pk, row image] batches of a table in key order. */
  rows(tableId: TableId, range: ByteRange): AsyncIterable<[Uint8Array, Uint8Array][]>;
  /** Index entries as bytes after the index id prefix: encoded index key, then encoded pk. */
  indexEntries(indexId: IndexId, range: ByteRange): AsyncIterable<Uint8Array[]>;
  /** offThread: a hint that the reads may go to LevelDB's thread pool however few (the vector scan's candidates). */
  getRows(tableId: TableId, pks: readonly Uint8Array[], options?: GetManyOptions): Promise<(Uint8Array | undefined)[]>;
  /** The version of a table's rows this source reads (row-versions.ts), or null: do not cache. */
  rowVersion(tableId: TableId): number | null;
  /** Where the store announces row writes, for the scan cache to follow (absent: a source that does not read the store directly). */
  readonly rowWrites?: RowWriteSignal;
  /**
   * When rowVersion is null because one write to the table's rows was in flight as this source's
   * snapshot was taken: that write (the snapshot sees all of it or none). Otherwise null.
   */
  rowWriteInFlight?(tableId: TableId): RowWrite | null;
  /**
   * The `k` nearest rows by an hnsw index (its live state: rows must still be read through this
   * source), or null when this source cannot use the index (the caller scans exactly).
   */
  vectorSearch?(tableId: TableId, indexId: IndexId, vector: Float32Array, k: number, ef: number): Promise<VectorHit[]> | null;
  /** Rows an hnsw index holds now (undefined: no such index). */
  vectorIndexSize?(indexId: IndexId): number | undefined;
}

/** The vector projection as the query layer sees it. */
export interface VectorSearcher {
  search(indexId: number, vector: Float32Array, k: number, ef: number): Promise<VectorHit[]> | null;
  /** Rows an index holds (undefined: no such index). */
  indexSize(indexId: number): number | undefined;
}

export class SnapshotSource implements RowSource {
  constructor(
    private readonly store: RowVersionedStore,
    private readonly snapshot: StoreSnapshot,
    private readonly vectors: VectorSearcher | null = null,
  ) {}

  vectorSearch(_tableId: TableId, indexId: IndexId, vector: Float32Array, k: number, ef: number): Promise<VectorHit[]> | null {
    return this.vectors ? this.vectors.search(indexId, vector, k, ef) : null;
  }

  vectorIndexSize(indexId: IndexId): number | undefined {
    return this.vectors?.indexSize(indexId);
  }

  rowVersion(tableId: TableId): number | null {
    return this.store.rowVersion(this.snapshot, tableId);
  }

  get rowWrites(): RowWriteSignal {
    return this.store;
  }

  rowWriteInFlight(tableId: TableId): RowWrite | null {
    return this.store.rowWriteInFlight(this.snapshot, tableId);
  }

  async *rows(tableId: TableId, range: ByteRange): AsyncIterable<[Uint8Array, Uint8Array][]> {
    const whole = keys.idRange(keys.KeySpace.Row, tableId);
    const gte = range.gte ? keys.rowKey(tableId, range.gte) : whole.gte;
    const lt = range.lt ? keys.rowKey(tableId, range.lt) : whole.lt;
    for await (const batch of this.store.entries({ gte, lt, reverse: range.reverse, snapshot: this.snapshot, batchSize: LIMITS.batchRows })) {
      yield batch.map(([k, v]) => [keys.pkOfRowKey(k), v] as [Uint8Array, Uint8Array]);
    }
  }

  async *indexEntries(indexId: IndexId, range: ByteRange): AsyncIterable<Uint8Array[]> {
    const whole = keys.idRange(keys.KeySpace.IndexEntry, indexId);
    const gte = range.gte ? keys.indexPrefix(indexId, range.gte) : whole.gte;
    const lt = range.lt ? keys.indexPrefix(indexId, range.lt) : whole.lt;
    for await (const batch of this.store.entries({ gte, lt, reverse: range.reverse, snapshot: this.snapshot, batchSize: LIMITS.batchRows })) {
      yield batch.map(([k]) => k.subarray(5));
    }
  }

  getRows(tableId: TableId, pks: readonly Uint8Array[], options?: GetManyOptions): Promise<(Uint8Array | undefined)[]> {
    return this.store.getMany(
      pks.map((pk) => keys.rowKey(tableId, pk)),
      this.snapshot,
      options,
    );
  }
}

/** Reads of a DML statement through the sequencer's WriteView (sees records not yet applied). */
export class WriteViewSource implements RowSource {
  constructor(private readonly view: WriteView) {}

  /** A statement's own reads see its pending changes: never from a cache. */
  rowVersion(): null {
    return null;
  }

  rows(tableId: TableId, range: ByteRange): AsyncIterable<[Uint8Array, Uint8Array][]> {
    return this.view.rows(tableId, { ...(range.gte ? { gte: range.gte } : {}), ...(range.lt ? { lt: range.lt } : {}), reverse: range.reverse });
  }

  indexEntries(indexId: IndexId, range: ByteRange): AsyncIterable<Uint8Array[]> {
    return this.view.indexRange(indexId, { ...(range.gte ? { gte: range.gte } : {}), ...(range.lt ? { lt: range.lt } : {}), reverse: range.reverse });
  }

  async getRows(tableId: TableId, pks: readonly Uint8Array[]): Promise<(Uint8Array | undefined)[]> {
    return Promise.all(pks.map((pk) => this.view.getRow(tableId, pk)));
  }
}
