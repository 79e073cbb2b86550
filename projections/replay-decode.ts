/**
 * Replay's fast path through a log record that only changes rows: the Avro bytes of a v2 payload
 * are read in place (core/log-record-schema.ts TXN_RECORD_SCHEMA_V2) and each row change's key/value
 * effects are written straight into the chunk being packed, without building the record's objects
 * (avsc's decode, a private copy of the payload and an object per op cost more than the effects).
 * Anything else (an older schema, a sequence update, a catalog change, an unknown table, bytes that
 * do not read cleanly) says "not here" before writing anything, and the general path
 * (decodeLogRecord + rowRecordEffects) takes the record: it computes the same effects, or the
 * error, as a test checks byte for byte.
 */
import type { TableEntry } from './catalog-state.js';
import { KeySpace } from './keys.js';
import { sameBytes, type StatsDelta } from './row-ops.js';

/** Where the fast path writes a record's effects (replay-chunk.ts ChunkWriter). */
export interface EffectsSink {
  /** A key/value op whose key is `space` + u32 `id` + `first` + `second` (second may be empty). */
  keyOp(put: boolean, space: KeySpace, id: number, first: Uint8Array, second: Uint8Array, value: Uint8Array | null): void;
  /** The statistics change of the chunk for this table (created at zero). */
  deltaOf(tableId: number): StatsDelta;
}

/** A row change located in the payload: views, not copies. */
interface RowAt {
  tableId: number;
  key: Uint8Array;
  before: Uint8Array | null;
  after: Uint8Array | null;
}

/** What a record read by the fast path tells the chunk besides its effects. */
export interface FastRecord {
  /** Row changes it holds. */
  readonly rows: number;
  /** The sequencer's stamp (firstSequence), or null when unstamped. */
  readonly firstSequence: bigint | null;
  /** Tables whose rows it changes (for the vector flag). */
  readonly tableIds: readonly number[];
}

/**
 * Payload versions whose row-only records have this byte layout: v3 only added a field to SqlType,
 * which lives in catalog ops (never on this path), so its row ops encode exactly as v2's.
 */
const ROW_LAYOUT_VERSIONS: ReadonlySet<number> = new Set([2, 3]);
const BRANCH_ROW = 0;
const ROW_OPS = 3;
const NO_VALUE = new Uint8Array(0);

/** Reads the payload's Avro bytes; a read past the end or an unexpected value throws NotHere. */
class Reader {
  pos = 0;
  constructor(private readonly bytes: Uint8Array) {}

  get done(): boolean {
    return this.pos === this.bytes.length;
  }

  /** An Avro int/long that fits 2^31 in magnitude (lengths, counts, ids, branches). */
  int(): number {
    const b = this.bytes;
    // One byte (tags, table ids, short lengths: most of them): its zigzag value without the loop.
    if (this.pos < b.length && b[this.pos]! < 0x80) {
      const byte = b[this.pos++]!;
      return (byte >>> 1) ^ -(byte & 1);
    }
    let value = 0;
    let shift = 0;
    for (;;) {
      if (this.pos >= b.length || shift > 28) throw NOT_HERE;
      const byte = b[this.pos++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) break;
      shift += 7;
    }
    if (value > 0xffffffff) throw NOT_HERE;
    return value % 2 === 0 ? value / 2 : -(value + 1) / 2;
  }

  /** An Avro long of any size, as a bigint. */
  long(): bigint {
    const b = this.bytes;
    let value = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= b.length || shift > 63n) throw NOT_HERE;
      const byte = b[this.pos++]!;
      // A tenth byte holds bit 63 only: more would not fit 64 bits (the general path decides).
      if (shift === 63n && byte > 1) throw NOT_HERE;
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) break;
      shift += 7n;
    }
    return (value & 1n) === 0n ? value >> 1n : -((value + 1n) >> 1n);
  }

  skipLong(): void {
    const b = this.bytes;
    for (let i = 0; ; i++) {
      if (this.pos >= b.length || i >= 10) throw NOT_HERE;
      if ((b[this.pos++]! & 0x80) === 0) return;
    }
  }

  /** Avro bytes or string, as a view. */
  bytesView(): Uint8Array {
    const length = this.int();
    if (length < 0 || this.pos + length > this.bytes.length) throw NOT_HERE;
    const start = this.pos;
    this.pos += length;
    return this.bytes.subarray(start, this.pos);
  }

  /** Avro bytes or string, skipped. */
  skipBytes(): void {
    const length = this.int();
    if (length < 0 || this.pos + length > this.bytes.length) throw NOT_HERE;
    this.pos += length;
  }

  nullableBytes(): Uint8Array | null {
    const branch = this.int();
    if (branch === 0) return null;
    if (branch !== 1) throw NOT_HERE;
    return this.bytesView();
  }

  /** The item count of the next array block (0: the array ends). */
  blockCount(): number {
    let n = this.int();
    if (n < 0) {
      n = -n;
      this.skipLong(); // the block's size in bytes
    }
    if (n > this.bytes.length - this.pos) throw NOT_HERE;
    return n;
  }
}

const NOT_HERE = new Error('not a row-only v2/v3 record');

/**
 * Reads a row-only v2 or v3 payload and writes its effects to `sink`; null (nothing written) when the
 * record is not for the fast path.
 */
export function fastRowRecord(payload: Uint8Array, tableOf: (tableId: number) => TableEntry | undefined, sink: EffectsSink): FastRecord | null {
  let rows: RowAt[];
  let firstSequence: bigint;
  try {
    if (!ROW_LAYOUT_VERSIONS.has(payload[0]!)) return null;
    const reader = new Reader(payload);
    reader.pos = 1;
    if (reader.int() !== 0) return null; // LogRecord union: TxnRecord
    reader.skipBytes(); // txnId
    reader.skipBytes(); // tenant
    reader.skipLong(); // timestampMicros
    rows = readRows(reader);
    firstSequence = reader.long();
    if (!reader.done) return null;
  } catch (error) {
    if (error === NOT_HERE) return null;
    throw error;
  }
  const tables: TableEntry[] = [];
  const indexKeys: (Uint8Array | null)[] = [];
  for (const row of rows) {
    const table = tableOf(row.tableId);
    if (table === undefined) return null;
    tables.push(table);
    // Index keys decode the row images: a damaged image throws here, before anything is written,
    // and the general path then leaves the record to the main thread, which reports it.
    try {
      for (const index of table.btreeIndexes) indexKeys.push(row.before ? index.keyOf(row.before) : null, row.after ? index.keyOf(row.after) : null);
    } catch {
      return null;
    }
  }
  const tableIds: number[] = [];
  let keysAt = 0;
  for (let i = 0; i < rows.length; i++) {
    keysAt = writeRowEffects(tables[i]!, rows[i]!, indexKeys, keysAt, sink);
    if (!tableIds.includes(rows[i]!.tableId)) tableIds.push(rows[i]!.tableId);
  }
  return { rows: rows.length, firstSequence: firstSequence < 0n ? null : firstSequence, tableIds };
}

function readRows(reader: Reader): RowAt[] {
  const rows: RowAt[] = [];
  for (let n = reader.blockCount(); n !== 0; n = reader.blockCount()) {
    for (; n > 0; n--) {
      if (reader.int() !== BRANCH_ROW) throw NOT_HERE;
      const tableId = reader.int();
      const op = reader.int();
      if (op < 0 || op >= ROW_OPS) throw NOT_HERE;
      const key = reader.bytesView();
      const before = reader.nullableBytes();
      const after = reader.nullableBytes();
      rows.push({ tableId, key, before, after });
    }
  }
  return rows;
}

/**
 * The effects projections/row-ops.ts rowChangeOps computes, written as packed ops; the row's index
 * keys (old, new per index) are indexKeys[keysAt...]. Returns where the next row's keys start.
 */
function writeRowEffects(table: TableEntry, row: RowAt, indexKeys: readonly (Uint8Array | null)[], keysAt: number, sink: EffectsSink): number {
  const { tableId, key, before, after } = row;
  const rowKeyBytes = 5 + key.length;
  sink.keyOp(after !== null, KeySpace.Row, tableId, key, NO_VALUE, after);
  const delta = sink.deltaOf(tableId);
  if (before && after) delta.sizeBytes += after.length - before.length;
  else if (after) {
    delta.rowCount += 1;
    delta.sizeBytes += rowKeyBytes + after.length;
  } else if (before) {
    delta.rowCount -= 1;
    delta.sizeBytes -= rowKeyBytes + before.length;
  }
  for (const index of table.btreeIndexes) {
    const oldKey = indexKeys[keysAt++] ?? null;
    const newKey = indexKeys[keysAt++] ?? null;
    if (oldKey && newKey && sameBytes(oldKey, newKey)) continue;
    if (oldKey) {
      sink.keyOp(false, KeySpace.IndexEntry, index.def.id, oldKey, key, null);
      delta.indexSizeBytes -= 5 + oldKey.length + key.length;
    }
    if (newKey) {
      sink.keyOp(true, KeySpace.IndexEntry, index.def.id, newKey, key, NO_VALUE);
      delta.indexSizeBytes += 5 + newKey.length + key.length;
    }
  }
  return keysAt;
}
