import type { IndexId, TableId } from '../core/catalog.js';
import type { Lsn } from '../core/units.js';
import { lsn } from '../core/units.js';

/**
 * The keyspace of the projection store. The first byte says what a key is; ids are big-endian so
 * every table's rows (and every index's entries) are one contiguous, ordered range.
 *
 *   0x01 name                   -> u64 offset        consumer durable offsets
 *   0x02 u32 tableId            -> catalog entry     table definitions
 *   0x03 name                   -> i64 last value    sequences
 *   0x04 u32 tableId            -> 3 x u64           table statistics
 *   0x05 kind 0 tenant 0 name   -> object JSON       catalog objects (CDC streams, webhooks)
 *   0x06 u32 tableId u64 lsn    -> table def | empty table definitions by LSN (empty: dropped)
 *   0x10 u32 tableId pk         -> row image         rows (pk = core/key-encoding of the key)
 *   0x11 u32 indexId ikey pk    -> (empty)           secondary btree index entries
 *   0x12 u64 createdLsn pk      -> row image         rows copied for a CDC stream's snapshot
 *   0x20..0x2f                  -> sink state        sinks' own state (CDC positions, webhook ledger):
 *                                                    not derived from the log, so kept across replay
 */
export const enum KeySpace {
  ConsumerOffset = 0x01,
  Table = 0x02,
  Sequence = 0x03,
  TableStats = 0x04,
  Object = 0x05,
  TableHistory = 0x06,
  Row = 0x10,
  IndexEntry = 0x11,
  SnapshotRow = 0x12,
  SinkState = 0x20,
  /** First key space after the sinks' ones (0x20..0x2f). */
  SinkStateEnd = 0x30,
  /** Replay's bulk-load probes (replay-bulk.ts): one per staged batch, deleted once LevelDB has read it. */
  ReplayProbe = 0xf0,
}

const utf8 = new TextEncoder();

function prefixed(space: KeySpace, id: number, rest?: Uint8Array): Uint8Array {
  const key = new Uint8Array(5 + (rest === undefined ? 0 : rest.length));
  // Byte by byte: a DataView per key costs more than the whole rest of this function.
  key[0] = space;
  key[1] = id >>> 24;
  key[2] = (id >>> 16) & 0xff;
  key[3] = (id >>> 8) & 0xff;
  key[4] = id & 0xff;
  if (rest !== undefined) key.set(rest, 5);
  return key;
}

function named(space: KeySpace, name: string): Uint8Array {
  const bytes = utf8.encode(name);
  const key = new Uint8Array(1 + bytes.length);
  key[0] = space;
  key.set(bytes, 1);
  return key;
}

export const consumerOffsetKey = (name: string): Uint8Array => named(KeySpace.ConsumerOffset, name);
export const sequenceKey = (name: string): Uint8Array => named(KeySpace.Sequence, name);
export const tableKey = (tableId: TableId): Uint8Array => prefixed(KeySpace.Table, tableId);
export const tableStatsKey = (tableId: TableId): Uint8Array => prefixed(KeySpace.TableStats, tableId);

/** Key of one row: table prefix + encoded primary key. */
export const rowKey = (tableId: TableId, pk: Uint8Array): Uint8Array => prefixed(KeySpace.Row, tableId, pk);
/** Bytes before the primary key in a row key: the key space and the table id. */
export const ROW_KEY_PREFIX_BYTES = 5;

/** Writes rowKey(tableId, pk) into `slab` at `at`; returns it as a view of the slab. */
export function writeRowKey(slab: Uint8Array, at: number, tableId: TableId, pk: Uint8Array): Uint8Array {
  slab[at] = KeySpace.Row;
  slab[at + 1] = tableId >>> 24;
  slab[at + 2] = (tableId >>> 16) & 0xff;
  slab[at + 3] = (tableId >>> 8) & 0xff;
  slab[at + 4] = tableId & 0xff;
  // A short key byte by byte, and the view made by the constructor: set() and subarray() cost
  // more than the copy for keys this short (subarray looks up the species constructor each time).
  const from = at + ROW_KEY_PREFIX_BYTES;
  if (pk.length <= 32) for (let i = 0; i < pk.length; i++) slab[from + i] = pk[i]!;
  else slab.set(pk, from);
  return new Uint8Array(slab.buffer, slab.byteOffset + at, ROW_KEY_PREFIX_BYTES + pk.length);
}

/**
 * rowKey of many primary keys, as views into one buffer: a bulk read hands thousands of keys to
 * LevelDB at once, and a small array of its own per key costs Node-API a backing store each.
 */
export function rowKeys(tableId: TableId, pks: readonly Uint8Array[]): Uint8Array[] {
  let bytes = 0;
  for (const pk of pks) bytes += ROW_KEY_PREFIX_BYTES + pk.length;
  const slab = new Uint8Array(bytes);
  const out = new Array<Uint8Array>(pks.length);
  let at = 0;
  for (let i = 0; i < pks.length; i++) {
    out[i] = writeRowKey(slab, at, tableId, pks[i]!);
    at += out[i]!.length;
  }
  return out;
}
/** First key of a table's rows; its upper bound is rowPrefix(tableId + 1). */
export const rowPrefix = (tableId: TableId): Uint8Array => prefixed(KeySpace.Row, tableId);
/** Strips the 5-byte table prefix from a row key, leaving the encoded primary key. */
export const pkOfRowKey = (key: Uint8Array): Uint8Array => key.subarray(5);

/** Key of one index entry: index prefix + encoded index key + encoded primary key. */
export function indexEntryKey(indexId: IndexId, indexKey: Uint8Array, pk: Uint8Array): Uint8Array {
  const key = prefixed(KeySpace.IndexEntry, indexId);
  const out = new Uint8Array(key.length + indexKey.length + pk.length);
  out.set(key, 0);
  out.set(indexKey, key.length);
  out.set(pk, key.length + indexKey.length);
  return out;
}
export const indexPrefix = (indexId: IndexId, indexKey?: Uint8Array): Uint8Array => prefixed(KeySpace.IndexEntry, indexId, indexKey);

/** Bounds [gte, lt) of every key starting with space + id. */
export function idRange(space: KeySpace, id: number): { gte: Uint8Array; lt: Uint8Array } {
  return { gte: prefixed(space, id), lt: prefixed(space, id + 1) };
}

/** Bounds of a whole key space. */
export function spaceRange(space: KeySpace): { gte: Uint8Array; lt: Uint8Array } {
  return { gte: Uint8Array.of(space), lt: Uint8Array.of(space + 1) };
}

export function encodeU64(value: number | bigint): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(value), false);
  return out;
}

export function decodeU64(bytes: Uint8Array): number {
  return Number(new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigUint64(0, false));
}

export function encodeI64(value: bigint): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigInt64(0, value, false);
  return out;
}

export function decodeI64(bytes: Uint8Array): bigint {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigInt64(0, false);
}

export const decodeOffset = (bytes: Uint8Array | undefined): Lsn => lsn(bytes ? decodeU64(bytes) : 0);

/** The keys of a table's rows between bounds on the encoded primary key (either may be absent). */
export function rowSpan(tableId: TableId, bounds: { gte?: Uint8Array | undefined; lt?: Uint8Array | undefined }): { gte: Uint8Array; lt: Uint8Array } {
  const whole = idRange(KeySpace.Row, tableId);
  return { gte: bounds.gte ? rowKey(tableId, bounds.gte) : whole.gte, lt: bounds.lt ? rowKey(tableId, bounds.lt) : whole.lt };
}

/** The keys of an index's entries between bounds on what follows the index id (index key, then pk). */
export function indexSpan(indexId: IndexId, bounds: { gte?: Uint8Array | undefined; lt?: Uint8Array | undefined }): { gte: Uint8Array; lt: Uint8Array } {
  const whole = idRange(KeySpace.IndexEntry, indexId);
  return { gte: bounds.gte ? indexPrefix(indexId, bounds.gte) : whole.gte, lt: bounds.lt ? indexPrefix(indexId, bounds.lt) : whole.lt };
}

/** Bytes of the key space and id at the start of every row and index entry key. */
export const ID_PREFIX_BYTES = 5;

/** Key of a catalog object: kind, tenant and name, NUL-separated (none of them contains a NUL). */
export const objectStoreKey = (objectKind: string, tenant: string, name: string): Uint8Array =>
  named(KeySpace.Object, `${objectKind}\u0000${tenant}\u0000${name}`);

function u32u64(space: KeySpace, id: number, value: number): Uint8Array {
  const key = new Uint8Array(13);
  const view = new DataView(key.buffer);
  key[0] = space;
  view.setUint32(1, id, false);
  view.setBigUint64(5, BigInt(value), false);
  return key;
}

/** Key of a table's definition as of the record at `at` (tableHistoryKey(id, lsn) sorts by LSN). */
export const tableHistoryKey = (tableId: TableId, at: Lsn): Uint8Array => u32u64(KeySpace.TableHistory, tableId, at);

function u64Prefixed(space: KeySpace, value: number, rest?: Uint8Array): Uint8Array {
  const key = new Uint8Array(9 + (rest?.length ?? 0));
  key[0] = space;
  new DataView(key.buffer).setBigUint64(1, BigInt(value), false);
  if (rest) key.set(rest, 9);
  return key;
}

/** Key of one row of the snapshot a CDC stream created at `createdLsn` copied. */
export const snapshotRowKey = (createdLsn: number, pk: Uint8Array): Uint8Array => u64Prefixed(KeySpace.SnapshotRow, createdLsn, pk);
/** Bounds of one snapshot's rows. */
export const snapshotRange = (createdLsn: number): { gte: Uint8Array; lt: Uint8Array } => ({
  gte: u64Prefixed(KeySpace.SnapshotRow, createdLsn),
  lt: u64Prefixed(KeySpace.SnapshotRow, createdLsn + 1),
});

/** Key of a sink's own state: `name` in the sink state space (kept across `svcdb replay`). */
export const sinkStateKey = (name: string): Uint8Array => named(KeySpace.SinkState, name);

/** Bounds of every sink's state (what a rebuild carries over from the live store). */
export const sinkStateRange = (): { gte: Uint8Array; lt: Uint8Array } => ({ gte: Uint8Array.of(KeySpace.SinkState), lt: Uint8Array.of(KeySpace.SinkStateEnd) });
