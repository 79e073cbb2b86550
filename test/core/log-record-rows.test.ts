import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LOG_RECORD_SCHEMA_V3, buildLogRecordType } from '../../core/log-record-schema.js';
import { LOG_RECORD_SCHEMA_VERSION, decodeLogRecord, encodeLogRecord, type TxnOp, type TxnRecord } from '../../core/log-records.js';
import { INT64_MAX, INT64_MIN } from './sql-arbitraries.js';

/** What avsc writes for a record (the schema's own type): the reference the direct encoder must equal byte for byte. */
const avsc = buildLogRecordType(LOG_RECORD_SCHEMA_V3); // the schema encodeLogRecord writes (v3: row ops encode as in v2)
function avscBytes(record: TxnRecord): Uint8Array {
  const ops = record.ops.map((op) =>
    op.kind === 'row'
      ? { 'svcdb.log.RowChange': { tableId: op.tableId, op: op.op, key: op.key, before: op.before, after: op.after } }
      : op.kind === 'sequence'
        ? { 'svcdb.log.SequenceUpdate': { name: op.name, lastValue: op.lastValue } }
        : null,
  );
  const value = { txnId: record.txnId, tenant: record.tenant, timestampMicros: record.timestampMicros, ops, firstSequence: record.firstSequence ?? -1n };
  const body = avsc.toBuffer(value);
  const out = new Uint8Array(body.length + 1);
  out[0] = LOG_RECORD_SCHEMA_VERSION;
  out.set(body, 1);
  return out;
}

const bytes = fc.oneof(fc.uint8Array({ maxLength: 80 }), fc.uint8Array({ minLength: 120, maxLength: 300 }));
const int64 = fc.bigInt({ min: INT64_MIN, max: INT64_MAX });
const op: fc.Arbitrary<TxnOp> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('row' as const),
      tableId: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      op: fc.constantFrom('insert' as const, 'update' as const, 'delete' as const),
      key: bytes,
      before: fc.option(bytes),
      after: fc.option(bytes),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('sequence' as const), name: fc.string({ unit: 'binary' }), lastValue: int64 }) },
);
const record: fc.Arbitrary<TxnRecord> = fc.record(
  {
    type: fc.constant('txn' as const),
    txnId: fc.string({ unit: 'binary' }),
    tenant: fc.string(),
    timestampMicros: int64,
    ops: fc.array(op, { maxLength: 30 }),
    firstSequence: int64,
  },
  { requiredKeys: ['type', 'txnId', 'tenant', 'timestampMicros', 'ops'] },
);

describe('direct encoding of row records', () => {
  it('writes the bytes avsc writes, and they decode to the record', () => {
    fc.assert(
      fc.property(record, (r) => {
        const encoded = encodeLogRecord(r);
        expect(encoded).toEqual(avscBytes(r));
        // A negative first sequence is "not stamped": it decodes as absent.
        const stamped = r.firstSequence !== undefined && r.firstSequence >= 0n;
        expect(decodeLogRecord(encoded)).toEqual({ ...r, firstSequence: stamped ? r.firstSequence : undefined });
      }),
      { numRuns: 400 },
    );
  });

  it('a record avsc refuses is still refused (INTERNAL_ERROR), not written directly', () => {
    const row = { kind: 'row', tableId: 1, op: 'insert', key: new Uint8Array(1), before: null, after: new Uint8Array(2) } as const;
    const base: TxnRecord = { type: 'txn', txnId: 'x', tenant: 't', timestampMicros: 1n, ops: [row] };
    const bad = [
      { ...base, ops: [{ ...row, tableId: 2 ** 31 }] },
      { ...base, ops: [{ ...row, key: [1, 2] }] },
      { ...base, ops: [{ ...row, op: 'upsert' }] },
      { ...base, ops: [{ ...row, after: 'x' }] },
      { ...base, ops: [{ kind: 'sequence', name: 's', lastValue: 1 }] },
      { ...base, firstSequence: 2n ** 63n },
    ] as unknown as TxnRecord[];
    for (const r of bad) expect(() => encodeLogRecord(r)).toThrow(expect.objectContaining({ code: 'INTERNAL_ERROR' }));
  });

  it('a 10,000-row bulk record is byte for byte the avsc one', () => {
    const ops: TxnOp[] = Array.from({ length: 10_000 }, (_, i) => ({
      kind: 'row',
      tableId: 7,
      op: 'insert',
      key: Uint8Array.from([1, i >> 8, i & 255]),
      before: null,
      after: Uint8Array.from({ length: 20 + (i % 50) }, (_x, j) => (i + j) & 255),
    }));
    const r: TxnRecord = { type: 'txn', txnId: 'bulk-1', tenant: 'default', timestampMicros: 1_700_000_000_000_000n, ops, firstSequence: 42n };
    expect(encodeLogRecord(r)).toEqual(avscBytes(r));
  });

  it('records past the reused buffer (over 4 MiB, then small ones) are byte for byte the avsc ones', () => {
    const big: TxnOp[] = Array.from({ length: 3000 }, (_, i) => ({
      kind: 'row',
      tableId: 3,
      op: 'update',
      key: Uint8Array.from([2, i >> 8, i & 255]),
      before: Uint8Array.from({ length: 700 }, (_x, j) => (i * 7 + j) & 255),
      after: Uint8Array.from({ length: 900 }, (_x, j) => (i + j) & 255),
    }));
    const withSequence: TxnOp[] = [...big, { kind: 'sequence', name: 'big_seq', lastValue: 3000n }];
    const r: TxnRecord = { type: 'txn', txnId: 'big', tenant: 'default', timestampMicros: 5n, ops: withSequence, firstSequence: 9n };
    const encoded = encodeLogRecord(r);
    expect(encoded.length).toBeGreaterThan(4 * 1024 * 1024);
    // Compared as buffers: an element-wise toEqual of 4.8 MB takes minutes.
    expect(Buffer.from(encoded).equals(avscBytes(r))).toBe(true);
    const small: TxnRecord = { type: 'txn', txnId: 's', tenant: 't', timestampMicros: 6n, ops: big.slice(0, 2), firstSequence: 3n };
    expect(encodeLogRecord(small)).toEqual(avscBytes(small));
    const empty: TxnRecord = { type: 'txn', txnId: 'e', tenant: 't', timestampMicros: 7n, ops: [] };
    expect(encodeLogRecord(empty)).toEqual(avscBytes(empty));
  });

  it('64-bit values on both sides of the bound where longs are written as numbers (2^52) write the bytes avsc writes', () => {
    const edge = 2n ** 52n;
    const near = fc.oneof(
      fc.constantFrom(0n, 1n, -1n, 63n, 64n, -64n, -65n, edge - 1n, edge, edge + 1n, -edge + 1n, -edge, -edge - 1n, 2n ** 53n, INT64_MAX, INT64_MIN),
      fc.bigInt({ min: -edge - 1000n, max: -edge + 1000n }),
      fc.bigInt({ min: edge - 1000n, max: edge + 1000n }),
      fc.bigInt({ min: -(2n ** 40n), max: 2n ** 40n }),
    );
    fc.assert(
      fc.property(near, near, near, (timestampMicros, firstSequence, lastValue) => {
        const r: TxnRecord = {
          type: 'txn',
          txnId: 't',
          tenant: 'default',
          timestampMicros,
          ops: [{ kind: 'sequence', name: 's', lastValue }],
          firstSequence,
        };
        expect(encodeLogRecord(r)).toEqual(avscBytes(r));
      }),
      { numRuns: 3000 },
    );
  });

  it('txn ids and tenants of any text (lone surrogates, 2- to 4-byte characters, long ones) write the bytes avsc writes', () => {
    const text = fc.oneof(
      fc.string({ unit: fc.constantFrom('\ud800', '\udfff', '\ud83d', '\ude00', 'é', '€', '😀', 'a', '\u0000', '\u07ff', '\u0800', '\uffff'), maxLength: 80 }),
      fc.string({ unit: 'grapheme', maxLength: 60 }),
      fc.string({ unit: 'binary' }),
    );
    fc.assert(
      fc.property(text, text, (txnId, tenant) => {
        const r: TxnRecord = { type: 'txn', txnId, tenant, timestampMicros: 1n, ops: [], firstSequence: 2n };
        // A lone surrogate is written as U+FFFD, as TextEncoder writes it (the direct encoder always did;
        // avsc would write the surrogate's own 3 bytes): the reference is avsc's bytes of the well-formed text.
        const wellFormed = (t: string) => new TextDecoder().decode(new TextEncoder().encode(t));
        expect(encodeLogRecord(r)).toEqual(avscBytes({ ...r, txnId: wellFormed(txnId), tenant: wellFormed(tenant) }));
      }),
      { numRuns: 3000 },
    );
  });
});
