import type { TableDef, TableId } from '../core/catalog.js';
import { assert, fail } from '../core/errors.js';
import {
  decodeLogRecord,
  eventSequenceBase,
  nextSequenceAfter,
  opSequenceSpan,
  type CatalogChange,
  type DropObject,
  type PutObject,
  type RowChange,
  type SequenceUpdate,
  type TxnOp,
} from '../core/log-records.js';
import type { Logger } from '../core/logger.js';
import { lsn, type Lsn } from '../core/units.js';
import type { LogEntry } from '../log/index.js';
import { decodeObject, decodeStats, decodeTableDef, encodeObject, encodeStats, encodeTableDef } from './catalog-codec.js';
import { CatalogState, type CatalogObject, type TableEntry } from './catalog-state.js';
import { raiseColumnIdsFromRows } from './column-ids-upgrade.js';
import type { Consumer } from './consumer.js';
import {
  consumerOffsetKey,
  decodeI64,
  decodeOffset,
  encodeI64,
  encodeU64,
  idRange,
  indexEntryKey,
  KeySpace,
  objectStoreKey,
  pkOfRowKey,
  sequenceKey,
  snapshotRange,
  snapshotRowKey,
  spaceRange,
  tableHistoryKey,
  tableKey,
  tableStatsKey,
} from './keys.js';
import type { PreparedRecord, RecordHandoff } from './record-handoff.js';
import { rowChangeOps, type StatsDelta } from './row-ops.js';
import { PROJECTION_LIMITS } from './limits.js';
import type { KvOp, PreparedWrite, StateStore } from './state-store.js';

export const TABLES_CONSUMER = 'tables';
/** Beside the tables offset: the event sequence after it, so sequences never restart when the log's records are gone. */
const NEXT_SEQUENCE_KEY = 'tables:next-sequence';
/** Beside the tables offset: the highest table and index ids ever used (never handed out again). */
const IDS_HIGH_KEY = 'tables:ids-high';

const { bulkChunkKeys } = PROJECTION_LIMITS;
/** The keys every commit writes and the open reads (built once: a single-row insert's group commit wrote them anew each time). */
const OFFSET_KEY = consumerOffsetKey(TABLES_CONSUMER);
const NEXT_SEQUENCE_STORE_KEY = consumerOffsetKey(NEXT_SEQUENCE_KEY);
const IDS_HIGH_STORE_KEY = consumerOffsetKey(IDS_HIGH_KEY);

/**
 * The tables projection: catalog, rows, secondary btree indexes and statistics, applied together
 * so one offset covers them all (the rows of a table are only meaningful with its definition).
 *
 * Row and index writes are idempotent puts and deletes. Statistics, catalog entries and the offset
 * are written only in the batch that completes a log batch, so a crash in the middle of a long
 * operation (dropping or indexing a big table) re-applies it from the same starting statistics.
 */
export class TablesProjection implements Consumer {
  readonly name = TABLES_CONSUMER;
  private appliedOffset: Lsn;
  private nextSequenceAfterOffset: bigint;
  private dataOps: KvOp[] = [];
  /** A store batch holding the first ops of dataOps already (a prepared record's: DeferredRecord). */
  private preparedWrite: PreparedWrite | undefined;
  /** Replaced, not cleared, after each commit: clear() links the old table to the new one as an outgrown Map does (PROJECTION_LIMITS.churnedMapRenewDeletes). */
  private metaOps = new Map<string, KvOp>();
  private touched = new Set<TableEntry>();
  /** catalog.idsHigh as stored (idsHighBytes), for the ids object it was encoded from: a new one only when a table or index is put. */
  private idsHighStored: { readonly ids: object; readonly bytes: Uint8Array } | null = null;

  private constructor(
    private readonly store: StateStore,
    readonly catalog: CatalogState,
    offset: Lsn,
    private readonly logger: Logger,
    private readonly handoff: RecordHandoff | null,
    nextSequence: bigint,
  ) {
    this.appliedOffset = offset;
    this.nextSequenceAfterOffset = nextSequence;
  }

  /**
   * Loads the catalog, sequences, statistics and offset from the store. With a handoff, records
   * the sequencer prepared are applied from memory instead of being decoded again.
   */
  static async load(store: StateStore, logger: Logger, handoff: RecordHandoff | null = null): Promise<TablesProjection> {
    const catalog = new CatalogState();
    const stats = new Map<TableId, Uint8Array>();
    for await (const batch of store.entries(spaceRange(KeySpace.TableStats))) {
      for (const [key, value] of batch) stats.set(new DataView(key.buffer, key.byteOffset).getUint32(1, false), value);
    }
    for await (const batch of store.entries(spaceRange(KeySpace.Table))) {
      for (const [, value] of batch) {
        const def = decodeTableDef(value);
        catalog.putTable(def, decodeStats(stats.get(def.id)));
      }
    }
    const decoder = new TextDecoder();
    for await (const batch of store.entries(spaceRange(KeySpace.Sequence))) {
      for (const [key, value] of batch) catalog.setSequence(decoder.decode(key.subarray(1)), decodeI64(value));
    }
    for await (const batch of store.entries(spaceRange(KeySpace.Object))) {
      for (const [, value] of batch) catalog.putObject(decodeObject(value));
    }
    const offset = decodeOffset(await store.get(OFFSET_KEY));
    const ids = await store.get(IDS_HIGH_STORE_KEY);
    const high = ids ? (JSON.parse(Buffer.from(ids).toString('utf8')) as Parameters<CatalogState['raiseIds']>[0]) : null;
    if (high) catalog.raiseIds(high);
    if (high?.columns === undefined) await raiseColumnIdsFromRows(store, catalog, logger);
    const stored = await store.get(NEXT_SEQUENCE_STORE_KEY);
    return new TablesProjection(store, catalog, offset, logger, handoff, stored ? decodeI64(stored) : 1n);
  }

  get offset(): Lsn {
    return this.appliedOffset;
  }

  async applyBatch(entries: readonly LogEntry[]): Promise<void> {
    for (const entry of entries) {
      if (entry.lsn <= this.appliedOffset) continue;
      const prepared = this.handoff?.take(entry.lsn);
      let snapshot = false;
      if (prepared) {
        this.applyPrepared(prepared);
        // Stamped by the sequencer, row changes and sequence updates only: one sequence per op (RowRecordEffects.sequences).
        const { firstSequence, ops } = prepared.record;
        this.nextSequenceAfterOffset = firstSequence === undefined ? nextSequenceAfter(prepared.record, entry.lsn) : firstSequence + BigInt(ops.length);
      } else {
        const record = decodeLogRecord(entry.payload);
        let sequence = eventSequenceBase(record, entry.lsn);
        for (const op of record.ops) {
          await this.applyOp(op, entry.lsn, sequence);
          sequence += opSequenceSpan(op);
          if (op.kind === 'put_object' && op.snapshot) snapshot = true;
        }
        this.nextSequenceAfterOffset = nextSequenceAfter(record, entry.lsn);
      }
      this.appliedOffset = entry.lsn;
      // A snapshot copied the rows as of this record: commit now, so a crash never re-applies
      // it over rows that later records of this batch had already changed in the store.
      if (snapshot) await this.commit();
    }
    await this.commit();
  }

  /** The change-event sequence of the record after the applied offset (kept with the offset). */
  get nextSequence(): bigint {
    return this.nextSequenceAfterOffset;
  }

  private applyPrepared(prepared: PreparedRecord): void {
    const { effects } = prepared;
    // A batch that holds these ops already is used by the next write if they are its first ops.
    const write = prepared.takeWrite?.();
    if (write && this.dataOps.length === 0 && this.preparedWrite === undefined) this.preparedWrite = write;
    else write?.discard();
    // A bulk record's 10,000 ops: one copy instead of a push each (this runs after the fdatasync, before the answer).
    if (this.dataOps.length === 0) this.dataOps = effects.ops.slice();
    else for (const op of effects.ops) this.dataOps.push(op);
    for (const [tableId, delta] of effects.deltas) {
      const table = this.catalog.table(tableId);
      assert(table, `prepared row changes for unknown table ${tableId}`);
      addStats(table, delta);
      this.touched.add(table);
    }
    for (const op of effects.sequences) this.applySequence(op);
  }

  private applySequence(op: SequenceUpdate): void {
    this.catalog.setSequence(op.name, op.lastValue);
    this.meta({ type: 'put', key: sequenceKey(op.name), value: encodeI64(op.lastValue) });
  }

  private async applyOp(op: TxnOp, at: Lsn, sequence: bigint): Promise<void> {
    switch (op.kind) {
      case 'row':
        return this.applyRow(op);
      case 'sequence':
        return this.applySequence(op);
      case 'put_object':
        return this.putObject(op, at, sequence);
      case 'drop_object':
        return this.dropObject(op);
      default:
        return this.applyCatalog(op, at);
    }
  }

  /**
   * A catalog object (CDC stream, webhook). A stream created with a snapshot gets a copy of its
   * table's rows as of this very record: applying in LSN order, the store holds exactly that state
   * now, and a re-apply after a crash copies the same rows again (idempotent puts).
   */
  private async putObject(op: PutObject, at: Lsn, sequence: bigint): Promise<void> {
    const previous = this.catalog.object(op.objectKind, op.tenant, op.name);
    const object: CatalogObject = {
      objectKind: op.objectKind,
      tenant: op.tenant,
      name: op.name,
      definition: op.definition,
      createdLsn: previous?.createdLsn ?? at,
      updatedLsn: at,
      createdSequence: previous?.createdSequence ?? sequence,
      snapshotRows: previous?.snapshotRows ?? op.snapshot?.rows ?? 0n,
    };
    if (!previous && op.snapshot) {
      await this.flushData();
      const copied = await this.copySnapshot(op.snapshot.tableId, at);
      assert(BigInt(copied) === op.snapshot.rows, `snapshot of table ${op.snapshot.tableId} copied ${copied} rows, the record reserved ${op.snapshot.rows}`);
    }
    this.catalog.putObject(object);
    this.meta({ type: 'put', key: objectStoreKey(op.objectKind, op.tenant, op.name), value: encodeObject(object) });
  }

  private async dropObject(op: DropObject): Promise<void> {
    const dropped = this.catalog.dropObject(op.objectKind, op.tenant, op.name);
    if (!dropped) return;
    if (dropped.snapshotRows > 0n) {
      await this.flushData();
      await this.deleteRange(snapshotRange(dropped.createdLsn));
    }
    this.meta({ type: 'del', key: objectStoreKey(op.objectKind, op.tenant, op.name) });
  }

  /** Copies a table's rows into the snapshot space of the object created at `at`; returns the count. */
  private async copySnapshot(tableId: TableId, at: Lsn): Promise<number> {
    let rows = 0;
    for await (const batch of this.store.entries({ ...idRange(KeySpace.Row, tableId), batchSize: bulkChunkKeys })) {
      await this.store.write(batch.map(([key, value]) => ({ type: 'put' as const, key: snapshotRowKey(at, pkOfRowKey(key)), value })));
      rows += batch.length;
    }
    return rows;
  }

  /**
   * A table's definition as of the record at `at` (null: it did not exist then). Read by log
   * consumers that run behind the catalog (CDC streams); only valid for `at` <= this offset.
   */
  async tableDefAt(tableId: TableId, at: Lsn): Promise<TableDef | null> {
    for await (const batch of this.store.entries({
      gte: tableHistoryKey(tableId, 0 as Lsn),
      lt: tableHistoryKey(tableId, (at + 1) as Lsn),
      reverse: true,
      limit: 1,
    })) {
      const [, value] = batch[0] ?? [];
      if (value === undefined) break;
      return value.length === 0 ? null : decodeTableDef(value);
    }
    // Tables created before definitions were kept by LSN: the current one is the best there is.
    return this.catalog.table(tableId)?.def ?? null;
  }

  private applyRow(change: RowChange): void {
    const table = this.catalog.table(change.tableId);
    // The message built only on failure (a template literal is a new string per row change).
    if (!table) fail(`row change for unknown table ${change.tableId}`);
    const delta: StatsDelta = { rowCount: 0, sizeBytes: 0, indexSizeBytes: 0 };
    rowChangeOps(table, change, this.dataOps, delta);
    addStats(table, delta);
    this.touched.add(table);
  }

  private async applyCatalog(change: CatalogChange, at: Lsn): Promise<void> {
    // Bulk work reads the store, so what this batch wrote so far must be there first.
    await this.flushData();
    if (change.kind === 'put_table') {
      await this.putTable(change.table);
      this.meta({ type: 'put', key: tableHistoryKey(change.table.id, at), value: encodeTableDef(change.table) });
    } else if (change.kind === 'drop_table') {
      await this.dropTable(change.tableId);
      this.meta({ type: 'put', key: tableHistoryKey(change.tableId, at), value: new Uint8Array(0) });
    } else for (const tableId of change.tableIds) await this.truncate(tableId);
  }

  private async putTable(def: TableDef): Promise<void> {
    const previous = this.catalog.table(def.id);
    const oldIndexIds = new Set(previous?.btreeIndexes.map((index) => index.def.id) ?? []);
    const entry = this.catalog.putTable(def);
    const newIndexIds = new Set(entry.btreeIndexes.map((index) => index.def.id));
    for (const indexId of oldIndexIds) {
      if (!newIndexIds.has(indexId)) entry.stats.indexSizeBytes -= await this.deleteRange(idRange(KeySpace.IndexEntry, indexId));
    }
    for (const index of entry.btreeIndexes) {
      if (!oldIndexIds.has(index.def.id) && previous) await this.backfillIndex(entry, index.def.id);
    }
    this.meta({ type: 'put', key: tableKey(def.id), value: encodeTableDef(def) });
    this.touched.add(entry);
  }

  private async dropTable(tableId: TableId): Promise<void> {
    const entry = this.catalog.dropTable(tableId);
    if (!entry) return;
    await this.deleteRange(idRange(KeySpace.Row, tableId));
    for (const index of entry.btreeIndexes) await this.deleteRange(idRange(KeySpace.IndexEntry, index.def.id));
    this.touched.delete(entry);
    this.meta({ type: 'del', key: tableKey(tableId) });
    this.meta({ type: 'del', key: tableStatsKey(tableId) });
  }

  private async truncate(tableId: TableId): Promise<void> {
    const entry = this.catalog.table(tableId);
    assert(entry, `truncate of unknown table ${tableId}`);
    await this.deleteRange(idRange(KeySpace.Row, tableId));
    for (const index of entry.btreeIndexes) await this.deleteRange(idRange(KeySpace.IndexEntry, index.def.id));
    Object.assign(entry.stats, { rowCount: 0, sizeBytes: 0, indexSizeBytes: 0 });
    this.touched.add(entry);
  }

  /** Builds the entries of an index added to a table that already has rows. */
  private async backfillIndex(entry: TableEntry, indexId: number): Promise<void> {
    const index = entry.btreeIndexes.find((candidate) => candidate.def.id === indexId);
    if (!index) return;
    const empty = new Uint8Array(0);
    for await (const batch of this.store.entries({ ...idRange(KeySpace.Row, entry.def.id), batchSize: bulkChunkKeys })) {
      const ops: KvOp[] = [];
      for (const [key, value] of batch) {
        const entryKey = indexEntryKey(indexId, index.keyOf(value), pkOfRowKey(key));
        ops.push({ type: 'put', key: entryKey, value: empty });
        entry.stats.indexSizeBytes += entryKey.length;
      }
      await this.store.write(ops);
    }
    this.logger.info({ table: entry.def.name, index: index.def.name }, 'index backfilled');
  }

  /** Deletes every key in the range, in chunks; returns the bytes of the keys deleted. */
  private async deleteRange(range: { gte: Uint8Array; lt: Uint8Array }): Promise<number> {
    let keyBytes = 0;
    for await (const batch of this.store.entries({ ...range, batchSize: bulkChunkKeys })) {
      await this.store.write(batch.map(([key]) => ({ type: 'del', key })));
      for (const [key] of batch) keyBytes += key.length;
    }
    return keyBytes;
  }

  private meta(op: KvOp): void {
    this.metaOps.set(Buffer.from(op.key).toString('latin1'), op);
  }

  private async flushData(): Promise<void> {
    const ops = this.dataOps;
    this.dataOps = [];
    await this.store.write(ops, this.takePreparedWrite());
  }

  /** The prepared batch holding the first of dataOps, once (the write that takes dataOps takes it). */
  private takePreparedWrite(): PreparedWrite | undefined {
    const write = this.preparedWrite;
    this.preparedWrite = undefined;
    return write;
  }

  /** One atomic batch: remaining row/index writes, statistics, catalog entries and the offset. */
  private async commit(): Promise<void> {
    const ops = this.dataOps;
    this.dataOps = [];
    for (const op of this.metaOps.values()) ops.push(op);
    if (this.metaOps.size > 0) this.metaOps = new Map();
    // After the catalog ops: a table dropped and created again in this batch gets its new stats.
    for (const table of this.touched) {
      if (this.catalog.table(table.def.id) === table) ops.push({ type: 'put', key: tableStatsKey(table.def.id), value: encodeStats(table.stats) });
    }
    if (this.touched.size > 0) this.touched = new Set();
    ops.push({ type: 'put', key: OFFSET_KEY, value: encodeU64(this.appliedOffset) });
    ops.push({ type: 'put', key: NEXT_SEQUENCE_STORE_KEY, value: encodeI64(this.nextSequenceAfterOffset) });
    ops.push({ type: 'put', key: IDS_HIGH_STORE_KEY, value: this.idsHighBytes() });
    await this.store.write(ops, this.takePreparedWrite());
  }

  private idsHighBytes(): Uint8Array {
    const ids = this.catalog.idsHigh;
    if (this.idsHighStored?.ids !== ids) this.idsHighStored = { ids, bytes: Buffer.from(JSON.stringify(ids)) };
    return this.idsHighStored.bytes;
  }
}

function addStats(table: TableEntry, delta: StatsDelta): void {
  table.stats.rowCount += delta.rowCount;
  table.stats.sizeBytes += delta.sizeBytes;
  table.stats.indexSizeBytes += delta.indexSizeBytes;
}

export const noOffset: Lsn = lsn(0);
