/**
 * Replay's fast path through a log record that only changes rows: the Avro bytes of a v2 payload
 * are read in place (core/log-record-schema.ts TXN_RECORD_SCHEMA_V2) and each row change's key/value
 * effects are written straight into the chunk being packed, without building the record's objects
 * (avsc's decode, a private copy of the payload and an object per op cost more than the effects).
 * Anything else (an older schema, a sequence update, a catalog change, an unknown table, bytes that
 * do not read cleanly) says "not here" before writing anything, and the general path
 * (decodeLogRecord + rowRecordEffects) takes the record: it computes the same effects, or the
 * error, as a test checks byte for byte. Since session 10 nothing is allocated per row but the
 * view of an indexed row's image: row changes are offsets in reused arrays, index keys are
 * encoded into one reused buffer (replay-index-keys.ts; the catalog's keyOf made a copy of each), and the sink is given
 * (buffer, offset, length) triples rather than views.
 */
import type { TableEntry } from './catalog-state.js';
import { KeySpace } from './keys.js';
import { IndexKeys, NO_KEY } from './replay-index-keys.js';
import type { StatsDelta } from './row-ops.js';

/** Where the fast path writes a record's effects (replay-chunk.ts ChunkWriter). */
export interface EffectsSink {
  /**
   * A key/value op whose key is `space` + u32 `id` + a[aAt, +aLength) + b[bAt, +bLength); a put's value
   * is value[valueAt, +valueLength), a delete's is null.
   */
  keyOp(
    space: KeySpace,
    id: number,
    a: Uint8Array,
    aAt: number,
    aLength: number,
    b: Uint8Array,
    bAt: number,
    bLength: number,
    value: Uint8Array | null,
    valueAt: number,
    valueLength: number,
  ): void;
  /** The statistics change of the chunk for this table (created at zero). */
  deltaOf(tableId: number): StatsDelta;
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
/** An absent image or index key (offsets are never negative). */
const NONE = NO_KEY;

/** Reads the payload's Avro bytes; a read past the end or an unexpected value throws NotHere. One reused. */
class Reader {
  pos = 0;
  bytes: Uint8Array = NO_VALUE;

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

  /** Avro bytes or string: its length; they start at pos - length. */
  skipBytes(): number {
    const length = this.int();
    if (length < 0 || this.pos + length > this.bytes.length) throw NOT_HERE;
    this.pos += length;
    return length;
  }

  /** A nullable bytes field: its length, or NONE for null; they start at pos - length. */
  nullableBytes(): number {
    const branch = this.int();
    if (branch === 0) return NONE;
    if (branch !== 1) throw NOT_HERE;
    return this.skipBytes();
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
const reader = new Reader();

/**
 * The row changes of the record being read, as offsets into its payload (reused from record to
 * record): table id, key, and the images before and after (NONE: absent).
 */
class RowsAt {
  n = 0;
  tableId = new Int32Array(64);
  keyAt = new Int32Array(64);
  keyLength = new Int32Array(64);
  beforeAt = new Int32Array(64);
  beforeLength = new Int32Array(64);
  afterAt = new Int32Array(64);
  afterLength = new Int32Array(64);

  add(tableId: number, keyAt: number, keyLength: number, beforeAt: number, beforeLength: number, afterAt: number, afterLength: number): void {
    const i = this.n++;
    if (i === this.tableId.length) this.grow();
    this.tableId[i] = tableId;
    this.keyAt[i] = keyAt;
    this.keyLength[i] = keyLength;
    this.beforeAt[i] = beforeAt;
    this.beforeLength[i] = beforeLength;
    this.afterAt[i] = afterAt;
    this.afterLength[i] = afterLength;
  }

  private grow(): void {
    const size = this.tableId.length * 2;
    this.tableId = grown(this.tableId, size);
    this.keyAt = grown(this.keyAt, size);
    this.keyLength = grown(this.keyLength, size);
    this.beforeAt = grown(this.beforeAt, size);
    this.beforeLength = grown(this.beforeLength, size);
    this.afterAt = grown(this.afterAt, size);
    this.afterLength = grown(this.afterLength, size);
  }
}

const rowsAt = new RowsAt();

const indexKeys = new IndexKeys();

/**
 * Reads a row-only v2 or v3 payload and writes its effects to `sink`; null (nothing written) when the
 * record is not for the fast path.
 */
export function fastRowRecord(payload: Uint8Array, tableOf: (tableId: number) => TableEntry | undefined, sink: EffectsSink): FastRecord | null {
  let firstSequence: bigint;
  try {
    if (!ROW_LAYOUT_VERSIONS.has(payload[0]!)) return null;
    reader.bytes = payload;
    reader.pos = 1;
    if (reader.int() !== 0) return null; // LogRecord union: TxnRecord
    reader.skipBytes(); // txnId
    reader.skipBytes(); // tenant
    reader.skipLong(); // timestampMicros
    readRows(reader);
    firstSequence = reader.long();
    if (!reader.done) return null;
  } catch (error) {
    if (error === NOT_HERE) return null;
    throw error;
  } finally {
    reader.bytes = NO_VALUE;
  }
  const rows = rowsAt.n;
  const tables: TableEntry[] = [];
  indexKeys.reset();
  for (let i = 0; i < rows; i++) {
    const table = tableOf(rowsAt.tableId[i]!);
    if (table === undefined) return null;
    tables.push(table);
    // Index keys decode the row images: a damaged image throws here, before anything is written,
    // and the general path then leaves the record to the main thread, which reports it.
    try {
      for (const index of table.btreeIndexes) {
        if (rowsAt.beforeAt[i] === NONE) indexKeys.none();
        else indexKeys.encode(index, table, payload, rowsAt.beforeAt[i]!, rowsAt.beforeLength[i]!);
        if (rowsAt.afterAt[i] === NONE) indexKeys.none();
        else indexKeys.encode(index, table, payload, rowsAt.afterAt[i]!, rowsAt.afterLength[i]!);
      }
    } catch {
      return null;
    }
  }
  const tableIds: number[] = [];
  let keysAt = 0;
  for (let i = 0; i < rows; i++) {
    keysAt = writeRowEffects(tables[i]!, payload, i, keysAt, sink);
    if (!tableIds.includes(rowsAt.tableId[i]!)) tableIds.push(rowsAt.tableId[i]!);
  }
  return { rows, firstSequence: firstSequence < 0n ? null : firstSequence, tableIds };
}

function readRows(reader: Reader): void {
  rowsAt.n = 0;
  for (let n = reader.blockCount(); n !== 0; n = reader.blockCount()) {
    for (; n > 0; n--) {
      if (reader.int() !== BRANCH_ROW) throw NOT_HERE;
      const tableId = reader.int();
      const op = reader.int();
      if (op < 0 || op >= ROW_OPS) throw NOT_HERE;
      const keyLength = reader.skipBytes();
      const keyAt = reader.pos - keyLength;
      const beforeLength = reader.nullableBytes();
      const beforeAt = beforeLength === NONE ? NONE : reader.pos - beforeLength;
      const afterLength = reader.nullableBytes();
      const afterAt = afterLength === NONE ? NONE : reader.pos - afterLength;
      rowsAt.add(tableId, keyAt, keyLength, beforeAt, beforeLength, afterAt, afterLength);
    }
  }
}

/**
 * The effects projections/row-ops.ts rowChangeOps computes for row `i` of rowsAt, written as key/value
 * ops; its index keys (old, new per index) start at slot keysAt of indexKeys. Returns where the next row's keys start.
 */
function writeRowEffects(table: TableEntry, payload: Uint8Array, i: number, keysAt: number, sink: EffectsSink): number {
  const tableId = rowsAt.tableId[i]!;
  const keyAt = rowsAt.keyAt[i]!;
  const keyLength = rowsAt.keyLength[i]!;
  const hasBefore = rowsAt.beforeAt[i] !== NONE;
  const afterAt = rowsAt.afterAt[i]!;
  const beforeLength = rowsAt.beforeLength[i]!;
  const afterLength = rowsAt.afterLength[i]!;
  const rowKeyBytes = 5 + keyLength;
  if (afterAt !== NONE) sink.keyOp(KeySpace.Row, tableId, payload, keyAt, keyLength, NO_VALUE, 0, 0, payload, afterAt, afterLength);
  else sink.keyOp(KeySpace.Row, tableId, payload, keyAt, keyLength, NO_VALUE, 0, 0, null, 0, 0);
  const delta = sink.deltaOf(tableId);
  if (hasBefore && afterAt !== NONE) delta.sizeBytes += afterLength - beforeLength;
  else if (afterAt !== NONE) {
    delta.rowCount += 1;
    delta.sizeBytes += rowKeyBytes + afterLength;
  } else if (hasBefore) {
    delta.rowCount -= 1;
    delta.sizeBytes -= rowKeyBytes + beforeLength;
  }
  const keys = indexKeys.bytes;
  for (const index of table.btreeIndexes) {
    const oldAt = indexKeys.at[keysAt]!;
    const oldLength = indexKeys.length[keysAt++]!;
    const newAt = indexKeys.at[keysAt]!;
    const newLength = indexKeys.length[keysAt++]!;
    if (oldAt !== NONE && newAt !== NONE && sameRange(keys, oldAt, oldLength, newAt, newLength)) continue;
    if (oldAt !== NONE) {
      sink.keyOp(KeySpace.IndexEntry, index.def.id, keys, oldAt, oldLength, payload, keyAt, keyLength, null, 0, 0);
      delta.indexSizeBytes -= 5 + oldLength + keyLength;
    }
    if (newAt !== NONE) {
      sink.keyOp(KeySpace.IndexEntry, index.def.id, keys, newAt, newLength, payload, keyAt, keyLength, NO_VALUE, 0, 0);
      delta.indexSizeBytes += 5 + newLength + keyLength;
    }
  }
  return keysAt;
}

function sameRange(bytes: Uint8Array, aAt: number, aLength: number, bAt: number, bLength: number): boolean {
  if (aLength !== bLength) return false;
  for (let i = 0; i < aLength; i++) if (bytes[aAt + i] !== bytes[bAt + i]) return false;
  return true;
}

function grown(ints: Int32Array, size: number): Int32Array<ArrayBuffer> {
  const bigger = new Int32Array(size);
  bigger.set(ints);
  return bigger;
}
