/**
 * From a change event's JSON values (the REST forms of query/types/json-io.ts) to the values of
 * its Avro record. Exact: BIGINT travels as a bigint (its JSON may be a string past 2^53),
 * timestamps and dates are read back from their ISO text by the same parser SQL uses (so
 * 'infinity', years past 9999 and microseconds survive), NUMERIC stays its decimal text.
 */
import { stringifyJson } from '../../core/json-exact.js';
import type { SqlType } from '../../core/values.js';
import { typeSystem } from '../../query/index.js';
import type { ChangeEvent, JsonObject } from '../events/change-event.js';
import type { AvroColumn, AvroTableLayout } from './avro-schema.js';
import { SCHEMA_CHANGE_FIELDS, SCHEMA_COLUMN_FIELDS } from './avro-schema.js';

/** A value that does not fit its column's Avro type: the event and the schema disagree. */
export class AvroValueError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
    this.name = 'AvroValueError';
  }
}

const FLOAT_TEXT: Readonly<Record<string, number>> = { NaN: Number.NaN, Infinity: Number.POSITIVE_INFINITY, '-Infinity': Number.NEGATIVE_INFINITY };

/** The Avro value of one column's JSON value (null stays null). */
export function avroValueOf(type: SqlType, json: unknown, field: string): unknown {
  if (json === null || json === undefined) return null;
  const fail = (): never => {
    throw new AvroValueError(field, `${JSON.stringify(json)} is not a ${type.name} value`);
  };
  switch (type.name) {
    case 'bool':
      return typeof json === 'boolean' ? json : fail();
    case 'int2':
    case 'int4':
      return typeof json === 'number' && Number.isInteger(json) ? json : fail();
    case 'int8':
      if (typeof json === 'number' && Number.isSafeInteger(json)) return BigInt(json);
      return typeof json === 'string' && /^-?\d+$/.test(json) ? BigInt(json) : fail();
    case 'float4':
    case 'float8':
      if (typeof json === 'number') return json;
      return typeof json === 'string' && json in FLOAT_TEXT ? FLOAT_TEXT[json] : fail();
    case 'numeric':
      return typeof json === 'string' || typeof json === 'number' ? String(json) : fail();
    case 'text':
    case 'varchar':
    case 'char':
    case 'uuid':
      return typeof json === 'string' ? json : fail();
    case 'jsonb':
      return stringifyJson(json); // exact jsonb numbers (core/json-exact.ts)
    case 'timestamp':
    case 'timestamptz':
      return typeof json === 'string' ? (typeSystem.fromJson(type, json) as bigint) : fail();
    case 'date':
      return typeof json === 'string' ? (typeSystem.fromJson(type, json) as number) : fail();
    case 'vector':
      return Array.isArray(json) && json.every((x) => typeof x === 'number') ? json : fail();
    case 'array':
      return avroArrayOf(type.element ?? { name: 'text' }, json, field);
  }
}

/**
 * An array column: an Avro array of nullable elements. The Avro type has one dimension (the SQL
 * type does not say how many), so a multi-dimensional value is refused rather than flattened.
 */
function avroArrayOf(element: SqlType, json: unknown, field: string): unknown[] {
  if (!Array.isArray(json)) throw new AvroValueError(field, `${JSON.stringify(json)} is not an array`);
  return json.map((item: unknown) => {
    if (Array.isArray(item) && element.name !== 'jsonb' && element.name !== 'vector') {
      throw new AvroValueError(field, 'a multi-dimensional array does not fit the one-dimensional Avro array of its column');
    }
    return avroValueOf(element, item, field);
  });
}

function rowRecord(columns: readonly AvroColumn[], row: JsonObject | null): Record<string, unknown> | null {
  if (row === null) return null;
  const out: Record<string, unknown> = {};
  for (const { column, field } of columns) out[field] = avroValueOf(column.type, row[column.name], field);
  return out;
}

function pick(object: unknown, fields: readonly string[]): Record<string, unknown> {
  const source = (object ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const f of fields) out[f] = source[f];
  return out;
}

function schemaChangeRecord(value: JsonObject | null): Record<string, unknown> | null {
  if (value === null) return null;
  const record = pick(value, SCHEMA_CHANGE_FIELDS);
  record.columns = Array.isArray(record.columns) ? record.columns.map((c) => pick(c, SCHEMA_COLUMN_FIELDS)) : record.columns;
  return record;
}

/** The Avro record of an event: its envelope, and value/old_value or schema_change/old_schema_change by operation. */
export function avroRecordOf(layout: AvroTableLayout, event: ChangeEvent, sequence: bigint): Record<string, unknown> {
  const schemaChange = event.operation === 'SCHEMA_CHANGE';
  return {
    event_id: event.event_id,
    // The event's commit time is milliseconds (its JSON `timestamp`); micros as the logical type wants.
    timestamp: BigInt(Date.parse(event.timestamp)) * 1000n,
    sequence,
    operation: event.operation,
    database: event.database,
    table: event.table,
    key: schemaChange ? null : rowRecord(layout.keyColumns, event.key),
    value: schemaChange ? null : rowRecord(layout.columns, event.value),
    old_value: schemaChange ? null : rowRecord(layout.columns, event.old_value),
    transaction_id: event.transaction_id,
    schema_change: schemaChange ? schemaChangeRecord(event.value) : null,
    old_schema_change: schemaChange ? schemaChangeRecord(event.old_value) : null,
  };
}
