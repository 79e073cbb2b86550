import type { TableId } from '../core/catalog.js';
import { decodeLogRecord, nextSequenceAfter, type SequenceUpdate, type TxnRecord } from '../core/log-records.js';
import type { LogEntry } from '../log/index.js';
import { decodeTableDef } from './catalog-codec.js';
import { CatalogState } from './catalog-state.js';
import type { PreparedRecord } from './record-handoff.js';
import { rowRecordEffects, type RowRecordEffects } from './row-ops.js';
import { PACKED_DEL, PACKED_PUT } from './state-store.js';
import { hnswSpecs } from './vector-index.js';

/**
 * The format in which replay workers hand prepared records to the main thread: flat typed arrays
 * (moved, not copied, between threads) instead of objects, whose structured clone would cost more
 * than decoding the record again.
 */
export interface PreparedChunk {
  /** Records prepared, from the chunk's first; the record after them (if any) is the main thread's to apply. */
  readonly count: number;
  /** Row changes in the prepared records (progress reports rows/s). */
  readonly rows: number;
  /** Key/value ops of every prepared record, in order, packed (state-store.ts writePacked). */
  readonly ops: Uint8Array;
  /** Per record, RECORD_FIELDS numbers (see the F_* offsets): its flags. */
  readonly records: Float64Array;
  /** Per record, the event sequence after it (what the tables projection stores beside its offset). */
  readonly nextSequences: BigInt64Array;
  /** Statistics changes: [record, tableId, rowCount, sizeBytes, indexSizeBytes] repeated. */
  readonly deltas: Float64Array;
  /** Sequence updates (rare: serial columns), with the record they belong to. */
  readonly sequences: readonly { readonly record: number; readonly op: SequenceUpdate }[];
}

const F_FLAGS = 0;
const RECORD_FIELDS = 1;
/** The record changes rows of a table with an hnsw index: the vector projection must see it. */
const FLAG_VECTOR = 1;
/** The record carries a sequencer stamp (firstSequence); without it the next sequence derives from the LSN. */
const FLAG_STAMPED = 2;
const DELTA_FIELDS = 5;

/** Payloads of consecutive records, packed into one buffer to post to a worker. */
export interface PackedPayloads {
  readonly bytes: Uint8Array;
  /** ends[i] is where record i's payload ends (it starts where record i - 1's ends). */
  readonly ends: Uint32Array;
}

export function packPayloads(entries: readonly LogEntry[]): PackedPayloads {
  let total = 0;
  for (const entry of entries) total += entry.payload.length;
  const bytes = new Uint8Array(total);
  const ends = new Uint32Array(entries.length);
  let at = 0;
  for (let i = 0; i < entries.length; i++) {
    bytes.set(entries[i]!.payload, at);
    at += entries[i]!.payload.length;
    ends[i] = at;
  }
  return { bytes, ends };
}

/** The worker's view of the catalog: index key builders and which tables have hnsw indexes. */
export class WorkerCatalog {
  private catalog = new CatalogState();
  private vectorTables = new Set<TableId>();

  /** Replaces the catalog with these stored table definitions (catalog-codec). */
  reset(encodedDefs: readonly Uint8Array[]): void {
    this.catalog = new CatalogState();
    this.vectorTables = new Set();
    for (const bytes of encodedDefs) {
      const def = decodeTableDef(bytes);
      this.catalog.putTable(def);
      if (hnswSpecs(def).length > 0) this.vectorTables.add(def.id);
    }
  }

  /**
   * Decodes records and computes their row effects, in order, stopping at the first record that is
   * not rows and sequences only (a catalog change, whose effects read the store), names a table this
   * catalog does not hold, or fails to decode: the main thread applies that one itself.
   */
  prepare(packed: PackedPayloads, firstLsn: number): { chunk: PreparedChunk; transfer: ArrayBuffer[] } {
    const writer = new ChunkWriter();
    let start = 0;
    let count = 0;
    for (; count < packed.ends.length; count++) {
      const end = packed.ends[count]!;
      const prepared = this.prepareOne(packed.bytes.subarray(start, end));
      if (prepared === null) break;
      writer.add(count, prepared.record, prepared.effects, firstLsn + count, this.touchesVectors(prepared.record));
      start = end;
    }
    return writer.finish(count);
  }

  private prepareOne(payload: Uint8Array): { record: TxnRecord; effects: RowRecordEffects } | null {
    try {
      const record = decodeLogRecord(payload);
      const effects = rowRecordEffects(record.ops, (tableId) => this.catalog.table(tableId));
      return effects === null ? null : { record, effects };
    } catch {
      // The main thread decodes and applies this record itself, and raises the error if it is one.
      return null;
    }
  }

  private touchesVectors(record: TxnRecord): boolean {
    if (this.vectorTables.size === 0) return false;
    return record.ops.some((op) => op.kind === 'row' && this.vectorTables.has(op.tableId));
  }
}

/** Grows the flat arrays of a PreparedChunk. */
class ChunkWriter {
  private ops = new Uint8Array(64 * 1024);
  private opsEnd = 0;
  private records: number[] = [];
  private nextSequences: bigint[] = [];
  private deltas: number[] = [];
  private readonly sequences: { record: number; op: SequenceUpdate }[] = [];
  private rows = 0;

  add(index: number, record: TxnRecord, effects: RowRecordEffects, lsn: number, vector: boolean): void {
    for (const op of effects.ops) {
      if (op.type === 'put') this.putOp(PACKED_PUT, op.key, op.value);
      else this.putOp(PACKED_DEL, op.key, null);
    }
    for (const [tableId, delta] of effects.deltas) this.deltas.push(index, tableId, delta.rowCount, delta.sizeBytes, delta.indexSizeBytes);
    for (const op of record.ops) {
      if (op.kind === 'sequence') this.sequences.push({ record: index, op });
      else this.rows += 1;
    }
    const flags = (vector ? FLAG_VECTOR : 0) | (record.firstSequence === undefined ? 0 : FLAG_STAMPED);
    this.records.push(flags);
    this.nextSequences.push(nextSequenceAfter(record, lsn));
  }

  finish(count: number): { chunk: PreparedChunk; transfer: ArrayBuffer[] } {
    const ops = this.ops.slice(0, this.opsEnd);
    const records = Float64Array.from(this.records);
    const nextSequences = BigInt64Array.from(this.nextSequences);
    const deltas = Float64Array.from(this.deltas);
    const chunk: PreparedChunk = { count, rows: this.rows, ops, records, nextSequences, deltas, sequences: this.sequences };
    return { chunk, transfer: [ops.buffer, records.buffer, nextSequences.buffer, deltas.buffer] };
  }

  private putOp(type: number, key: Uint8Array, value: Uint8Array | null): void {
    const need = 1 + 4 + key.length + (value === null ? 0 : 4 + value.length);
    if (this.opsEnd + need > this.ops.length) {
      const grown = new Uint8Array(Math.max(this.ops.length * 2, this.opsEnd + need));
      grown.set(this.ops.subarray(0, this.opsEnd));
      this.ops = grown;
    }
    const ops = this.ops;
    let at = this.opsEnd;
    ops[at++] = type;
    at = putBytes(ops, at, key);
    if (value !== null) at = putBytes(ops, at, value);
    this.opsEnd = at;
  }
}

function putBytes(out: Uint8Array, at: number, bytes: Uint8Array): number {
  const n = bytes.length;
  out[at] = n >>> 24;
  out[at + 1] = (n >>> 16) & 0xff;
  out[at + 2] = (n >>> 8) & 0xff;
  out[at + 3] = n & 0xff;
  out.set(bytes, at + 4);
  return at + 4 + n;
}

/** True when prepared record `index` changes rows of a table with an hnsw index. */
export function touchesVectors(chunk: PreparedChunk, index: number): boolean {
  return (chunk.records[index * RECORD_FIELDS + F_FLAGS]! & FLAG_VECTOR) !== 0;
}

/**
 * The prepared records of a chunk as the tables projection takes them from a handoff, without
 * their key/value ops: the caller writes the chunk's packed ops first, in one batch. Its
 * `record` is a summary: the projection reads a prepared record's sequence updates and the
 * sequence after it, and the summary gives both exactly (firstSequence is set so that
 * nextSequenceAfter(summary) is the record's own next sequence).
 */
export function preparedRecords(chunk: PreparedChunk): PreparedRecord[] {
  const out: PreparedRecord[] = [];
  const sequencesOf = new Map<number, SequenceUpdate[]>();
  for (const { record, op } of chunk.sequences) {
    const list = sequencesOf.get(record) ?? [];
    list.push(op);
    sequencesOf.set(record, list);
  }
  const deltasOf = new Map<number, Map<number, { rowCount: number; sizeBytes: number; indexSizeBytes: number }>>();
  const d = chunk.deltas;
  for (let i = 0; i < d.length; i += DELTA_FIELDS) {
    let map = deltasOf.get(d[i]!);
    if (!map) deltasOf.set(d[i]!, (map = new Map()));
    map.set(d[i + 1]!, { rowCount: d[i + 2]!, sizeBytes: d[i + 3]!, indexSizeBytes: d[i + 4]! });
  }
  for (let index = 0; index < chunk.count; index++) {
    const base = index * RECORD_FIELDS;
    const sequenceOps = sequencesOf.get(index) ?? [];
    const stamped = (chunk.records[base + F_FLAGS]! & FLAG_STAMPED) !== 0;
    const next = chunk.nextSequences[index]!;
    const record: TxnRecord = {
      type: 'txn',
      txnId: '',
      tenant: '',
      timestampMicros: 0n,
      ops: sequenceOps,
      ...(stamped ? { firstSequence: next - BigInt(sequenceOps.length) } : {}),
    };
    out.push({ record, effects: { ops: [], deltas: deltasOf.get(index) ?? new Map() } });
  }
  return out;
}
