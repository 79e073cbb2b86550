/**
 * FORMAT AVRO of CDC streams: the CRC-64-AVRO fingerprint against Apache Avro's published values,
 * the schema of a table definition, and change events read from a real log (written by SQL)
 * encoded as single-object messages, decoded by avsc here and by Apache Avro's Python library
 * (Debian's python3-avro) in another process.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TableDef } from '../../core/catalog.js';
import { AvroSchemas, AvroTableFormat, avroEncoder, avroType, SINGLE_OBJECT_MAGIC } from '../../sinks/cdc/avro-format.js';
import { crc64Avro, fingerprintInt64 } from '../../sinks/cdc/avro-fingerprint.js';
import { avroName, fieldNames, type AvroSchemaJson, SCHEMA_CHANGE_FIELDS, SCHEMA_COLUMN_FIELDS, tableLayout } from '../../sinks/cdc/avro-schema.js';
import { avroSchemaFor, changeEvents, projectionEventSource, type SourcedEvent } from '../../sinks/index.js';
import { schemaValue } from '../../sinks/events/change-event.js';
import { column, itemsTable } from '../helpers/stack.js';
import { openSql, type SqlHarness } from '../query/helpers.js';

const PYTHON = '/usr/bin/python3';
const DECODER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'avro_decode.py');

/**
 * apache/avro share/test/data/schema-tests.txt (every case that lists a fingerprint, and a few
 * without): input, Parsing Canonical Form, CRC-64-AVRO as Java's signed long. The file says the
 * Java implementation cross-checks these values against a direct fingerprint implementation.
 */
const SPEC_CASES: readonly { id: string; input: string; canonical: string; fingerprint?: bigint }[] = [
  { id: '000', input: '"null"', canonical: '"null"', fingerprint: 7195948357588979594n },
  { id: '001', input: '{"type":"null"}', canonical: '"null"' },
  { id: '002', input: '"boolean"', canonical: '"boolean"', fingerprint: -6970731678124411036n },
  { id: '004', input: '"int"', canonical: '"int"', fingerprint: 8247732601305521295n },
  { id: '006', input: '"long"', canonical: '"long"', fingerprint: -3434872931120570953n },
  { id: '008', input: '"float"', canonical: '"float"', fingerprint: 5583340709985441680n },
  { id: '010', input: '"double"', canonical: '"double"', fingerprint: -8181574048448539266n },
  { id: '012', input: '"bytes"', canonical: '"bytes"', fingerprint: 5746618253357095269n },
  { id: '014', input: '"string"', canonical: '"string"', fingerprint: -8142146995180207161n },
  { id: '016', input: '[  ]', canonical: '[]', fingerprint: -1241056759729112623n },
  { id: '017', input: '[ "int"  ]', canonical: '["int"]', fingerprint: -5232228896498058493n },
  { id: '018', input: '[ "int" , {"type":"boolean"} ]', canonical: '["int","boolean"]', fingerprint: 5392556393470105090n },
  {
    id: '019',
    input: '{"fields":[], "type":"record", "name":"foo"}',
    canonical: '{"name":"foo","type":"record","fields":[]}',
    fingerprint: -4824392279771201922n,
  },
  {
    id: '020',
    input: '{"fields":[], "type":"record", "name":"foo", "namespace":"x.y"}',
    canonical: '{"name":"x.y.foo","type":"record","fields":[]}',
    fingerprint: 5916914534497305771n,
  },
  {
    id: '021',
    input: '{"fields":[], "type":"record", "name":"a.b.foo", "namespace":"x.y"}',
    canonical: '{"name":"a.b.foo","type":"record","fields":[]}',
    fingerprint: -4616218487480524110n,
  },
  {
    id: '024',
    input: '{"fields":[], "type":"record", "name":"foo", "doc":"foo", "aliases":["foo","bar"]}',
    canonical: '{"name":"foo","type":"record","fields":[]}',
    fingerprint: -4824392279771201922n,
  },
  {
    id: '025',
    input: '{"fields":[{"type":{"type":"boolean"}, "name":"f1"}], "type":"record", "name":"foo"}',
    canonical: '{"name":"foo","type":"record","fields":[{"name":"f1","type":"boolean"}]}',
    fingerprint: 7843277075252814651n,
  },
  {
    id: '026',
    input:
      '{ "fields":[{"type":"boolean", "aliases":[], "name":"f1", "default":true}, {"order":"descending","name":"f2","doc":"Hello","type":"int"}], "type":"record", "name":"foo" }',
    canonical: '{"name":"foo","type":"record","fields":[{"name":"f1","type":"boolean"},{"name":"f2","type":"int"}]}',
    fingerprint: -4860222112080293046n,
  },
  {
    id: '027',
    input: '{"type":"enum", "name":"foo", "symbols":["A1"]}',
    canonical: '{"name":"foo","type":"enum","symbols":["A1"]}',
    fingerprint: -6342190197741309591n,
  },
  {
    id: '028',
    input: '{"namespace":"x.y.z", "type":"enum", "name":"foo", "doc":"foo bar", "symbols":["A1", "A2"]}',
    canonical: '{"name":"x.y.z.foo","type":"enum","symbols":["A1","A2"]}',
    fingerprint: -4448647247586288245n,
  },
  { id: '029', input: '{"name":"foo","type":"fixed","size":15}', canonical: '{"name":"foo","type":"fixed","size":15}', fingerprint: 1756455273707447556n },
  {
    id: '030',
    input: '{"namespace":"x.y.z", "type":"fixed", "name":"foo", "doc":"foo bar", "size":32}',
    canonical: '{"name":"x.y.z.foo","type":"fixed","size":32}',
    fingerprint: -3064184465700546786n,
  },
  { id: '031', input: '{ "items":{"type":"null"}, "type":"array"}', canonical: '{"type":"array","items":"null"}', fingerprint: -589620603366471059n },
  { id: '032', input: '{ "values":"string", "type":"map"}', canonical: '{"type":"map","values":"string"}', fingerprint: -8732877298790414990n },
  {
    id: '033',
    input: '{"name":"PigValue","type":"record", "fields":[{"name":"value", "type":["null", "int", "long", "PigValue"]}]}',
    canonical: '{"name":"PigValue","type":"record","fields":[{"name":"value","type":["null","int","long","PigValue"]}]}',
    fingerprint: -1759257747318642341n,
  },
];

describe('CRC-64-AVRO and the Parsing Canonical Form', () => {
  it.each(SPEC_CASES)('schema-tests.txt case $id', ({ input, canonical, fingerprint }) => {
    // avsc refuses the empty union of case 016 (no value fits it): its fingerprint is still checked.
    const form = input === '[  ]' ? canonical : JSON.stringify(avroType(JSON.parse(input)).schema());
    expect(form).toBe(canonical);
    if (fingerprint !== undefined) expect(fingerprintInt64(form)).toBe(fingerprint);
  });

  it('is a fingerprint of bytes: the empty string gives the polynomial, logical types are stripped', () => {
    expect(crc64Avro(new Uint8Array())).toBe(0xc15d213aa4d7a795n);
    expect(JSON.stringify(avroType({ type: 'long', logicalType: 'timestamp-micros' }).schema())).toBe('"long"');
    expect(JSON.stringify(avroType({ type: 'string', logicalType: 'uuid' }).schema())).toBe('"string"');
  });
});

describe('names and the schema of a table definition', () => {
  it('sanitizes SQL names to Avro names, and keeps column field names unique', () => {
    expect(avroName('items')).toBe('items');
    expect(avroName('my table.v2')).toBe('my_table_v2');
    expect(avroName('1st')).toBe('_1st');
    expect(avroName('')).toBe('_');
    expect(avroName('café')).toBe('caf_');
    const t = { name: 'text' } as const;
    expect(fieldNames([column(1, 'a b', t), column(2, 'a_b', t), column(3, 'a-b', t), column(4, '9', t)])).toEqual(['a_b_2', 'a_b', 'a_b_3', '_9']);
  });

  it('names the record svcdb.cdc.<tenant>_<table>.Event and maps nullability', () => {
    const table: TableDef = { ...itemsTable(7), tenant: 'acme-co', name: 'line items' };
    const { schema } = tableLayout(table);
    const type = avroType(schema);
    expect(type.name).toBe('svcdb.cdc.acme_co_line_items.Event');
    const canonical = JSON.parse(JSON.stringify(type.schema())) as { fields: { name: string; type: unknown }[] };
    expect(canonical.fields.map((f) => f.name)).toEqual([
      'event_id',
      'timestamp',
      'sequence',
      'operation',
      'database',
      'table',
      'key',
      'value',
      'old_value',
      'transaction_id',
      'schema_change',
      'old_schema_change',
    ]);
    const value = canonical.fields.find((f) => f.name === 'value')!.type as [string, { fields: unknown[] }];
    expect(value[1].fields).toEqual([
      { name: 'id', type: 'long' },
      { name: 'name', type: ['null', 'string'] },
      { name: 'score', type: ['null', 'int'] },
    ]);
    const key = canonical.fields.find((f) => f.name === 'key')!.type as [string, { fields: unknown[] }];
    expect(key[1].fields).toEqual([{ name: 'id', type: 'long' }]);
  });

  it('types SCHEMA_CHANGE values with the fields schemaValue gives', () => {
    const value = schemaValue('ALTER', itemsTable(7));
    expect(Object.keys(value).sort()).toEqual([...SCHEMA_CHANGE_FIELDS].sort());
    expect(Object.keys((value.columns as object[])[0]!).sort()).toEqual([...SCHEMA_COLUMN_FIELDS].sort());
  });

  it('caches by definition: an equal definition is the same format, another one a new fingerprint', () => {
    const schemas = new AvroSchemas(2);
    const a = schemas.forTable(itemsTable(7));
    expect(schemas.forTable(itemsTable(7))).toBe(a);
    const wider: TableDef = { ...itemsTable(7), columns: [...itemsTable(7).columns, column(4, 'note', { name: 'text' })] };
    const b = schemas.forTable(wider);
    expect(b.info.fingerprint).not.toBe(a.info.fingerprint);
    expect(schemas.byFingerprintHex(a.info.fingerprint)).toBe(a.info);
    schemas.forTable({ ...itemsTable(7), name: 'other' });
    expect(schemas.byFingerprintHex(a.info.fingerprint)).toBeNull();
    expect(schemas.forTable(itemsTable(7)).info).toEqual(a.info);
  });
});

const ALL_TYPES_DDL = `CREATE TABLE all_types (
  id BIGINT PRIMARY KEY, b BOOLEAN, s SMALLINT, i INTEGER, big BIGINT, r REAL, d DOUBLE PRECISION,
  n NUMERIC(40,10), t TEXT, vc VARCHAR(20), c CHAR(4), u UUID, j JSONB, ts TIMESTAMP, tz TIMESTAMPTZ,
  dt DATE, v VECTOR(3), "Odd name" TEXT, "1st" INTEGER NOT NULL DEFAULT 0
)`;

const FULL_ROW = `INSERT INTO all_types VALUES (
  9007199254740993, true, -32768, 2147483647, -9223372036854775808, 0.1, 'NaN', '12345678901234567890.0123456789',
  'héllo ✓', 'short', 'ab', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', '{"b": [1, 2.5, null], "a": {"x": "y"}}',
  '1969-12-31 23:59:59.999999', '2024-02-29T12:34:56.123456+02:00', '1900-01-01', '[1.5, -2, 0.1]', 'odd', 7
)`;

/** What avsc decodes from the full row (longs as bigints, timestamps as micros, dates as days). */
const FULL_ROW_AVRO = {
  id: 9007199254740993n,
  b: true,
  s: -32768,
  i: 2147483647,
  big: -9223372036854775808n,
  r: Math.fround(0.1),
  d: Number.NaN,
  n: '12345678901234567890.0123456789',
  t: 'héllo ✓',
  vc: 'short',
  c: 'ab  ',
  u: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
  j: '{"a":{"x":"y"},"b":[1,2.5,null]}',
  ts: -1n,
  tz: 1709202896123456n,
  dt: -25567,
  v: [1.5, -2, Math.fround(0.1)],
  Odd_name: 'odd',
  _1st: 7,
};

async function eventsOf(h: SqlHarness, table: string): Promise<SourcedEvent[]> {
  const tableId = h.stack.projections.catalog.tableByName('default', 'public', table)!.def.id;
  const spec = { tenant: 'default', tableIds: [tableId], objectKind: 'test', objectName: 'none', createdLsn: 1, createdSequence: -1n, snapshotRows: 0n };
  const out: SourcedEvent[] = [];
  const options = { batchEventsMax: 100, batchBytesMax: 1 << 20, signal: new AbortController().signal, stopAtHead: true };
  for await (const batch of changeEvents(projectionEventSource(h.stack.projections), spec, { lsn: 1, afterSequence: -1n }, options)) out.push(...batch);
  return out;
}

function decodeWith(schema: AvroSchemaJson, message: Buffer): Record<string, unknown> {
  expect(message.subarray(0, 2)).toEqual(SINGLE_OBJECT_MAGIC);
  return avroType(schema).fromBuffer(message.subarray(10)) as Record<string, unknown>;
}

function python(schema: unknown, messages: Buffer[]): { canonical_form: string; messages: { fingerprint: string; datum: Record<string, unknown> }[] } {
  const input = JSON.stringify({ schema, messages: messages.map((m) => m.toString('hex')) });
  const run = spawnSync(PYTHON, [DECODER], { input, encoding: 'utf8', timeout: 30_000 });
  if (run.status !== 0) throw new Error(`python3-avro decoder failed (${String(run.status)}): ${run.stderr || String(run.error)}`);
  return JSON.parse(run.stdout) as ReturnType<typeof python>;
}

describe('change events of a real log as single-object Avro', () => {
  let h: SqlHarness;
  let events: SourcedEvent[];
  let messages: Buffer[];
  let before: TableDef;
  let after: TableDef;

  beforeAll(async () => {
    h = await openSql();
    await h.q(ALL_TYPES_DDL);
    await h.q(FULL_ROW);
    await h.q('INSERT INTO all_types (id) VALUES (2)');
    await h.q("UPDATE all_types SET t = 'changed', ts = 'infinity', dt = '-infinity', r = '-Infinity' WHERE id = 2");
    await h.q('DELETE FROM all_types WHERE id = 2');
    await h.q('ALTER TABLE all_types ADD COLUMN note TEXT');
    await h.q("INSERT INTO all_types (id, note) VALUES (3, 'after')");
    await h.q('TRUNCATE all_types');
    events = await eventsOf(h, 'all_types');
    const encoder = avroEncoder(new AvroSchemas());
    messages = events.map((e) => encoder.encode(e));
    before = events[0]!.table;
    after = events.at(-1)!.table;
  });

  afterAll(async () => {
    await h?.close();
  });

  it('reads the changes it was given', () => {
    expect(events.map((e) => e.event.operation)).toEqual(['SCHEMA_CHANGE', 'INSERT', 'INSERT', 'UPDATE', 'DELETE', 'SCHEMA_CHANGE', 'INSERT', 'TRUNCATE']);
    expect(avroEncoder(new AvroSchemas()).contentType).toBe('avro/binary');
  });

  it('round-trips every column type through avsc', () => {
    const schema = avroSchemaFor(before).schema;
    const full = decodeWith(schema, messages[1]!);
    expect(full.operation).toBe('INSERT');
    expect(full.sequence).toBe(events[1]!.sequence);
    expect(full.timestamp).toBe(BigInt(Date.parse(events[1]!.event.timestamp)) * 1000n);
    expect(full.key).toEqual({ id: 9007199254740993n });
    expect(full.value).toEqual(FULL_ROW_AVRO);
    expect(full.old_value).toBeNull();
    expect(full).toMatchObject({
      event_id: events[1]!.event.event_id,
      database: 'default',
      table: 'all_types',
      transaction_id: events[1]!.event.transaction_id,
    });

    const update = decodeWith(schema, messages[3]!);
    expect(update.old_value).toMatchObject({ id: 2n, b: null, t: null, v: null, ts: null, _1st: 0 });
    expect(update.value).toMatchObject({ t: 'changed', ts: 9223372036854775807n, dt: -2147483648, r: Number.NEGATIVE_INFINITY });
    expect(decodeWith(schema, messages[4]!)).toMatchObject({ operation: 'DELETE', key: { id: 2n }, value: null, old_value: { id: 2n, t: 'changed' } });
  });

  it('carries SCHEMA_CHANGE values in schema_change / old_schema_change, TRUNCATE with neither', () => {
    const created = decodeWith(avroSchemaFor(before).schema, messages[0]!);
    expect(created).toMatchObject({ operation: 'SCHEMA_CHANGE', key: null, value: null, old_value: null });
    expect(created.schema_change).toEqual(events[0]!.event.value);
    expect(created.old_schema_change).toEqual(events[0]!.event.old_value);
    const altered = decodeWith(avroSchemaFor(after).schema, messages[5]!);
    expect(altered.schema_change).toEqual(events[5]!.event.value);
    expect(altered.old_schema_change).toEqual(events[5]!.event.old_value);
    expect(decodeWith(avroSchemaFor(after).schema, messages[7]!)).toMatchObject({ operation: 'TRUNCATE', key: null, value: null, schema_change: null });
  });

  it('ALTER TABLE ADD COLUMN: a new fingerprint; old messages still decode with theirs, and resolve to the new schema', () => {
    const old = avroSchemaFor(before);
    const current = avroSchemaFor(after);
    expect(current.fingerprint).not.toBe(old.fingerprint);
    for (const i of [0, 1, 2, 3, 4]) expect(messages[i]!.subarray(2, 10).toString('hex')).toBe(old.fingerprint);
    for (const i of [5, 6, 7]) expect(messages[i]!.subarray(2, 10).toString('hex')).toBe(current.fingerprint);
    expect(decodeWith(current.schema, messages[6]!).value).toMatchObject({ id: 3n, note: 'after' });
    // A reader on the new schema reads an old message through Avro schema resolution (note: default null).
    const reader = avroType(current.schema);
    const resolved = reader.fromBuffer(messages[1]!.subarray(10), reader.createResolver(avroType(old.schema))) as { value: Record<string, unknown> };
    expect(resolved.value).toEqual({ ...FULL_ROW_AVRO, note: null });
  });

  it('a message is a 10-byte header and the body; the fingerprint is of the canonical form', () => {
    const info = avroSchemaFor(before);
    const format = new AvroTableFormat(tableLayout(before));
    expect(format.info).toEqual(info);
    expect(BigInt.asIntN(64, Buffer.from(info.fingerprint, 'hex').readBigUInt64LE())).toBe(BigInt(info.fingerprintInt64));
    expect(fingerprintInt64(info.canonicalForm).toString()).toBe(info.fingerprintInt64);
  });

  it('Apache Avro for Python, in another process, decodes the messages and agrees on the canonical form', () => {
    const old = avroSchemaFor(before);
    // Not the UPDATE/DELETE of row 2: its 'infinity' timestamp (2^63-1 micros) is past Python's datetime.
    const out = python(old.schema, [messages[0]!, messages[1]!, messages[2]!]);
    expect(out.canonical_form).toBe(old.canonicalForm);
    expect(out.messages.map((m) => m.fingerprint)).toEqual([old.fingerprint, old.fingerprint, old.fingerprint]);
    const [created, full, sparse] = out.messages.map((m) => m.datum);
    expect(created).toMatchObject({ operation: 'SCHEMA_CHANGE', value: null, schema_change: events[0]!.event.value });
    expect(full).toEqual({
      event_id: events[1]!.event.event_id,
      timestamp: String(BigInt(Date.parse(events[1]!.event.timestamp)) * 1000n),
      sequence: events[1]!.sequence.toString(),
      operation: 'INSERT',
      database: 'default',
      table: 'all_types',
      key: { id: '9007199254740993' },
      value: {
        id: '9007199254740993',
        b: true,
        s: '-32768',
        i: '2147483647',
        big: '-9223372036854775808',
        r: Math.fround(0.1),
        d: 'NaN',
        n: '12345678901234567890.0123456789',
        t: 'héllo ✓',
        vc: 'short',
        c: 'ab  ',
        u: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
        j: '{"a":{"x":"y"},"b":[1,2.5,null]}',
        ts: '-1',
        tz: '1709202896123456',
        dt: '-25567',
        v: [1.5, -2, Math.fround(0.1)],
        Odd_name: 'odd',
        _1st: '7',
      },
      old_value: null,
      transaction_id: events[1]!.event.transaction_id,
      schema_change: null,
      old_schema_change: null,
    });
    expect(sparse).toMatchObject({ operation: 'INSERT', key: { id: '2' }, value: { id: '2', b: null, ts: null, v: null, _1st: '0' } });
    const current = avroSchemaFor(after);
    expect(python(current.schema, [messages[6]!]).messages[0]!.datum).toMatchObject({ value: { id: '3', note: 'after' } });
  });
});

describe('array columns as Avro arrays of nullable elements', () => {
  it('round-trips one-dimensional arrays (NULL elements, bigint, numeric text, timestamps) and refuses a multi-dimensional one', async () => {
    const h = await openSql();
    try {
      await h.q('CREATE TABLE arr (id INT PRIMARY KEY, labels TEXT[], big BIGINT[], amounts NUMERIC[], ts TIMESTAMPTZ[], m INT[])');
      await h.q("INSERT INTO arr VALUES (1, '{a,NULL}', '{9007199254740993,-1}', '{1.50}', '{2024-01-02T03:04:05Z}', '{1,2}')");
      await h.q("INSERT INTO arr (id, m) VALUES (2, '{{1,2},{3,4}}')");
      const events = await eventsOf(h, 'arr');
      const schema = avroSchemaFor(events[0]!.table).schema;
      expect(JSON.stringify(schema)).toContain('"sql_type":"TEXT[]","type":["null",{"type":"array","items":["null","string"]}]');
      const encoder = avroEncoder(new AvroSchemas());
      const row = decodeWith(schema, encoder.encode(events[1]!));
      expect(row.value).toEqual({ id: 1, labels: ['a', null], big: [9007199254740993n, -1n], amounts: ['1.50'], ts: [1704164645000000n], m: [1, 2] });
      let refused: unknown = null;
      try {
        encoder.encode(events[2]!);
      } catch (error) {
        refused = error;
      }
      expect(refused).toMatchObject({ message: expect.stringMatching(/does not fit the Avro schema/), details: { field: 'm' } });
    } finally {
      await h.close();
    }
  });
});
