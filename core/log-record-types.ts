/**
 * The facts the log stores, as TypeScript types: one TxnRecord per committed transaction and its ops.
 * core/log-records.ts encodes and decodes them (and re-exports these types).
 */
import type { TableDef, TableId } from './catalog.js';

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
