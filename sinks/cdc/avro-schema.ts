/**
 * The Avro schema of a table's change events (docs/cdc-avro.md): one record
 * `svcdb.cdc.<tenant>_<table>.Event` per table definition, its row records typed from the
 * table's columns. Pure: a TableDef in, the schema as JSON out (what GET .../schema serves).
 */
import type { ColumnDef, TableDef } from '../../core/catalog.js';
import { sqlTypeText, type SqlType } from '../../core/values.js';
import { CHANGE_OPERATIONS } from '../events/change-event.js';

/** A schema as JSON (the .avsc text parsed). */
export type AvroSchemaJson = string | AvroSchemaJson[] | { readonly [attribute: string]: unknown };

/** Where a column's value goes in the Avro records: its field name and SQL type. */
export interface AvroColumn {
  readonly column: ColumnDef;
  readonly field: string;
}

/** What the value mapping needs besides the schema: the fields of each row record, in order. */
export interface AvroTableLayout {
  readonly schema: AvroSchemaJson;
  readonly columns: readonly AvroColumn[];
  readonly keyColumns: readonly AvroColumn[];
}

export const NAMESPACE_PREFIX = 'svcdb.cdc';

const VALID_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * An Avro name (`[A-Za-z_][A-Za-z0-9_]*`) for any SQL name: every character outside
 * `[A-Za-z0-9_]` becomes `_`, and a name that would start with a digit, or is empty, gets `_` in front.
 */
export function avroName(name: string): string {
  let out = '';
  for (const ch of name) out += /^[A-Za-z0-9_]$/.test(ch) ? ch : '_';
  return /^[A-Za-z_]/.test(out) ? out : `_${out}`;
}

/**
 * Field names of columns, unique: a name that is already valid keeps it; the others take their
 * `avroName`, then `_2`, `_3`, ... (in column order) while that name is taken.
 */
export function fieldNames(columns: readonly ColumnDef[]): string[] {
  const taken = new Set(columns.filter((c) => VALID_NAME.test(c.name)).map((c) => c.name));
  return columns.map((c) => {
    if (VALID_NAME.test(c.name)) return c.name;
    const base = avroName(c.name);
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base}_${n}`;
    taken.add(name);
    return name;
  });
}

/** The Avro type of a SQL type's non-null values (the type mapping table of docs/cdc-avro.md). */
export function avroTypeOf(type: SqlType): AvroSchemaJson {
  switch (type.name) {
    case 'bool':
      return 'boolean';
    case 'int2':
    case 'int4':
      return 'int';
    case 'int8':
      return 'long';
    case 'float4':
      return 'float';
    case 'float8':
      return 'double';
    // Decimal text: NUMERIC may be unbounded or NaN, which Avro's bytes `decimal` cannot carry.
    case 'numeric':
      return 'string';
    case 'text':
    case 'varchar':
    case 'char':
      return 'string';
    case 'uuid':
      return { type: 'string', logicalType: 'uuid' };
    case 'jsonb':
      return 'string';
    case 'timestamp':
    case 'timestamptz':
      return { type: 'long', logicalType: 'timestamp-micros' };
    case 'date':
      return { type: 'int', logicalType: 'date' };
    case 'vector':
      return { type: 'array', items: 'float' };
    // One dimension of nullable elements (Debezium's choice for PostgreSQL arrays).
    case 'array':
      return { type: 'array', items: ['null', avroTypeOf(type.element ?? { name: 'text' })] };
  }
}

function columnField(entry: AvroColumn): Record<string, unknown> {
  const type = avroTypeOf(entry.column.type);
  const base = { name: entry.field, sql_name: entry.column.name, sql_type: sqlTypeText(entry.column.type) };
  return entry.column.nullable ? { ...base, type: ['null', type], default: null } : { ...base, type };
}

function rowRecord(name: string, doc: string, columns: readonly AvroColumn[]): Record<string, unknown> {
  return { type: 'record', name, doc, fields: columns.map(columnField) };
}

/** The value of SCHEMA_CHANGE events ({ddl, columns, primary_key}, see schemaValue), typed. */
const SCHEMA_CHANGE_RECORD = {
  type: 'record',
  name: 'SchemaChange',
  doc: 'The table after a CREATE, ALTER or DROP (value of SCHEMA_CHANGE events)',
  fields: [
    { name: 'ddl', type: 'string' },
    {
      name: 'columns',
      type: {
        type: 'array',
        items: {
          type: 'record',
          name: 'SchemaColumn',
          fields: [
            { name: 'name', type: 'string' },
            { name: 'type', type: 'string' },
            { name: 'nullable', type: 'boolean' },
            { name: 'is_primary_key', type: 'boolean' },
          ],
        },
      },
    },
    { name: 'primary_key', type: { type: 'array', items: 'string' } },
  ],
} as const;

/** The fields of the SchemaChange record, for the value mapping (and a test that keeps it in step with schemaValue). */
export const SCHEMA_CHANGE_FIELDS = ['ddl', 'columns', 'primary_key'] as const;
export const SCHEMA_COLUMN_FIELDS = ['name', 'type', 'nullable', 'is_primary_key'] as const;

/** The event schema of one table definition, and where each column goes. */
export function tableLayout(table: TableDef): AvroTableLayout {
  const names = fieldNames(table.columns);
  const columns = table.columns.map((column, i) => ({ column, field: names[i]! }));
  const keyColumns = table.primaryKey.map((id) => columns.find((c) => c.column.id === id)).filter((c): c is AvroColumn => c !== undefined);
  const nullable = (type: AvroSchemaJson): Record<string, unknown> => ({ type: ['null', type], default: null });
  const schema = {
    type: 'record',
    name: 'Event',
    namespace: `${NAMESPACE_PREFIX}.${avroName(table.tenant)}_${avroName(table.name)}`,
    doc: `svcdb change event of table ${table.name} (database ${table.tenant})`,
    fields: [
      { name: 'event_id', type: 'string' },
      { name: 'timestamp', type: { type: 'long', logicalType: 'timestamp-micros' } },
      { name: 'sequence', type: 'long' },
      { name: 'operation', type: { type: 'enum', name: 'Operation', symbols: [...CHANGE_OPERATIONS] } },
      { name: 'database', type: 'string' },
      { name: 'table', type: 'string' },
      { name: 'key', ...nullable(rowRecord('Key', 'The primary-key columns', keyColumns)) },
      { name: 'value', ...nullable(rowRecord('Value', 'A row of the table', columns)) },
      { name: 'old_value', ...nullable('Value') },
      { name: 'transaction_id', type: 'string' },
      { name: 'schema_change', ...nullable(SCHEMA_CHANGE_RECORD) },
      { name: 'old_schema_change', ...nullable('SchemaChange') },
    ],
  };
  return { schema, columns, keyColumns };
}
