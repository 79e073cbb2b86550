/**
 * Log records: the facts the log stores, one per committed transaction. A payload is one byte of
 * schema version followed by the Avro encoding (core/log-record-schema.ts) of the LogRecord union.
 * The mapping between the TypeScript unions and avsc's union values lives in small functions here.
 */
import type { Type } from 'avsc';
import type { ColumnDef, ConstraintDef, ConstraintKind, ForeignKeyAction, IndexDef, IndexKind, TableDef, TableId, TableKind } from './catalog.js';
import { SvcError, isSvcError } from './errors.js';
import { encodeRowRecord } from './log-record-rows.js';
import { BRANCH, LOG_RECORD_SCHEMA_V1, LOG_RECORD_SCHEMA_V2, LOG_RECORD_SCHEMA_V3, buildLogRecordType } from './log-record-schema.js';
import { decodeValue, encodeValue } from './row-codec.js';
import type { SqlType, SqlTypeName } from './values.js';

export type RowOp = 'insert' | 'update' | 'delete';

export interface RowChange {
  readonly kind: 'row';
  readonly tableId: TableId;
  readonly op: RowOp;
  /** encodeKey of the PK. */
  readonly key: Uint8Array;
  /** Row image (core/row-codec). */
  readonly before: Uint8Array | null;
  readonly after: Uint8Array | null;
}

export type CatalogChange =
  | { readonly kind: 'put_table'; readonly table: TableDef } // create or alter: the full new definition
  | { readonly kind: 'drop_table'; readonly tableId: TableId }
  | { readonly kind: 'truncate'; readonly tableIds: readonly TableId[] };

export interface SequenceUpdate {
  readonly kind: 'sequence';
  readonly name: string;
  readonly lastValue: bigint;
}

/**
 * A catalog object that is not a table (a CDC stream, a webhook): a JSON definition under a
 * kind, a tenant and a name. Put again to change it (PAUSE, RESUME), dropped by name.
 */
export interface PutObject {
  readonly kind: 'put_object';
  readonly objectKind: string;
  readonly tenant: string;
  readonly name: string;
  readonly definition: string;
  /** A CDC stream created with a snapshot: the rows of this table are copied as of this record. */
  readonly snapshot: { readonly tableId: TableId; readonly rows: bigint } | null;
}

export interface DropObject {
  readonly kind: 'drop_object';
  readonly objectKind: string;
  readonly tenant: string;
  readonly name: string;
}

export type TxnOp = RowChange | CatalogChange | SequenceUpdate | PutObject | DropObject;

/** One committed transaction: its ops in order. */
export interface TxnRecord {
  readonly type: 'txn';
  readonly txnId: string;
  readonly tenant: string;
  readonly timestampMicros: bigint;
  readonly ops: readonly TxnOp[];
  /**
   * The change-event sequence of the first op, stamped by the sequencer (sequenceSpan says how
   * many numbers the record takes). Absent in records of schema v1 and in unstamped test records:
   * then eventSequenceBase derives it from the LSN.
   */
  readonly firstSequence?: bigint;
}

/** Room for more record types: new union branches are appended at the end. */
export type LogRecord = TxnRecord;

export const LOG_RECORD_SCHEMA_VERSION = 3;

const TYPE_V1: Type = buildLogRecordType(LOG_RECORD_SCHEMA_V1);
const TYPE_V2: Type = buildLogRecordType(LOG_RECORD_SCHEMA_V2);
const TYPE_V3: Type = buildLogRecordType(LOG_RECORD_SCHEMA_V3);

/** Sequence numbers one op takes: one, plus one per row a snapshot copies. */
export function opSequenceSpan(op: TxnOp): bigint {
  return op.kind === 'put_object' && op.snapshot ? 1n + op.snapshot.rows : 1n;
}

/** Sequence numbers a record takes: the sum over its ops. */
export function sequenceSpan(record: TxnRecord): bigint {
  // Ops taking one are counted as a number: a bigint sum allocated a bigint per op (10,000 per bulk insert).
  let ones = 0;
  let snapshots = 0n;
  for (const op of record.ops) {
    if (op.kind === 'put_object' && op.snapshot) snapshots += opSequenceSpan(op);
    else ones += 1;
  }
  return BigInt(ones) + snapshots;
}

/** Ops per unstamped record the LSN-derived sequence leaves room for (2^20). */
const UNSTAMPED_OPS_MAX = 1n << 20n;

/**
 * The event sequence of a record's first op: its stamp, or for an unstamped (v1) record
 * lsn * 2^20, so the sequences of old logs are deterministic and below any stamp the
 * sequencer hands out after them (nextSequenceAfter).
 */
export function eventSequenceBase(record: TxnRecord, lsn: number): bigint {
  return record.firstSequence ?? BigInt(lsn) * UNSTAMPED_OPS_MAX;
}

/** The first sequence of the record after `record` (at `lsn`); 1 for an empty log. */
export function nextSequenceAfter(record: TxnRecord | null, lsn: number): bigint {
  if (record === null) return 1n;
  if (record.firstSequence === undefined) return BigInt(lsn + 1) * UNSTAMPED_OPS_MAX;
  return record.firstSequence + sequenceSpan(record);
}

// ---------------------------------------------------------------------------------------------
// Encoding

const SCRATCH_BYTES_INITIAL = 64 * 1024;
/** A scratch buffer grown past this by a huge transaction is dropped after use. */
const SCRATCH_BYTES_RETAINED_MAX = 4 * 1024 * 1024;
let scratch = Buffer.allocUnsafe(SCRATCH_BYTES_INITIAL);

/** The payload of a record: version byte + Avro. Row images and keys are copied, not retained. */
export function encodeLogRecord(record: LogRecord): Uint8Array {
  // Row changes and sequence updates (every DML record): written directly, byte for byte the same.
  const rows = encodeRowRecord(record, LOG_RECORD_SCHEMA_VERSION);
  if (rows !== null) return rows;
  const value = toAvroTxn(record);
  try {
    for (;;) {
      scratch[0] = LOG_RECORD_SCHEMA_VERSION;
      const end = TYPE_V3.encode(value, scratch, 1);
      if (end >= 0) return new Uint8Array(scratch.subarray(0, end));
      scratch = Buffer.allocUnsafe(Math.max(scratch.length * 2, scratch.length - end));
    }
  } catch (err) {
    if (isSvcError(err)) throw err;
    throw new SvcError('INTERNAL_ERROR', `log record does not fit its schema: ${(err as Error).message}`, {}, err);
  } finally {
    if (scratch.length > SCRATCH_BYTES_RETAINED_MAX) scratch = Buffer.allocUnsafe(SCRATCH_BYTES_INITIAL);
  }
}

function toAvroTxn(record: TxnRecord): object {
  return {
    txnId: record.txnId,
    tenant: record.tenant,
    timestampMicros: record.timestampMicros,
    ops: record.ops.map(toAvroOp),
    firstSequence: record.firstSequence ?? -1n,
  };
}

function toAvroOp(op: TxnOp): object {
  switch (op.kind) {
    // Literal keys (equal to BRANCH.*): a computed key makes V8 build the object the slow way.
    case 'row':
      return { 'svcdb.log.RowChange': { tableId: op.tableId, op: op.op, key: op.key, before: op.before, after: op.after } };
    case 'put_table':
      return { 'svcdb.log.PutTable': { table: toAvroTable(op.table) } };
    case 'drop_table':
      return { 'svcdb.log.DropTable': { tableId: op.tableId } };
    case 'truncate':
      return { 'svcdb.log.TruncateTables': { tableIds: op.tableIds } };
    case 'sequence':
      return { 'svcdb.log.SequenceUpdate': { name: op.name, lastValue: op.lastValue } };
    case 'put_object':
      return {
        'svcdb.log.PutObject': {
          objectKind: op.objectKind,
          tenant: op.tenant,
          name: op.name,
          definition: op.definition,
          snapshotTableId: op.snapshot?.tableId ?? -1,
          snapshotRows: op.snapshot?.rows ?? 0n,
        },
      };
    case 'drop_object':
      return { 'svcdb.log.DropObject': { objectKind: op.objectKind, tenant: op.tenant, name: op.name } };
  }
}

function toAvroTable(table: TableDef): object {
  return {
    id: table.id,
    tenant: table.tenant,
    schema: table.schema,
    name: table.name,
    kind: table.kind,
    columns: table.columns.map(toAvroColumn),
    primaryKey: table.primaryKey,
    indexes: table.indexes,
    constraints: table.constraints.map((c) => ({ ...c, references: c.references ?? null })),
    viewSql: table.viewSql,
    createdAtMicros: table.createdAtMicros,
    updatedAtMicros: table.updatedAtMicros,
  };
}

function toAvroColumn(column: ColumnDef): object {
  const array = column.type.name === 'array';
  const type = array ? (column.type.element ?? { name: 'text' }) : column.type;
  return {
    id: column.id,
    name: column.name,
    type: {
      name: type.name,
      length: type.length ?? null,
      precision: type.precision ?? null,
      scale: type.scale ?? null,
      dimension: type.dimension ?? null,
      array,
    },
    nullable: column.nullable,
    defaultExpr: column.defaultExpr,
    missingValue: encodeValue(column.type, column.missingValue),
    sequence: column.sequence,
  };
}

// ---------------------------------------------------------------------------------------------
// Decoding

function corrupt(message: string, cause?: unknown): SvcError {
  return new SvcError('LOG_CORRUPT', message, {}, cause);
}

/**
 * Decodes a payload written by encodeLogRecord (of this or an older schema version). Keys and row
 * images come back as plain Uint8Array views of one private copy of `payload` (the caller may reuse
 * its buffer). Throws LOG_CORRUPT on an
 * unknown version or bytes that do not decode.
 */
export function decodeLogRecord(payload: Uint8Array): LogRecord {
  if (payload.length === 0) throw corrupt('empty log record payload');
  const version = payload[0];
  const type = version === 3 ? TYPE_V3 : version === 2 ? TYPE_V2 : version === 1 ? TYPE_V1 : null;
  if (type === null) throw corrupt(`unknown log record schema version ${version}`);
  // One private copy: decoded keys and images are views of it, never of the caller's buffer.
  const bytes = Buffer.from(payload);
  try {
    const { value, offset } = type.decode(bytes, 1);
    if (offset < 0) throw corrupt('truncated log record payload');
    if (offset !== bytes.length) throw corrupt(`${bytes.length - offset} trailing bytes after the log record`);
    return fromAvroTxn(value as AvroTxn);
  } catch (err) {
    if (isSvcError(err) && err.code === 'LOG_CORRUPT') throw err;
    throw corrupt(`undecodable log record: ${(err as Error).message}`, err);
  }
}

// The shapes avsc produces for the v1 schema.
interface AvroTxn {
  txnId: string;
  tenant: string;
  timestampMicros: bigint;
  ops: AvroOp[];
  firstSequence?: bigint;
}
type AvroOp = Partial<Record<(typeof BRANCH)[keyof typeof BRANCH], unknown>>;
interface AvroRow {
  tableId: number;
  op: RowOp;
  key: Uint8Array;
  before: Uint8Array | null;
  after: Uint8Array | null;
}
interface AvroPutObject {
  objectKind: string;
  tenant: string;
  name: string;
  definition: string;
  snapshotTableId: number;
  snapshotRows: bigint;
}
interface AvroSqlType {
  name: SqlTypeName;
  length: number | null;
  precision: number | null;
  scale: number | null;
  dimension: number | null;
  /** Schema v3; absent in v1/v2 payloads. */
  array?: boolean;
}
interface AvroColumn {
  id: number;
  name: string;
  type: AvroSqlType;
  nullable: boolean;
  defaultExpr: string | null;
  missingValue: Uint8Array;
  sequence: string | null;
}
interface AvroIndex {
  id: number;
  name: string;
  kind: IndexKind;
  columnIds: number[];
  descending: boolean[];
  unique: boolean;
  primary: boolean;
  options: Record<string, number | string>;
}
interface AvroConstraint {
  name: string;
  kind: ConstraintKind;
  definition: string;
  columnIds: number[];
  references: { tableId: number; columnIds: number[]; onDelete: ForeignKeyAction } | null;
}
interface AvroTable {
  id: number;
  tenant: string;
  schema: string;
  name: string;
  kind: TableKind;
  columns: AvroColumn[];
  primaryKey: number[];
  indexes: AvroIndex[];
  constraints: AvroConstraint[];
  viewSql: string | null;
  createdAtMicros: bigint;
  updatedAtMicros: bigint;
}

function fromAvroTxn(raw: AvroTxn): TxnRecord {
  const ops: TxnOp[] = new Array<TxnOp>(raw.ops.length);
  for (let i = 0; i < raw.ops.length; i++) ops[i] = fromAvroOp(raw.ops[i]!);
  const record = { type: 'txn' as const, txnId: raw.txnId, tenant: raw.tenant, timestampMicros: raw.timestampMicros, ops };
  return raw.firstSequence === undefined || raw.firstSequence < 0n ? record : { ...record, firstSequence: raw.firstSequence };
}

function fromAvroOp(op: AvroOp): TxnOp {
  const row = op[BRANCH.row] as AvroRow | undefined;
  if (row !== undefined) {
    return { kind: 'row', tableId: row.tableId, op: row.op, key: row.key, before: row.before, after: row.after };
  }
  const put = op[BRANCH.putTable] as { table: AvroTable } | undefined;
  if (put !== undefined) return { kind: 'put_table', table: fromAvroTable(put.table) };
  const drop = op[BRANCH.dropTable] as { tableId: number } | undefined;
  if (drop !== undefined) return { kind: 'drop_table', tableId: drop.tableId };
  const truncate = op[BRANCH.truncate] as { tableIds: number[] } | undefined;
  if (truncate !== undefined) return { kind: 'truncate', tableIds: truncate.tableIds };
  const sequence = op[BRANCH.sequence] as { name: string; lastValue: bigint } | undefined;
  if (sequence !== undefined) return { kind: 'sequence', name: sequence.name, lastValue: sequence.lastValue };
  const object = op[BRANCH.putObject] as AvroPutObject | undefined;
  if (object !== undefined) {
    const snapshot = object.snapshotTableId >= 0 ? { tableId: object.snapshotTableId, rows: object.snapshotRows } : null;
    return { kind: 'put_object', objectKind: object.objectKind, tenant: object.tenant, name: object.name, definition: object.definition, snapshot };
  }
  const dropped = op[BRANCH.dropObject] as { objectKind: string; tenant: string; name: string } | undefined;
  if (dropped !== undefined) return { kind: 'drop_object', objectKind: dropped.objectKind, tenant: dropped.tenant, name: dropped.name };
  throw corrupt(`unknown op branch ${Object.keys(op).join(',')}`);
}

function fromAvroTable(raw: AvroTable): TableDef {
  return {
    id: raw.id,
    tenant: raw.tenant,
    schema: raw.schema,
    name: raw.name,
    kind: raw.kind,
    columns: raw.columns.map(fromAvroColumn),
    primaryKey: raw.primaryKey,
    indexes: raw.indexes.map(fromAvroIndex),
    constraints: raw.constraints.map(fromAvroConstraint),
    viewSql: raw.viewSql,
    createdAtMicros: raw.createdAtMicros,
    updatedAtMicros: raw.updatedAtMicros,
  };
}

function fromAvroColumn(raw: AvroColumn): ColumnDef {
  return {
    id: raw.id,
    name: raw.name,
    type: fromAvroSqlType(raw.type),
    nullable: raw.nullable,
    defaultExpr: raw.defaultExpr,
    missingValue: decodeValue(raw.missingValue),
    sequence: raw.sequence,
  };
}

function fromAvroSqlType(raw: AvroSqlType): SqlType {
  const type: { -readonly [K in keyof SqlType]: SqlType[K] } = { name: raw.name };
  if (raw.length !== null) type.length = raw.length;
  if (raw.precision !== null) type.precision = raw.precision;
  if (raw.scale !== null) type.scale = raw.scale;
  if (raw.dimension !== null) type.dimension = raw.dimension;
  return raw.array === true ? { name: 'array', element: type } : type;
}

function fromAvroIndex(raw: AvroIndex): IndexDef {
  return {
    id: raw.id,
    name: raw.name,
    kind: raw.kind,
    columnIds: raw.columnIds,
    descending: raw.descending,
    unique: raw.unique,
    primary: raw.primary,
    options: { ...raw.options },
  };
}

function fromAvroConstraint(raw: AvroConstraint): ConstraintDef {
  const base = { name: raw.name, kind: raw.kind, definition: raw.definition, columnIds: raw.columnIds };
  if (raw.references === null) return base;
  const { tableId, columnIds, onDelete } = raw.references;
  return { ...base, references: { tableId, columnIds, onDelete } };
}
