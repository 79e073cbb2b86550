import type { TableId } from '../core/catalog.js';
import { decodeLogRecord, nextSequenceAfter, type SequenceUpdate, type TxnRecord } from '../core/log-records.js';
import type { LogEntry } from '../log/index.js';
import { decodeTableDef } from './catalog-codec.js';
import { CatalogState } from './catalog-state.js';
import type { KeySpace } from './keys.js';
import type { PreparedRecord } from './record-handoff.js';
import { fastRowRecord, type EffectsSink, type FastRecord } from './replay-decode.js';
import { BatchBuilder } from './replay-batch.js';
import type { SortedBatch } from './replay-sort.js';
import { rowRecordEffects, type RowRecordEffects, type StatsDelta } from './row-ops.js';
import { hnswSpecs } from './vector-index.js';

/**
 * The format in which replay workers hand prepared records to the main thread: flat typed arrays
 * (moved, not copied, between threads) instead of objects, whose structured clone would cost more
 * than decoding the record again. A chunk is applied as one batch, so what the tables projection
 * needs besides the key/value ops is summed over the chunk: statistics per table, the sequence
 * updates in order, and the event sequence after its last record.
 */
export interface PreparedChunk {
  /** Records prepared, from the chunk's first; the record after them (if any) is the main thread's to apply. */
  readonly count: number;
  /** Row changes in the prepared records (progress reports rows/s). */
  readonly rows: number;
  /** Key/value ops of every prepared record as one LevelDB WriteBatch, sorted by key, the last op of each key only (replay-sort.ts). */
  readonly batch: SortedBatch;
  /** Per prepared record, 1 when it changes rows of a table with an hnsw index (the vector projection must see it). */
  readonly vectorFlags: Uint8Array;
  /** The event sequence after the last prepared record (what the tables projection stores beside its offset). */
  readonly nextSequence: bigint;
  /** Statistics changes of the chunk: [tableId, rowCount, sizeBytes, indexSizeBytes] repeated. */
  readonly deltas: Float64Array;
  /** Sequence updates (rare: serial columns), in log order. */
  readonly sequences: readonly SequenceUpdate[];
}

const DELTA_FIELDS = 4;

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
  private readonly tableOf = (tableId: number) => this.catalog.table(tableId);

  /** fastPath false: every record through decodeLogRecord (tests compare the two paths). */
  constructor(private readonly fastPath = true) {}

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
    const { bytes, ends } = packed;
    return this.prepareEach(ends.length, bytes.length, (i) => bytes.subarray(i === 0 ? 0 : ends[i - 1]!, ends[i]!), firstLsn);
  }

  /** prepare() of entries read on this thread (SharedPreparer's main-thread share): their payloads as they are, not packed. */
  prepareEntries(entries: readonly LogEntry[]): PreparedChunk {
    let bytes = 0;
    for (const entry of entries) bytes += entry.payload.length;
    return this.prepareEach(entries.length, bytes, (i) => entries[i]!.payload, entries[0]!.lsn).chunk;
  }

  private prepareEach(
    n: number,
    payloadBytes: number,
    payloadOf: (i: number) => Uint8Array,
    firstLsn: number,
  ): { chunk: PreparedChunk; transfer: ArrayBuffer[] } {
    const writer = new ChunkWriter(payloadBytes);
    let count = 0;
    for (; count < n; count++) {
      const payload = payloadOf(count);
      const lsn = firstLsn + count;
      const fast = this.fastPath ? fastRowRecord(payload, this.tableOf, writer) : null;
      if (fast !== null) writer.addFast(fast, lsn, this.anyVector(fast.tableIds));
      else {
        const prepared = this.prepareOne(payload);
        if (prepared === null) break;
        writer.add(prepared.record, prepared.effects, lsn, this.touchesVectors(prepared.record));
      }
    }
    return writer.finish(count);
  }

  private prepareOne(payload: Uint8Array): { record: TxnRecord; effects: RowRecordEffects } | null {
    try {
      const record = decodeLogRecord(payload);
      const effects = rowRecordEffects(record.ops, this.tableOf);
      return effects === null ? null : { record, effects };
    } catch {
      // The main thread decodes and applies this record itself, and raises the error if it is one.
      return null;
    }
  }

  private anyVector(tableIds: readonly number[]): boolean {
    if (this.vectorTables.size === 0) return false;
    return tableIds.some((tableId) => this.vectorTables.has(tableId));
  }

  private touchesVectors(record: TxnRecord): boolean {
    if (this.vectorTables.size === 0) return false;
    return record.ops.some((op) => op.kind === 'row' && this.vectorTables.has(op.tableId));
  }
}

/** Grows the flat arrays of a PreparedChunk; the fast path writes its ops straight in (EffectsSink). */
class ChunkWriter implements EffectsSink {
  /** The chunk's ops, written as the sorted WriteBatch's entries (replay-batch.ts). */
  private readonly batch: BatchBuilder;
  private readonly vectorFlags: number[] = [];
  private readonly deltas = new Map<number, StatsDelta>();
  private readonly sequences: SequenceUpdate[] = [];
  private rows = 0;
  /** The last record: its event sequence after it is computed once, at the end. */
  private last: { fast: FastRecord; lsn: number } | { next: bigint } | null = null;

  constructor(payloadBytes: number) {
    // Rows and index entries take about twice the payload's bytes.
    this.batch = new BatchBuilder(2 * payloadBytes);
  }

  addFast(record: FastRecord, lsn: number, vector: boolean): void {
    this.rows += record.rows;
    this.vectorFlags.push(vector ? 1 : 0);
    this.last = { fast: record, lsn };
  }

  add(record: TxnRecord, effects: RowRecordEffects, lsn: number, vector: boolean): void {
    for (const op of effects.ops) this.batch.op(op.key, op.type === 'put' ? op.value : null);
    for (const [tableId, delta] of effects.deltas) {
      const sum = this.deltaOf(tableId);
      sum.rowCount += delta.rowCount;
      sum.sizeBytes += delta.sizeBytes;
      sum.indexSizeBytes += delta.indexSizeBytes;
    }
    for (const op of record.ops) {
      if (op.kind === 'sequence') this.sequences.push(op);
      else this.rows += 1;
    }
    this.vectorFlags.push(vector ? 1 : 0);
    this.last = { next: nextSequenceAfter(record, lsn) };
  }

  deltaOf(tableId: number): StatsDelta {
    let delta = this.deltas.get(tableId);
    if (delta === undefined) this.deltas.set(tableId, (delta = { rowCount: 0, sizeBytes: 0, indexSizeBytes: 0 }));
    return delta;
  }

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
  ): void {
    this.batch.keyOp(space, id, a, aAt, aLength, b, bAt, bLength, value, valueAt, valueLength);
  }

  finish(count: number): { chunk: PreparedChunk; transfer: ArrayBuffer[] } {
    const batch = this.batch.finish();
    const vectorFlags = Uint8Array.from(this.vectorFlags);
    const deltas = new Float64Array(this.deltas.size * DELTA_FIELDS);
    let i = 0;
    for (const [tableId, delta] of this.deltas) {
      deltas.set([tableId, delta.rowCount, delta.sizeBytes, delta.indexSizeBytes], i);
      i += DELTA_FIELDS;
    }
    const chunk: PreparedChunk = { count, rows: this.rows, batch, vectorFlags, nextSequence: this.nextSequence(), deltas, sequences: this.sequences };
    return { chunk, transfer: [batch.rep.buffer as ArrayBuffer, vectorFlags.buffer, deltas.buffer] };
  }

  private nextSequence(): bigint {
    const last = this.last;
    if (last === null) return 0n; // no record prepared: never read
    if ('next' in last) return last.next;
    const { fast, lsn } = last;
    // The same rule as nextSequenceAfter: each row change takes one number; unstamped records derive it from the LSN.
    if (fast.firstSequence !== null) return fast.firstSequence + BigInt(fast.rows);
    return nextSequenceAfter({ type: 'txn', txnId: '', tenant: '', timestampMicros: 0n, ops: [] }, lsn);
  }
}

/** True when prepared record `index` changes rows of a table with an hnsw index. */
export function touchesVectors(chunk: PreparedChunk, index: number): boolean {
  return chunk.vectorFlags[index] === 1;
}

/**
 * The prepared records of a chunk as ONE record for the tables projection to take from a handoff
 * at the LSN of the chunk's last prepared record, without key/value ops: the caller writes the
 * chunk's packed ops first, in one batch. Its `record` is a summary: the projection reads a
 * prepared record's sequence updates and the sequence after it, and the summary gives both
 * exactly (firstSequence is set so that nextSequenceAfter(summary) is the chunk's next sequence);
 * its statistics are the chunk's sums, which add up to the same as record by record.
 */
export function chunkSummary(chunk: PreparedChunk): PreparedRecord {
  const deltas = new Map<number, StatsDelta>();
  const d = chunk.deltas;
  for (let i = 0; i < d.length; i += DELTA_FIELDS) deltas.set(d[i]!, { rowCount: d[i + 1]!, sizeBytes: d[i + 2]!, indexSizeBytes: d[i + 3]! });
  const record: TxnRecord = {
    type: 'txn',
    txnId: '',
    tenant: '',
    timestampMicros: 0n,
    ops: chunk.sequences,
    firstSequence: chunk.nextSequence - BigInt(chunk.sequences.length),
  };
  return { record, effects: { ops: [], deltas, sequences: chunk.sequences } };
}
