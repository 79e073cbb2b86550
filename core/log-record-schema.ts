/**
 * The Avro schema of log record payloads, version 1, and the avsc type built from it.
 * Evolution rule (docs/encodings.md): a schema, once a version byte names it, never changes.
 * A v2 is a new constant; decoders keep every old schema and read old payloads through an avsc
 * resolver into the newest one. So v2 may only add fields with defaults, append union branches
 * and append enum symbols; renames need aliases.
 */
import avro from 'avsc';
import type { Schema, Type } from 'avsc';

export const LOG_NAMESPACE = 'svcdb.log';

const optional = (type: unknown): { type: unknown[]; default: null } => ({ type: ['null', type], default: null });
const arrayOf = (items: unknown): { type: 'array'; items: unknown } => ({ type: 'array', items });

export const SQL_TYPE_SCHEMA = {
  type: 'record',
  name: 'SqlType',
  fields: [
    {
      name: 'name',
      type: {
        type: 'enum',
        name: 'SqlTypeName',
        symbols: [
          'bool',
          'int2',
          'int4',
          'int8',
          'numeric',
          'float4',
          'float8',
          'text',
          'varchar',
          'char',
          'uuid',
          'jsonb',
          'timestamp',
          'timestamptz',
          'date',
          'vector',
        ],
      },
    },
    { name: 'length', ...optional('int') },
    { name: 'precision', ...optional('int') },
    { name: 'scale', ...optional('int') },
    { name: 'dimension', ...optional('int') },
  ],
};

export const COLUMN_DEF_SCHEMA = {
  type: 'record',
  name: 'ColumnDef',
  fields: [
    { name: 'id', type: 'int' },
    { name: 'name', type: 'string' },
    { name: 'type', type: SQL_TYPE_SCHEMA },
    { name: 'nullable', type: 'boolean' },
    { name: 'defaultExpr', ...optional('string') },
    /** core/row-codec encodeValue(type, missingValue): a tagged value, NULL included. */
    { name: 'missingValue', type: 'bytes' },
    { name: 'sequence', ...optional('string') },
  ],
};

export const INDEX_DEF_SCHEMA = {
  type: 'record',
  name: 'IndexDef',
  fields: [
    { name: 'id', type: 'int' },
    { name: 'name', type: 'string' },
    { name: 'kind', type: { type: 'enum', name: 'IndexKind', symbols: ['btree', 'hnsw'] } },
    { name: 'columnIds', type: arrayOf('int') },
    { name: 'descending', type: arrayOf('boolean') },
    { name: 'unique', type: 'boolean' },
    { name: 'primary', type: 'boolean' },
    { name: 'options', type: { type: 'map', values: ['double', 'string'] } },
  ],
};

export const CONSTRAINT_DEF_SCHEMA = {
  type: 'record',
  name: 'ConstraintDef',
  fields: [
    { name: 'name', type: 'string' },
    {
      name: 'kind',
      type: { type: 'enum', name: 'ConstraintKind', symbols: ['primary_key', 'unique', 'check', 'foreign_key', 'not_null'] },
    },
    { name: 'definition', type: 'string' },
    { name: 'columnIds', type: arrayOf('int') },
    {
      name: 'references',
      ...optional({
        type: 'record',
        name: 'ForeignKeyRef',
        fields: [
          { name: 'tableId', type: 'int' },
          { name: 'columnIds', type: arrayOf('int') },
          {
            name: 'onDelete',
            type: { type: 'enum', name: 'ForeignKeyAction', symbols: ['restrict', 'cascade', 'set_null', 'no_action'] },
          },
        ],
      }),
    },
  ],
};

export const TABLE_DEF_SCHEMA = {
  type: 'record',
  name: 'TableDef',
  fields: [
    { name: 'id', type: 'int' },
    { name: 'tenant', type: 'string' },
    { name: 'schema', type: 'string' },
    { name: 'name', type: 'string' },
    { name: 'kind', type: { type: 'enum', name: 'TableKind', symbols: ['table', 'view', 'materialized_view'] } },
    { name: 'columns', type: arrayOf(COLUMN_DEF_SCHEMA) },
    { name: 'primaryKey', type: arrayOf('int') },
    { name: 'indexes', type: arrayOf(INDEX_DEF_SCHEMA) },
    { name: 'constraints', type: arrayOf(CONSTRAINT_DEF_SCHEMA) },
    { name: 'viewSql', ...optional('string') },
    { name: 'createdAtMicros', type: 'long' },
    { name: 'updatedAtMicros', type: 'long' },
  ],
};

/** The branches of TxnRecord.ops, in union order (append only). */
export const TXN_OP_SCHEMAS = [
  {
    type: 'record',
    name: 'RowChange',
    fields: [
      { name: 'tableId', type: 'int' },
      { name: 'op', type: { type: 'enum', name: 'RowOp', symbols: ['insert', 'update', 'delete'] } },
      /** encodeKey of the primary key (or of the hidden row id). */
      { name: 'key', type: 'bytes' },
      /** Row images (core/row-codec). */
      { name: 'before', ...optional('bytes') },
      { name: 'after', ...optional('bytes') },
    ],
  },
  { type: 'record', name: 'PutTable', fields: [{ name: 'table', type: TABLE_DEF_SCHEMA }] },
  { type: 'record', name: 'DropTable', fields: [{ name: 'tableId', type: 'int' }] },
  { type: 'record', name: 'TruncateTables', fields: [{ name: 'tableIds', type: arrayOf('int') }] },
  {
    type: 'record',
    name: 'SequenceUpdate',
    fields: [
      { name: 'name', type: 'string' },
      { name: 'lastValue', type: 'long' },
    ],
  },
];

export const TXN_RECORD_SCHEMA = {
  type: 'record',
  name: 'TxnRecord',
  fields: [
    { name: 'txnId', type: 'string' },
    { name: 'tenant', type: 'string' },
    { name: 'timestampMicros', type: 'long' },
    { name: 'ops', type: arrayOf(TXN_OP_SCHEMAS) },
  ],
};

/** LogRecord v1: a union so later record kinds can be appended as branches. */
export const LOG_RECORD_SCHEMA_V1 = [TXN_RECORD_SCHEMA];

/**
 * v2 appends two op branches (catalog objects: CDC streams, webhooks) and stamps each record with
 * the change-event sequence of its first op (every op takes one number, a snapshot reserves one
 * per row it copies), so event sequences stay deterministic after retention deletes old segments.
 */
export const TXN_OP_SCHEMAS_V2 = [
  ...TXN_OP_SCHEMAS,
  {
    type: 'record',
    name: 'PutObject',
    fields: [
      { name: 'objectKind', type: 'string' },
      { name: 'tenant', type: 'string' },
      { name: 'name', type: 'string' },
      /** The object's definition as JSON (its own `version` field inside). */
      { name: 'definition', type: 'string' },
      /** A CDC stream created WITH (snapshot = true): the table whose rows are copied, and how many. */
      { name: 'snapshotTableId', type: 'int', default: -1 },
      { name: 'snapshotRows', type: 'long', default: 0 },
    ],
  },
  {
    type: 'record',
    name: 'DropObject',
    fields: [
      { name: 'objectKind', type: 'string' },
      { name: 'tenant', type: 'string' },
      { name: 'name', type: 'string' },
    ],
  },
];

export const TXN_RECORD_SCHEMA_V2 = {
  type: 'record',
  name: 'TxnRecord',
  fields: [
    { name: 'txnId', type: 'string' },
    { name: 'tenant', type: 'string' },
    { name: 'timestampMicros', type: 'long' },
    { name: 'ops', type: arrayOf(TXN_OP_SCHEMAS_V2) },
    /** Event sequence of the first op; -1 when the writer did not stamp it (tests, tools). */
    { name: 'firstSequence', type: 'long', default: -1 },
  ],
};

export const LOG_RECORD_SCHEMA_V2 = [TXN_RECORD_SCHEMA_V2];

/**
 * v3 adds array columns: the SqlType record gains `array` (default false). An array column is
 * written as its element type with `array: true` (PostgreSQL's int[][] is int[], so a flag
 * suffices); v1 and v2 payloads read through it with `array` false.
 */
export const LOG_RECORD_SCHEMA_V3 = withSqlTypeField(LOG_RECORD_SCHEMA_V2, { name: 'array', type: 'boolean', default: false });

/** A deep copy of `schema` whose SqlType record has one more field. */
function withSqlTypeField(schema: unknown, field: object): unknown {
  const copy = JSON.parse(JSON.stringify(schema)) as unknown;
  let found = 0;
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (typeof node === 'object' && node !== null) {
      const record = node as { name?: unknown; fields?: unknown[] };
      if (record.name === 'SqlType' && Array.isArray(record.fields)) {
        record.fields.push(field);
        found++;
      }
      Object.values(node).forEach(visit);
    }
  };
  visit(copy);
  if (found !== 1) throw new Error(`withSqlTypeField: ${found} SqlType records`);
  return copy;
}

/**
 * Fully qualified branch names, as wrapped unions key them. Literals (not computed from
 * LOG_NAMESPACE) so `{ 'svcdb.log.RowChange': ... }` stays a fast object literal in log-records.ts;
 * a test checks they match the schema.
 */
export const BRANCH = {
  row: 'svcdb.log.RowChange',
  putTable: 'svcdb.log.PutTable',
  dropTable: 'svcdb.log.DropTable',
  truncate: 'svcdb.log.TruncateTables',
  sequence: 'svcdb.log.SequenceUpdate',
  putObject: 'svcdb.log.PutObject',
  dropObject: 'svcdb.log.DropObject',
} as const;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Avro long <-> bigint over the full 64-bit range (avsc's own long stops at 2^53). */
const BIGINT_LONG = avro.types.LongType.__with({
  fromBuffer: (bytes: Buffer): bigint => bytes.readBigInt64LE(),
  toBuffer: (value: bigint): Buffer => {
    const bytes = Buffer.alloc(8);
    bytes.writeBigInt64LE(value);
    return bytes;
  },
  fromJSON: (value: unknown): bigint => BigInt(value as string | number),
  toJSON: (value: bigint): string => value.toString(),
  isValid: (value: unknown): boolean => typeof value === 'bigint' && value >= INT64_MIN && value <= INT64_MAX,
  compare: (a: bigint, b: bigint): number => (a === b ? 0 : a < b ? -1 : 1),
});

/** The parts of avsc's internal Tap the bounded readers use. */
interface Tap {
  readonly buf: Buffer;
  pos: number;
  readLong(): number;
  skipLong(): void;
  writeLong(value: number): void;
  readString(): string;
}
interface Readable {
  _read(tap: Tap): unknown;
}
interface Writable {
  _write(tap: Tap, value: unknown): void;
}

/**
 * A block count is checked against the bytes left before items are read: every item in this
 * schema takes at least one byte, so a corrupt count fails at once instead of looping for ages.
 */
function readBlockCount(tap: Tap): number {
  let n = tap.readLong();
  if (n < 0) {
    n = -n;
    tap.skipLong();
  }
  if (!(n <= tap.buf.length - tap.pos)) throw new Error(`block of ${n} items with ${tap.buf.length - tap.pos} bytes left`);
  return n;
}

class BoundedArrayType extends avro.types.ArrayType {
  _read(tap: Tap): unknown[] {
    const items = this.itemsType as unknown as Readable;
    const out: unknown[] = [];
    for (let n = readBlockCount(tap); n !== 0; n = readBlockCount(tap)) {
      while (n-- > 0) out.push(items._read(tap));
    }
    return out;
  }
}

class BoundedMapType extends avro.types.MapType {
  _read(tap: Tap): Record<string, unknown> {
    const values = this.valuesType as Readable;
    const out: Record<string, unknown> = {};
    for (let n = readBlockCount(tap); n !== 0; n = readBlockCount(tap)) {
      while (n-- > 0) {
        const key = tap.readString();
        out[key] = values._read(tap);
      }
    }
    return out;
  }
}

/**
 * Avro bytes as plain Uint8Arrays both ways (avsc's own insists on Buffers, and wrapping every key
 * and image in a Buffer costs more than the rest of the encoding). Decoding returns views of the
 * buffer being decoded (the decoder hands avsc a private copy of the payload), so keys and row
 * images compare equal to encodeKey and encodeRow output.
 */
class Uint8ArrayBytesType extends avro.types.BytesType {
  _read(tap: Tap): Uint8Array | undefined {
    const length = tap.readLong();
    const start = tap.pos;
    tap.pos += length;
    if (!(length >= 0) || tap.pos > tap.buf.length) {
      tap.pos = tap.buf.length + 1; // invalid: decode reports a truncated buffer
      return undefined;
    }
    return new Uint8Array(tap.buf.buffer, tap.buf.byteOffset + start, length);
  }

  _write(tap: Tap, value: unknown): void {
    if (!(value instanceof Uint8Array)) throw new Error(`invalid bytes: ${typeof value}`);
    const length = value.length;
    tap.writeLong(length);
    const start = tap.pos;
    tap.pos += length;
    if (tap.pos > tap.buf.length) return; // encode() reports the missing room and is retried
    if (length <= SMALL_COPY_BYTES_MAX) for (let i = 0; i < length; i++) tap.buf[start + i] = value[i]!;
    else tap.buf.set(value, start);
  }
}
/** Up to this many bytes a JS loop copies faster than a native call. */
const SMALL_COPY_BYTES_MAX = 64;

/** ["null", "bytes"] taking null or any Uint8Array (avsc's union only recognizes Buffers). */
class NullableBytesType extends avro.types.UnwrappedUnionType {
  _write(tap: Tap, value: unknown): void {
    if (value === null) {
      tap.writeLong(0);
      return;
    }
    tap.writeLong(1);
    (this as unknown as { types: readonly Writable[] }).types[1]!._write(tap, value);
  }
}

const isNullableBytes = (s: unknown): boolean => Array.isArray(s) && s.length === 2 && s[0] === 'null' && s[1] === 'bytes';

/** Builds the avsc type of a schema: bigint longs, bounded arrays and maps, view bytes, explicit options. */
export function buildLogRecordType(schema: unknown): Type {
  return avro.Type.forSchema(schema as Schema, {
    namespace: LOG_NAMESPACE,
    registry: { long: BIGINT_LONG },
    // Unions of distinguishable branches (null | bytes, double | string) stay plain values;
    // unions of several records (the ops) are wrapped as { 'svcdb.log.RowChange': {...} }.
    wrapUnions: 'auto',
    omitRecordMethods: true,
    noAnonymousTypes: false,
    assertLogicalTypes: true,
    typeHook: (s: Schema, opts) => {
      if (s === 'bytes') return new Uint8ArrayBytesType();
      if (isNullableBytes(s)) return new NullableBytesType(s, opts);
      if (typeof s !== 'object' || s === null || Array.isArray(s)) return undefined;
      const kind = (s as { type?: unknown }).type;
      if (kind === 'array') return new BoundedArrayType(s, opts);
      if (kind === 'map') return new BoundedMapType(s, opts);
      return undefined;
    },
  });
}
