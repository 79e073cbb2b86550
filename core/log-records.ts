/**
 * Log records: the facts the log stores, one per committed transaction. A payload is one byte of
 * schema version followed by the Avro encoding (core/log-record-schema.ts) of the LogRecord union.
 * The mapping between the TypeScript unions and avsc's union values is in core/log-record-avro.ts.
 */
import type { Type } from 'avsc';
import { SvcError, isSvcError } from './errors.js';
import { corrupt, fromAvroTxn, toAvroTxn, type AvroTxn } from './log-record-avro.js';
import { encodeRowRecord } from './log-record-rows.js';
import type { LogRecord, TxnOp, TxnRecord } from './log-record-types.js';
import { LOG_RECORD_SCHEMA_V1, LOG_RECORD_SCHEMA_V2, LOG_RECORD_SCHEMA_V3, buildLogRecordType } from './log-record-schema.js';

export type { CatalogChange, DropObject, LogRecord, PutObject, RowChange, RowOp, SequenceUpdate, TxnOp, TxnRecord } from './log-record-types.js';

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
  return encode(record, false);
}

/**
 * encodeLogRecord's bytes as a view of a reused scratch buffer, valid only until the next encode:
 * for the sequencer, whose Log.append copies the payload into its write chunk before returning.
 * The copy encodeLogRecord makes was one more typed array and backing store per insert (and a
 * second copy of a bulk record's megabyte) that only lived until that append.
 */
export function encodeLogRecordForAppend(record: LogRecord): Uint8Array {
  return encode(record, true);
}

function encode(record: LogRecord, transient: boolean): Uint8Array {
  // Row changes and sequence updates (every DML record): written directly, byte for byte the same.
  const rows = encodeRowRecord(record, LOG_RECORD_SCHEMA_VERSION, transient);
  if (rows !== null) return rows;
  const value = toAvroTxn(record);
  try {
    for (;;) {
      scratch[0] = LOG_RECORD_SCHEMA_VERSION;
      const end = TYPE_V3.encode(value, scratch, 1);
      if (end >= 0) return transient ? scratch.subarray(0, end) : new Uint8Array(scratch.subarray(0, end));
      scratch = Buffer.allocUnsafe(Math.max(scratch.length * 2, scratch.length - end));
    }
  } catch (err) {
    if (isSvcError(err)) throw err;
    throw new SvcError('INTERNAL_ERROR', `log record does not fit its schema: ${(err as Error).message}`, {}, err);
  } finally {
    if (scratch.length > SCRATCH_BYTES_RETAINED_MAX) scratch = Buffer.allocUnsafe(SCRATCH_BYTES_INITIAL);
  }
}

// ---------------------------------------------------------------------------------------------
// Decoding

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
