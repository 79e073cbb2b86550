import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ColumnDef, ConstraintDef, IndexDef, TableDef } from '../../core/catalog.js';
import { isSvcError } from '../../core/errors.js';
import { encodeKey } from '../../core/key-encoding.js';
import { BRANCH, LOG_NAMESPACE, LOG_RECORD_SCHEMA_V1, TXN_OP_SCHEMAS_V2, buildLogRecordType } from '../../core/log-record-schema.js';
import {
  LOG_RECORD_SCHEMA_VERSION,
  decodeLogRecord,
  encodeLogRecord,
  encodeLogRecordForAppend,
  eventSequenceBase,
  nextSequenceAfter,
  sequenceSpan,
  type LogRecord,
  type RowChange,
  type TxnOp,
} from '../../core/log-records.js';
import { encodeRow } from '../../core/row-codec.js';
import type { SqlType } from '../../core/values.js';
import { INT64_MAX, INT64_MIN, TYPE_CASES, nullable, stored } from './sql-arbitraries.js';

const int64 = fc.oneof(fc.bigInt({ min: INT64_MIN, max: INT64_MAX }), fc.constantFrom(INT64_MIN, INT64_MAX, 0n, 1_700_000_000_000_000n));
const id = fc.oneof(fc.nat(100), fc.integer({ min: 0, max: 2 ** 31 - 1 }));
const name = fc.string({ unit: 'binary', maxLength: 16 });
const optionalText = fc.option(fc.string({ unit: 'binary', maxLength: 30 }), { nil: null });

/** A SqlType with a random selection of its optional fields (vectors keep their dimension). */
const column: fc.Arbitrary<ColumnDef> = fc.constantFrom(...TYPE_CASES).chain((c) =>
  fc.record(
    {
      id,
      name,
      type:
        c.type.name === 'vector'
          ? fc.constant(c.type)
          : (fc.record(
              { name: fc.constant(c.type.name), length: fc.nat(1000), precision: fc.nat(1000), scale: fc.nat(1000) },
              { requiredKeys: ['name'], noNullPrototype: true },
            ) as fc.Arbitrary<SqlType>),
      nullable: fc.boolean(),
      defaultExpr: optionalText,
      missingValue: nullable(c.value).map((v) => stored(c.type, v)),
      sequence: optionalText,
    },
    { noNullPrototype: true },
  ),
);

const index: fc.Arbitrary<IndexDef> = fc.record(
  {
    id,
    name,
    kind: fc.constantFrom('btree', 'hnsw'),
    columnIds: fc.array(id, { maxLength: 4 }),
    descending: fc.array(fc.boolean(), { maxLength: 4 }),
    unique: fc.boolean(),
    primary: fc.boolean(),
    options: fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.double(), fc.integer(), fc.string()), { maxKeys: 4, noNullPrototype: true }),
  },
  { noNullPrototype: true },
);

const constraint: fc.Arbitrary<ConstraintDef> = fc.record(
  {
    name,
    kind: fc.constantFrom('primary_key', 'unique', 'check', 'foreign_key', 'not_null'),
    definition: fc.string({ unit: 'binary', maxLength: 40 }),
    columnIds: fc.array(id, { maxLength: 3 }),
    references: fc.record(
      {
        tableId: id,
        columnIds: fc.array(id, { maxLength: 3 }),
        onDelete: fc.constantFrom('restrict', 'cascade', 'set_null', 'no_action'),
      },
      { noNullPrototype: true },
    ),
  },
  { requiredKeys: ['name', 'kind', 'definition', 'columnIds'], noNullPrototype: true },
);

export const tableDef: fc.Arbitrary<TableDef> = fc.record(
  {
    id,
    tenant: name,
    schema: name,
    name,
    kind: fc.constantFrom('table', 'view', 'materialized_view'),
    columns: fc.array(column, { maxLength: 6 }),
    primaryKey: fc.array(id, { maxLength: 3 }),
    indexes: fc.array(index, { maxLength: 3 }),
    constraints: fc.array(constraint, { maxLength: 3 }),
    viewSql: optionalText,
    createdAtMicros: int64,
    updatedAtMicros: int64,
  },
  { noNullPrototype: true },
);

const bytes = fc.uint8Array({ maxLength: 40 });
const op: fc.Arbitrary<TxnOp> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record(
      {
        kind: fc.constant('row' as const),
        tableId: id,
        op: fc.constantFrom('insert' as const, 'update' as const, 'delete' as const),
        key: bytes,
        before: fc.option(bytes, { nil: null }),
        after: fc.option(bytes, { nil: null }),
      },
      { noNullPrototype: true },
    ),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('put_table' as const), table: tableDef }, { noNullPrototype: true }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('drop_table' as const), tableId: id }, { noNullPrototype: true }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('truncate' as const), tableIds: fc.array(id, { maxLength: 4 }) }, { noNullPrototype: true }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('sequence' as const), name, lastValue: int64 }, { noNullPrototype: true }) },
);

const record: fc.Arbitrary<LogRecord> = fc.record(
  {
    type: fc.constant('txn' as const),
    txnId: fc.string({ maxLength: 26 }),
    tenant: name,
    timestampMicros: int64,
    ops: fc.array(op, { maxLength: 12 }),
  },
  { noNullPrototype: true },
);

function expectCorrupt(payload: Uint8Array): void {
  let caught: unknown;
  try {
    decodeLogRecord(payload);
  } catch (err) {
    caught = err;
  }
  expect(caught).toMatchObject({ code: 'LOG_CORRUPT' });
}

describe('log records', () => {
  it('decode(encode(record)) is the record, TableDefs and bigints included', () => {
    fc.assert(
      fc.property(record, (r) => {
        const payload = encodeLogRecord(r);
        expect(payload[0]).toBe(LOG_RECORD_SCHEMA_VERSION);
        expect(decodeLogRecord(payload)).toStrictEqual(r);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps what a TableDef needs exactly: optional SqlType fields, missing values, references, view SQL', () => {
    const table: TableDef = {
      id: 7,
      tenant: 'acme',
      schema: 'public',
      name: 'orders',
      kind: 'table',
      columns: [
        { id: 1, name: 'id', type: { name: 'int8' }, nullable: false, defaultExpr: "nextval('orders_id_seq')", missingValue: null, sequence: 'orders_id_seq' },
        { id: 2, name: 'total', type: { name: 'numeric', precision: 10, scale: 2 }, nullable: true, defaultExpr: '0', missingValue: '0.00', sequence: null },
        {
          id: 4,
          name: 'embedding',
          type: { name: 'vector', dimension: 2 },
          nullable: true,
          defaultExpr: null,
          missingValue: new Float32Array([0.5, -1]),
          sequence: null,
        },
        { id: 5, name: 'meta', type: { name: 'jsonb' }, nullable: true, defaultExpr: "'{}'", missingValue: { tags: ['a'] }, sequence: null },
      ],
      primaryKey: [1],
      indexes: [
        { id: 3, name: 'orders_pkey', kind: 'btree', columnIds: [1], descending: [false], unique: true, primary: true, options: {} },
        {
          id: 4,
          name: 'emb',
          kind: 'hnsw',
          columnIds: [4],
          descending: [false],
          unique: false,
          primary: false,
          options: { m: 16, ef_construction: 200, metric: 'cosine' },
        },
      ],
      constraints: [
        { name: 'orders_pkey', kind: 'primary_key', definition: 'PRIMARY KEY (id)', columnIds: [1] },
        {
          name: 'orders_customer_fkey',
          kind: 'foreign_key',
          definition: 'FOREIGN KEY (customer) REFERENCES customers(id)',
          columnIds: [2],
          references: { tableId: 3, columnIds: [1], onDelete: 'cascade' },
        },
      ],
      viewSql: null,
      createdAtMicros: 1_700_000_000_000_001n,
      updatedAtMicros: INT64_MAX,
    };
    const decoded = decodeLogRecord(encodeLogRecord({ type: 'txn', txnId: 'x', tenant: 'acme', timestampMicros: 1n, ops: [{ kind: 'put_table', table }] }));
    expect(decoded.ops[0]).toStrictEqual({ kind: 'put_table', table });
    const t = (decoded.ops[0] as { table: TableDef }).table;
    expect('length' in t.columns[0]!.type).toBe(false);
    expect('references' in t.constraints[0]!).toBe(false);
  });

  it('row changes keep key and images as Uint8Arrays equal to what was written', () => {
    const key = encodeKey([{ name: 'int8' }], [42n]);
    const after = encodeRow(
      [
        { id: 1, type: { name: 'int8' } },
        { id: 2, type: { name: 'text' } },
      ],
      [42n, 'x'],
    );
    const decoded = decodeLogRecord(
      encodeLogRecord({
        type: 'txn',
        txnId: 't',
        tenant: 'default',
        timestampMicros: 0n,
        ops: [{ kind: 'row', tableId: 1, op: 'insert', key, before: null, after }],
      }),
    );
    const change = decoded.ops[0] as RowChange;
    expect(change.key).toBeInstanceOf(Uint8Array);
    expect(change.key).toStrictEqual(key);
    expect(change.after).toStrictEqual(after);
    expect(change.before).toBeNull();
  });

  // Decode speed is a benchmark figure (bench/replay.ts), not a timed assertion: on a loaded
  // 2-core machine any bound either flakes or proves nothing. This checks the big record decodes.
  it('decodes a 1000-row transaction', () => {
    const image = encodeRow(
      [
        { id: 1, type: { name: 'int8' } },
        { id: 2, type: { name: 'text' } },
        { id: 3, type: { name: 'float8' } },
      ],
      [1n, 'some text value', 1.5],
    );
    const ops: RowChange[] = Array.from({ length: 1000 }, (_, i) => ({
      kind: 'row',
      tableId: 5,
      op: 'update',
      key: encodeKey([{ name: 'int8' }], [BigInt(i)]),
      before: image,
      after: image,
    }));
    const payload = encodeLogRecord({ type: 'txn', txnId: '01HZX', tenant: 'default', timestampMicros: 1n, ops });
    const decoded = decodeLogRecord(payload);
    expect(decoded.ops).toHaveLength(1000);
    expect(decoded.ops[999]).toEqual(ops[999]);
  });

  it('the literal union branch names match the schema', () => {
    expect(Object.values(BRANCH)).toEqual(TXN_OP_SCHEMAS_V2.map((schema) => `${LOG_NAMESPACE}.${schema.name}`));
  });

  it("decoded bytes do not alias the caller's payload buffer", () => {
    const key = encodeKey([{ name: 'text' }], ['k']);
    const payload = encodeLogRecord({
      type: 'txn',
      txnId: 't',
      tenant: 'd',
      timestampMicros: 0n,
      ops: [{ kind: 'row', tableId: 1, op: 'delete', key, before: key, after: null }],
    });
    const change = decodeLogRecord(payload).ops[0] as RowChange;
    payload.fill(0);
    expect(change.key).toStrictEqual(key);
    expect(change.before).toStrictEqual(key);
  });

  it('payloads are independent of the encoder scratch buffer', () => {
    const a = encodeLogRecord({ type: 'txn', txnId: 'a', tenant: 't', timestampMicros: 1n, ops: [] });
    const copy = Uint8Array.from(a);
    encodeLogRecord({ type: 'txn', txnId: 'b'.repeat(200_000), tenant: 't', timestampMicros: 2n, ops: [] });
    expect(a).toStrictEqual(copy);
  });

  it('encodeLogRecordForAppend gives the bytes encodeLogRecord gives (row, sequence and catalog records), until the next encode', () => {
    fc.assert(
      fc.property(record, record, (r, next) => {
        const owned = encodeLogRecord(r);
        const view = encodeLogRecordForAppend(r);
        expect(Buffer.from(view).equals(Buffer.from(owned))).toBe(true);
        // Copied at once (as Log.append does), it stays the record's whatever is encoded after it.
        const copied = Uint8Array.from(view);
        encodeLogRecordForAppend(next);
        expect(decodeLogRecord(copied)).toStrictEqual(r);
      }),
      { numRuns: 300 },
    );
  });

  it('an unencodable record is an INTERNAL_ERROR, not a silently wrong payload', () => {
    const bad = { type: 'txn', txnId: 'x', tenant: 't', timestampMicros: 1, ops: [] } as unknown as LogRecord;
    expect(() => encodeLogRecord(bad)).toThrow(expect.objectContaining({ code: 'INTERNAL_ERROR' }));
    const badId = { type: 'txn', txnId: 'x', tenant: 't', timestampMicros: 1n, ops: [{ kind: 'drop_table', tableId: 2 ** 40 }] } as LogRecord;
    expect(() => encodeLogRecord(badId)).toThrow(expect.objectContaining({ code: 'INTERNAL_ERROR' }));
  });
});

describe('corrupt payloads are LOG_CORRUPT', () => {
  it('empty, unknown version, truncated, trailing bytes', () => {
    const payload = encodeLogRecord({
      type: 'txn',
      txnId: 'abc',
      tenant: 'default',
      timestampMicros: 5n,
      ops: [{ kind: 'sequence', name: 's', lastValue: 9n }],
    });
    expectCorrupt(new Uint8Array(0));
    expectCorrupt(Uint8Array.from([LOG_RECORD_SCHEMA_VERSION + 1, ...payload.subarray(1)]));
    expectCorrupt(Uint8Array.from([0, ...payload.subarray(1)]));
    for (let end = 1; end < payload.length; end++) expectCorrupt(payload.subarray(0, end));
    expectCorrupt(Uint8Array.from([...payload, 0]));
  });

  it('a schema v1 payload (old logs) still decodes, without a sequence stamp', () => {
    const v1 = buildLogRecordType(LOG_RECORD_SCHEMA_V1);
    const body = v1.toBuffer({ txnId: 't1', tenant: 'default', timestampMicros: 7n, ops: [{ 'svcdb.log.SequenceUpdate': { name: 's', lastValue: 3n } }] });
    const record = decodeLogRecord(Uint8Array.from([1, ...body]));
    expect(record).toEqual({ type: 'txn', txnId: 't1', tenant: 'default', timestampMicros: 7n, ops: [{ kind: 'sequence', name: 's', lastValue: 3n }] });
    expect(eventSequenceBase(record, 5)).toBe(5n << 20n);
    expect(nextSequenceAfter(record, 5)).toBe(6n << 20n);
  });

  it('a stamped record keeps its first sequence; a snapshot reserves one number per row', () => {
    const put = { kind: 'put_object' as const, objectKind: 'cdc_stream', tenant: 'default', name: 's', definition: '{}', snapshot: { tableId: 3, rows: 10n } };
    const record = decodeLogRecord(encodeLogRecord({ type: 'txn', txnId: 't', tenant: 'default', timestampMicros: 1n, ops: [put], firstSequence: 42n }));
    expect(record.firstSequence).toBe(42n);
    expect(record.ops[0]).toEqual(put);
    expect(nextSequenceAfter(record, 9)).toBe(53n);
    const drop = { kind: 'drop_object' as const, objectKind: 'cdc_stream', tenant: 'default', name: 's' };
    expect(decodeLogRecord(encodeLogRecord({ type: 'txn', txnId: 't', tenant: 'default', timestampMicros: 1n, ops: [drop] })).ops[0]).toEqual(drop);
  });

  it('a corrupt array count fails at once instead of looping', () => {
    // version 1, union branch 0, txnId "", tenant "", timestamp 0, then an ops count of 2^40 (zigzag varint).
    // A decoder that looped over the count would not finish (the test's timeout), or run out of memory.
    const count = [0x80, 0x80, 0x80, 0x80, 0x80, 0x40];
    expectCorrupt(Uint8Array.from([1, 0, 0, 0, 0, ...count, 2, 0, 0]));
    expectCorrupt(Uint8Array.from([1, 0, 0, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x08]));
  });

  it('random damage either decodes or is LOG_CORRUPT, never another error', () => {
    fc.assert(
      fc.property(record, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }), (r, flips) => {
        const payload = Uint8Array.from(encodeLogRecord(r));
        for (const [at, value] of flips) payload[1 + (at % (payload.length - 1 || 1))] = value;
        try {
          decodeLogRecord(payload);
        } catch (err) {
          expect(isSvcError(err) && err.code).toBe('LOG_CORRUPT');
        }
      }),
      { numRuns: 700 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (tail) => {
        try {
          decodeLogRecord(Uint8Array.from([1, ...tail]));
        } catch (err) {
          expect(isSvcError(err) && err.code).toBe('LOG_CORRUPT');
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('sequenceSpan', () => {
  it('one per op, plus the rows each snapshot copies, for any mix', () => {
    const putObject = (rows: bigint | null): TxnOp => ({
      kind: 'put_object',
      objectKind: 'cdc_stream',
      tenant: 'default',
      name: 's',
      definition: '{}',
      snapshot: rows === null ? null : { tableId: 1, rows },
    });
    const sequence: TxnOp = { kind: 'sequence', name: 'q', lastValue: 1n };
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constant(null), fc.bigInt({ min: 0n, max: 2n ** 40n })), { maxLength: 30 }), fc.nat(50), (snapshots, plain) => {
        const ops: TxnOp[] = [...Array.from({ length: plain }, () => sequence), ...snapshots.map(putObject)];
        const expected = ops.reduce((sum, op) => sum + 1n + (op.kind === 'put_object' && op.snapshot ? op.snapshot.rows : 0n), 0n);
        expect(sequenceSpan({ type: 'txn', txnId: 't', tenant: 'default', timestampMicros: 0n, ops })).toBe(expected);
      }),
    );
  });
});
