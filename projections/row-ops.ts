import { SvcError } from '../core/errors.js';
import type { RowChange, SequenceUpdate, TxnOp } from '../core/log-records.js';
import type { TableEntry } from './catalog-state.js';
import { indexEntryKey, ROW_KEY_PREFIX_BYTES, rowKey, writeRowKey } from './keys.js';
import type { KvOp } from './state-store.js';

const EMPTY = new Uint8Array(0);

/** Change in a table's statistics caused by one row change. */
export interface StatsDelta {
  rowCount: number;
  sizeBytes: number;
  indexSizeBytes: number;
}

/**
 * The key/value operations one row change makes: the row itself and its secondary index entries.
 * Index maintenance uses the before image carried in the log record, so applying never reads.
 * Shared by the tables projection (apply) and the pending overlay (validation before apply), so
 * the two can never disagree. Adds the statistics change to `delta`.
 */
export function rowChangeOps(table: TableEntry, change: RowChange, out: KvOp[], delta: StatsDelta, key = rowKey(change.tableId, change.key)): void {
  const { before, after } = change;
  if (after) out.push({ type: 'put', key, value: after });
  else out.push({ type: 'del', key });

  if (before && after) delta.sizeBytes += after.length - before.length;
  else if (after) {
    delta.rowCount += 1;
    delta.sizeBytes += key.length + after.length;
  } else if (before) {
    delta.rowCount -= 1;
    delta.sizeBytes -= key.length + before.length;
  }

  for (const index of table.btreeIndexes) {
    const oldKey = before ? index.keyOf(before) : null;
    const newKey = after ? index.keyOf(after) : null;
    if (oldKey && newKey && sameBytes(oldKey, newKey)) continue;
    if (oldKey) {
      const entry = indexEntryKey(index.def.id, oldKey, change.key);
      out.push({ type: 'del', key: entry });
      delta.indexSizeBytes -= entry.length;
    }
    if (newKey) {
      const entry = indexEntryKey(index.def.id, newKey, change.key);
      out.push({ type: 'put', key: entry, value: EMPTY });
      delta.indexSizeBytes += entry.length;
    }
  }
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The key/value effects of a record that only changes rows (and sequences). */
export interface RowRecordEffects {
  readonly ops: KvOp[];
  readonly deltas: Map<number, StatsDelta>;
  /**
   * The record's sequence updates, in record order: the rest of its ops are row changes, one
   * change-event sequence each, so it takes ops.length sequences (sequenceSpan) without another
   * pass over 10,000 row changes (each pass over a bulk record's ops is ~1 ms of cache misses).
   */
  readonly sequences: readonly SequenceUpdate[];
}

/** What the first pass over a row-only record finds: the bytes of its row keys and its sequence updates. */
export interface RowRecordShape {
  readonly keyBytes: number;
  readonly sequences: readonly SequenceUpdate[];
}

/**
 * The first pass of rowRecordEffects: null when the record changes the catalog; throws when a row
 * change names a table that does not exist. What the second pass (rowRecordOps) needs to know
 * before any op is built: the sequencer checks a record this way before appending it and may build
 * its ops while the log writes it.
 */
export function rowRecordShape(ops: readonly TxnOp[], tableOf: (tableId: number) => TableEntry | undefined): RowRecordShape | null {
  const sequences: SequenceUpdate[] = [];
  const keyBytes = rowKeyBytes(ops, tableOf, sequences);
  return keyBytes < 0 ? null : { keyBytes, sequences };
}

/**
 * rowRecordShape's pass: the bytes of the record's row keys, its sequence updates pushed onto
 * `sequences`; -1 when an op changes the catalog. A loop with nothing after it (docs/decisions.md,
 * "Loops that run long in a function's first call").
 */
function rowKeyBytes(ops: readonly TxnOp[], tableOf: (tableId: number) => TableEntry | undefined, sequences: SequenceUpdate[]): number {
  let keyBytes = 0;
  // The table looked up once per run of changes to it (a bulk record: one look-up, not 10,000).
  let known = -1;
  for (const op of ops) {
    if (op.kind === 'sequence') {
      sequences.push(op);
      continue;
    }
    if (op.kind !== 'row') return -1;
    if (op.tableId !== known) {
      if (!tableOf(op.tableId)) throw new SvcError('TABLE_NOT_FOUND', `table id ${op.tableId} does not exist`, { tableId: op.tableId });
      known = op.tableId;
    }
    keyBytes += ROW_KEY_PREFIX_BYTES + op.key.length;
  }
  return keyBytes;
}

/**
 * The effects of every row change of a record, with statistics per table; null when the record
 * changes the catalog (its effects depend on reading the store, so only the projection applies it).
 */
export function rowRecordEffects(ops: readonly TxnOp[], tableOf: (tableId: number) => TableEntry | undefined): RowRecordEffects | null {
  const shape = rowRecordShape(ops, tableOf);
  return shape && rowRecordOps(ops, tableOf, shape);
}

/** The second pass of rowRecordEffects, over a record whose shape rowRecordShape found (its tables exist). */
export function rowRecordOps(ops: readonly TxnOp[], tableOf: (tableId: number) => TableEntry | undefined, shape: RowRecordShape): RowRecordEffects {
  const effects: RowRecordEffects = { ops: [], deltas: new Map(), sequences: shape.sequences };
  // Every row key of the record is a view into one buffer (as keys.ts rowKeys): a bulk insert's
  // 10,000 small arrays of their own were a visible share of its garbage collection.
  addRowRecordOps(ops, tableOf, new Uint8Array(shape.keyBytes), effects.ops, effects.deltas);
  return effects;
}

/**
 * rowRecordOps' pass: each row change's ops onto `out`, its keys written into `slab`, statistics
 * per table into `deltas`. A loop with nothing after it (docs/decisions.md, "Loops that run long
 * in a function's first call").
 */
function addRowRecordOps(
  ops: readonly TxnOp[],
  tableOf: (tableId: number) => TableEntry | undefined,
  slab: Uint8Array,
  out: KvOp[],
  deltas: Map<number, StatsDelta>,
): void {
  let at = 0;
  let table: TableEntry | undefined;
  let delta: StatsDelta | undefined;
  for (const op of ops) {
    if (op.kind !== 'row') continue;
    if (table?.def.id !== op.tableId || delta === undefined) {
      table = tableOf(op.tableId);
      // Dropped since the shape was taken (the ops are built after the append): as rowRecordShape would say.
      if (!table) throw new SvcError('TABLE_NOT_FOUND', `table id ${op.tableId} does not exist`, { tableId: op.tableId });
      delta = deltas.get(op.tableId);
      if (!delta) deltas.set(op.tableId, (delta = { rowCount: 0, sizeBytes: 0, indexSizeBytes: 0 }));
    }
    const key = writeRowKey(slab, at, op.tableId, op.key);
    at += key.length;
    rowChangeOps(table, op, out, delta, key);
  }
}
