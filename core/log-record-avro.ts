/**
 * The mapping between log records' TypeScript unions (core/log-records.ts) and the values avsc
 * encodes and decodes for the log record schema (core/log-record-schema.ts): one small function a shape.
 */
import type { ColumnDef, ConstraintDef, ConstraintKind, ForeignKeyAction, IndexDef, IndexKind, TableDef, TableKind } from './catalog.js';
import { SvcError } from './errors.js';
import type { RowOp, TxnOp, TxnRecord } from './log-record-types.js';
import { BRANCH } from './log-record-schema.js';
import { decodeValue, encodeValue } from './row-codec.js';
import type { SqlType, SqlTypeName } from './values.js';

/** A record as the value avsc encodes. */
export function toAvroTxn(record: TxnRecord): object {
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

// The shapes avsc produces for the v1 schema.
export interface AvroTxn {
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

/** A record from the value avsc decoded. */
export function fromAvroTxn(raw: AvroTxn): TxnRecord {
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

/** LOG_CORRUPT: a payload that does not decode as a log record. */
export function corrupt(message: string, cause?: unknown): SvcError {
  return new SvcError('LOG_CORRUPT', message, {}, cause);
}
