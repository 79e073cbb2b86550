/**
 * The change event: one committed change of one table, in the spec's shape (docs/cdc.md). Built
 * from a log record and the table's definition as of that record, so the same change always
 * gives the same event, id and sequence included, however often it is read again.
 */
import { createHash } from 'node:crypto';
import type { ColumnDef, TableDef } from '../../core/catalog.js';
import { decodeRowInto } from '../../core/row-codec.js';
import { sqlTypeText, type SqlValue } from '../../core/values.js';
import { typeSystem } from '../../query/index.js';

export type ChangeOperation = 'INSERT' | 'UPDATE' | 'DELETE' | 'TRUNCATE' | 'SCHEMA_CHANGE' | 'SNAPSHOT';

export const CHANGE_OPERATIONS: readonly ChangeOperation[] = ['INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'SCHEMA_CHANGE', 'SNAPSHOT'];

export type JsonObject = Record<string, unknown>;

/** The event as delivered (JSON). */
export interface ChangeEvent {
  readonly event_id: string;
  /** Commit time, ISO 8601 UTC. */
  readonly timestamp: string;
  readonly sequence: number;
  readonly operation: ChangeOperation;
  /** The tenant. */
  readonly database: string;
  readonly table: string;
  /** Primary-key columns (null for TRUNCATE, SCHEMA_CHANGE and tables without a primary key). */
  readonly key: JsonObject | null;
  readonly value: JsonObject | null;
  readonly old_value: JsonObject | null;
  readonly transaction_id: string;
}

/** An event with where it came from: what delivery needs besides the JSON. */
export interface SourcedEvent {
  readonly event: ChangeEvent;
  /** LSN of the log record it came from. */
  readonly lsn: number;
  readonly sequence: bigint;
  /** The table's definition the values were read with (Avro picks its schema by it). */
  readonly table: TableDef;
}

/** Where an event comes from: a record's commit facts. */
export interface RecordFacts {
  readonly txnId: string;
  readonly tenant: string;
  readonly timestampMicros: bigint;
}

/**
 * A deterministic, ULID-shaped event id: 48 bits of commit time (ms) then 80 bits of
 * SHA-256(tenant, sequence), Crockford base32. Sorts by commit time like a ULID; the same change
 * always has the same id.
 */
export function eventId(tenant: string, sequence: bigint, timestampMicros: bigint): string {
  const bytes = new Uint8Array(16);
  let ms = timestampMicros / 1000n;
  for (let i = 5; i >= 0; i--) {
    bytes[i] = Number(ms & 0xffn);
    ms >>= 8n;
  }
  const digest = createHash('sha256').update(`${tenant}\u0000${sequence}`).digest();
  bytes.set(digest.subarray(0, 10), 6);
  return base32(bytes);
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** 128 bits as 26 Crockford base32 characters (the first carries 3 bits), as a ULID. */
function base32(bytes: Uint8Array): string {
  let value = 0n;
  for (const b of bytes) value = (value << 8n) | BigInt(b);
  let out = '';
  for (let i = 0; i < 26; i++) {
    out = CROCKFORD[Number(value & 31n)]! + out;
    value >>= 5n;
  }
  return out;
}

/** Decodes row images of one table definition into JSON objects, values as the REST API prints them. */
export class RowJson {
  private readonly columnIds: number[];
  private readonly missing: SqlValue[];
  private readonly keyColumns: number[];

  constructor(readonly table: TableDef) {
    this.columnIds = table.columns.map((c) => c.id);
    this.missing = table.columns.map((c) => c.missingValue);
    this.keyColumns = table.primaryKey.map((id) => table.columns.findIndex((c) => c.id === id)).filter((i) => i >= 0);
  }

  /** The row as JSON, and its key (null when the table has no primary key). */
  decode(image: Uint8Array): { row: JsonObject; key: JsonObject | null } {
    const values = decodeRowInto(image, this.columnIds, this.missing);
    const row: JsonObject = {};
    const columns = this.table.columns;
    for (let i = 0; i < columns.length; i++) row[columns[i]!.name] = jsonOf(columns[i]!, values[i] ?? null);
    if (this.keyColumns.length === 0) return { row, key: null };
    const key: JsonObject = {};
    for (const i of this.keyColumns) key[columns[i]!.name] = row[columns[i]!.name];
    return { row, key };
  }
}

function jsonOf(column: ColumnDef, value: SqlValue): unknown {
  return value === null ? null : typeSystem.toJson(column.type, value);
}

/** The value of a SCHEMA_CHANGE event: what the table looks like after the change. */
export function schemaValue(ddl: 'CREATE' | 'ALTER' | 'DROP', table: TableDef | null): JsonObject {
  if (!table) return { ddl, columns: [], primary_key: [] };
  const names = new Map(table.columns.map((c) => [c.id, c.name]));
  return {
    ddl,
    columns: table.columns.map((c) => ({ name: c.name, type: sqlTypeText(c.type), nullable: c.nullable, is_primary_key: table.primaryKey.includes(c.id) })),
    primary_key: table.primaryKey.map((id) => names.get(id) ?? String(id)),
  };
}

/** Builds the JSON event of one change. */
export function changeEvent(
  facts: RecordFacts,
  sequence: bigint,
  table: TableDef,
  operation: ChangeOperation,
  parts: { readonly key: JsonObject | null; readonly value: JsonObject | null; readonly oldValue: JsonObject | null },
): ChangeEvent {
  return {
    event_id: eventId(facts.tenant, sequence, facts.timestampMicros),
    timestamp: new Date(Number(facts.timestampMicros / 1000n)).toISOString(),
    sequence: Number(sequence),
    operation,
    database: facts.tenant,
    table: table.name,
    key: parts.key,
    value: parts.value,
    old_value: parts.oldValue,
    transaction_id: facts.txnId,
  };
}
