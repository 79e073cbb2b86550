import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ColumnDef, IndexDef, TableDef } from '../../core/catalog.js';
import { encodeKey } from '../../core/key-encoding.js';
import type { RowChange, TxnOp, TxnRecord } from '../../core/log-records.js';
import { silentLogger } from '../../core/logger.js';
import { encodeRow } from '../../core/row-codec.js';
import type { SqlType, SqlValue } from '../../core/values.js';
import { openLog, type Log } from '../../log/index.js';
import { openStateStore, prepareDataDir, Projections, type DataDirLayout, type StateStore } from '../../projections/index.js';

/** A real log + LevelDB + projections in a data directory, as the server wires them. */
export interface Stack {
  readonly layout: DataDirLayout;
  readonly log: Log;
  readonly store: StateStore;
  readonly projections: Projections;
  close(): Promise<void>;
}

export async function tempDir(prefix = 'svcdb-test-'): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

export async function openLogAt(logDir: string, overrides: { segmentSizeBytesMax?: number } = {}): Promise<Log> {
  return openLog({
    dir: logDir,
    segmentSizeBytesMax: overrides.segmentSizeBytesMax ?? 1024 * 1024,
    durability: 'commit',
    fsyncIntervalMs: 10,
    readBatchBytesMax: 64 * 1024,
    indexIntervalBytes: 4096,
    logger: silentLogger,
  });
}

export async function openStack(
  dataDir: string,
  options: {
    start?: boolean;
    segmentSizeBytesMax?: number;
    readBatchBytesMax?: number;
    retentionEnabled?: boolean;
    vectorCheckpointRecordsMax?: number;
    stopDrainMsMax?: number;
  } = {},
): Promise<Stack> {
  const layout = await prepareDataDir(dataDir, { create: true });
  const store = await openStateStore(layout.stateDir);
  const log = await openLogAt(layout.logDir, options);
  const readBatchBytesMax = options.readBatchBytesMax ?? 64 * 1024;
  const retentionEnabled = options.retentionEnabled ?? false;
  const vectorCheckpoint = options.vectorCheckpointRecordsMax === undefined ? {} : { vectorCheckpointRecordsMax: options.vectorCheckpointRecordsMax };
  const projections = await Projections.open(log, store, {
    readBatchBytesMax,
    retentionEnabled,
    logger: silentLogger,
    vectorDir: layout.vectorDir,
    ...vectorCheckpoint,
    ...(options.stopDrainMsMax === undefined ? {} : { stopDrainMsMax: options.stopDrainMsMax }),
  });
  if (options.start !== false) await projections.start();
  let closed = false;
  return {
    layout,
    log,
    store,
    projections,
    async close() {
      if (closed) return;
      closed = true;
      await projections.stop();
      await log.close();
      await store.close();
    },
  };
}

const int8: SqlType = { name: 'int8' };
const text: SqlType = { name: 'text' };
const int4: SqlType = { name: 'int4' };

export function column(id: number, name: string, type: SqlType, nullable = true): ColumnDef {
  return { id, name, type, nullable, defaultExpr: null, missingValue: null, sequence: null };
}

/** A table (id BIGINT PRIMARY KEY, name TEXT, score INTEGER) with an optional index on score. */
export function itemsTable(tableId: number, options: { name?: string; scoreIndexId?: number } = {}): TableDef {
  const indexes: IndexDef[] = [
    {
      id: tableId * 100,
      name: `${options.name ?? 'items'}_pkey`,
      kind: 'btree',
      columnIds: [1],
      descending: [false],
      unique: true,
      primary: true,
      options: {},
    },
  ];
  if (options.scoreIndexId !== undefined) {
    indexes.push({
      id: options.scoreIndexId,
      name: `${options.name ?? 'items'}_score_idx`,
      kind: 'btree',
      columnIds: [3],
      descending: [false],
      unique: false,
      primary: false,
      options: {},
    });
  }
  return {
    id: tableId,
    tenant: 'default',
    schema: 'public',
    name: options.name ?? 'items',
    kind: 'table',
    columns: [column(1, 'id', int8, false), column(2, 'name', text), column(3, 'score', int4)],
    primaryKey: [1],
    indexes,
    constraints: [],
    viewSql: null,
    createdAtMicros: 1_700_000_000_000_000n,
    updatedAtMicros: 1_700_000_000_000_000n,
  };
}

export interface ItemRow {
  readonly id: bigint;
  readonly name: string | null;
  readonly score: number | null;
}

export const itemKey = (id: bigint): Uint8Array => encodeKey([int8], [id]);

export function itemImage(table: TableDef, row: ItemRow): Uint8Array {
  const values: SqlValue[] = [row.id, row.name, row.score];
  return encodeRow(table.columns, values);
}

export function rowChange(table: TableDef, op: RowChange['op'], before: ItemRow | null, after: ItemRow | null): RowChange {
  const id = (after ?? before)!.id;
  return {
    kind: 'row',
    tableId: table.id,
    op,
    key: itemKey(id),
    before: before ? itemImage(table, before) : null,
    after: after ? itemImage(table, after) : null,
  };
}

let txnCounter = 0;
export function txn(ops: TxnOp[]): TxnRecord {
  txnCounter += 1;
  return { type: 'txn', txnId: `t${txnCounter}`, tenant: 'default', timestampMicros: BigInt(Date.now()) * 1000n, ops };
}

/** Every key/value of the store as hex strings, for key-for-key comparisons. */
export async function dumpStore(store: StateStore): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const batch of store.entries({ gte: new Uint8Array([0]), lt: new Uint8Array([0xff]) })) {
    for (const [key, value] of batch) out.set(Buffer.from(key).toString('hex'), Buffer.from(value).toString('hex'));
  }
  return out;
}
