/**
 * The Avro bytes of a log record whose ops are all row changes and sequence updates (every DML
 * record), written straight into one buffer of the exact size: the same bytes as the schema's
 * avsc type writes (a test compares them), without a wrapper object per op or a copy. Bulk
 * inserts log 10,000 row changes per record. Other records go through avsc.
 */
import { utf8Length, varUintSize, writeUtf8, writeVarUint, writeZigZagBig, zigzag, zigzagBigSize } from './codec-util.js';
import { assert, fail } from './errors.js';

// The shapes of log-records.ts's RowChange, SequenceUpdate and TxnRecord, restated here: that
// module calls this one, and importing its types back would make the two a cycle.
interface RowChange {
  readonly kind: 'row';
  readonly tableId: number;
  readonly op: string;
  readonly key: Uint8Array;
  readonly before: Uint8Array | null;
  readonly after: Uint8Array | null;
}
interface SequenceUpdate {
  readonly kind: 'sequence';
  readonly name: string;
  readonly lastValue: bigint;
}
type TxnOp = { readonly kind: string };
interface TxnRecord {
  readonly txnId: string;
  readonly tenant: string;
  readonly timestampMicros: bigint;
  readonly ops: readonly TxnOp[];
  readonly firstSequence?: bigint;
}

/** Union branch indexes of TxnRecord.ops (TXN_OP_SCHEMAS_V2 order). */
const BRANCH_ROW = 0;
const BRANCH_SEQUENCE = 4;
const ROW_OP_INDEX: Readonly<Record<string, number>> = { insert: 0, update: 1, delete: 2 };
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const utf8 = new TextEncoder();

/** First size of the scratch buffer encodeRowRecord writes into; it doubles as a record needs. */
const SCRATCH_BYTES_INITIAL = 64 * 1024;
/** A scratch buffer grown past this (a bulk record) is given back after the record, not kept. */
const SCRATCH_BYTES_RETAINED_MAX = 4 * 1024 * 1024;
let scratch = new Uint8Array(SCRATCH_BYTES_INITIAL);

/** Makes the scratch buffer hold `more` bytes past `at`, keeping its first `at` bytes. */
function room(at: number, more: number): void {
  if (at + more <= scratch.length) return;
  let size = scratch.length * 2;
  while (size < at + more) size *= 2;
  const grown = new Uint8Array(size);
  grown.set(scratch.subarray(0, at));
  scratch = grown;
}

/**
 * `version` byte, then the record as LOG_RECORD_SCHEMA_V2 and V3 encode it (V3 changed only catalog ops); null when an op is neither a row change nor a sequence update.
 * One pass over the ops into a reused scratch buffer, then the exact bytes copied out: a pass to
 * size the record first touched every row change of a bulk record (10,000 objects and their
 * arrays) a second time, which cost more than copying its bytes. `transient`: no copy, a view of
 * the scratch buffer, valid until the next encode (encodeLogRecordForAppend).
 */
export function encodeRowRecord(record: TxnRecord, version: number, transient = false): Uint8Array | null {
  const ops = record.ops;
  const firstSequence = record.firstSequence ?? -1n;
  // Anything avsc would refuse goes to avsc, which reports it (INTERNAL_ERROR).
  if (!inInt64(record.timestampMicros) || !inInt64(firstSequence) || typeof record.txnId !== 'string' || typeof record.tenant !== 'string') return null;
  // The two strings are written in place (no TextEncoder array each): their UTF-8 lengths first.
  const txnIdBytes = utf8Length(record.txnId);
  const tenantBytes = utf8Length(record.tenant);
  try {
    room(0, 2 + longSize(txnIdBytes) + txnIdBytes + longSize(tenantBytes) + tenantBytes + bigLongSize(record.timestampMicros) + longSize(ops.length));
    let at = 0;
    scratch[at++] = version;
    scratch[at++] = 0; // LogRecord union: branch 0, TxnRecord
    at = writeString(scratch, at, record.txnId, txnIdBytes);
    at = writeString(scratch, at, record.tenant, tenantBytes);
    at = writeBigLong(scratch, at, record.timestampMicros);
    if (ops.length > 0) at = writeLong(scratch, at, ops.length);
    at = writeOps(ops, at);
    if (at < 0) return null;
    room(at, 1 + bigLongSize(firstSequence));
    scratch[at++] = 0; // end of the ops array
    at = writeBigLong(scratch, at, firstSequence);
    assert(at <= scratch.length, 'encodeRowRecord: the record wrote past its room');
    return transient ? scratch.subarray(0, at) : scratch.slice(0, at);
  } finally {
    if (scratch.length > SCRATCH_BYTES_RETAINED_MAX) scratch = new Uint8Array(SCRATCH_BYTES_INITIAL);
  }
}

/**
 * The ops into the scratch buffer from `at`: where they end, or -1 when an op is neither a row
 * change nor a sequence update. A loop with nothing after it (docs/decisions.md, "Loops that run
 * long in a function's first call").
 */
function writeOps(ops: readonly TxnOp[], at: number): number {
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i]!;
    if (op.kind === 'row' && validRow(op as RowChange)) {
      room(at, rowSize(op as RowChange));
      at = writeOp(scratch, at, op as RowChange);
    } else if (op.kind === 'sequence' && validSequence(op as SequenceUpdate)) {
      const name = utf8.encode((op as SequenceUpdate).name);
      room(at, 1 + bytesSize(name) + bigLongSize((op as SequenceUpdate).lastValue));
      at = writeSequence(scratch, at, name, (op as SequenceUpdate).lastValue);
    } else return -1;
    // A size that fell short would have lost bytes past the end (typed arrays drop them): never hand those out.
    // The message built only on failure (a template per op is 10,000 strings per bulk record).
    if (at > scratch.length) fail(`encodeRowRecord: op ${i} wrote past its room`);
  }
  return at;
}

function writeOp(out: Uint8Array, at: number, row: RowChange): number {
  out[at++] = BRANCH_ROW;
  at = writeLong(out, at, row.tableId);
  out[at++] = ROW_OP_INDEX[row.op]! * 2;
  at = writeBytes(out, at, row.key);
  at = writeNullableBytes(out, at, row.before);
  return writeNullableBytes(out, at, row.after);
}

function writeSequence(out: Uint8Array, at: number, name: Uint8Array, lastValue: bigint): number {
  out[at++] = BRANCH_SEQUENCE * 2;
  at = writeBytes(out, at, name);
  return writeBigLong(out, at, lastValue);
}

function rowSize(op: RowChange): number {
  return 1 + longSize(op.tableId) + 1 + bytesSize(op.key) + nullableSize(op.before) + nullableSize(op.after);
}

const bytesSize = (b: Uint8Array): number => longSize(b.length) + b.length;
const nullableSize = (b: Uint8Array | null): number => (b === null ? 1 : 1 + bytesSize(b));

const inInt64 = (v: unknown): v is bigint => typeof v === 'bigint' && v >= INT64_MIN && v <= INT64_MAX;
const isBytes = (b: unknown): b is Uint8Array => b instanceof Uint8Array;

const validSequence = (op: SequenceUpdate): boolean => inInt64(op.lastValue) && typeof op.name === 'string';

function validRow(op: RowChange): boolean {
  const { tableId } = op;
  const opKnown = op.op === 'insert' || op.op === 'update' || op.op === 'delete';
  const idOk = Number.isInteger(tableId) && tableId >= -2147483648 && tableId <= 2147483647;
  return opKnown && idOk && isBytes(op.key) && (op.before === null || isBytes(op.before)) && (op.after === null || isBytes(op.after));
}

/** avsc's long of a safe integer: its zigzag as a varint. */
const longSize = (n: number): number => varUintSize(zigzag(n));
const writeLong = (out: Uint8Array, at: number, n: number): number => writeVarUint(out, at, zigzag(n));
const bigLongSize = zigzagBigSize;
const writeBigLong = writeZigZagBig;

function writeBytes(out: Uint8Array, at: number, bytes: Uint8Array): number {
  at = writeLong(out, at, bytes.length);
  if (bytes.length <= 64) for (let i = 0; i < bytes.length; i++) out[at + i] = bytes[i]!;
  else out.set(bytes, at);
  return at + bytes.length;
}

/** An Avro string: its UTF-8 length (known: `utf8Bytes`), then its UTF-8. */
function writeString(out: Uint8Array, at: number, text: string, utf8Bytes: number): number {
  at = writeLong(out, at, utf8Bytes);
  const end = writeUtf8(out, at, text);
  if (end !== at + utf8Bytes) fail(`encodeRowRecord: a string of ${utf8Bytes} UTF-8 bytes took ${end - at}`);
  return end;
}

function writeNullableBytes(out: Uint8Array, at: number, bytes: Uint8Array | null): number {
  if (bytes === null) {
    out[at] = 0;
    return at + 1;
  }
  out[at] = 2; // branch 1, zigzag
  return writeBytes(out, at + 1, bytes);
}
