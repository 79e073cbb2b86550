/**
 * The change event: one committed change of one table, in the spec's shape (docs/cdc.md). Built
 * from a log record and the table's definition as of that record, so the same change always
 * gives the same event, id and sequence included, however often it is read again.
 */
import { createHash } from 'node:crypto';
import type { ColumnDef, TableDef } from '../../core/catalog.js';
import { JSON_NULL, setOwn } from '../../core/json-exact.js';
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
 * A deterministic, ULID-shaped event id: 48 bits of commit time (ms), 16 bits of a hash of the
 * database (tenant), then the 64-bit sequence, in Crockford base32. Sorts by commit time like a
 * ULID; unique because the sequence is (server-wide); the same change always has the same id.
 */
export function eventId(tenant: string, sequence: bigint, timestampMicros: bigint): string {
  const ms = Number(timestampMicros / 1000n);
  const bytes = ID_BYTES;
  // 48-bit time, big-endian (ms < 2^48, as in a ULID).
  const high = Math.floor(ms / 2 ** 32);
  const low = ms >>> 0;
  bytes[0] = (high >>> 8) & 0xff;
  bytes[1] = high & 0xff;
  bytes[2] = low >>> 24;
  bytes[3] = (low >>> 16) & 0xff;
  bytes[4] = (low >>> 8) & 0xff;
  bytes[5] = low & 0xff;
  const tenantHash = tenantHashOf(tenant);
  bytes[6] = tenantHash >>> 8;
  bytes[7] = tenantHash & 0xff;
  const seqHigh = Number(sequence >> 32n) >>> 0;
  const seqLow = Number(sequence & 0xffffffffn) >>> 0;
  bytes[8] = seqHigh >>> 24;
  bytes[9] = (seqHigh >>> 16) & 0xff;
  bytes[10] = (seqHigh >>> 8) & 0xff;
  bytes[11] = seqHigh & 0xff;
  bytes[12] = seqLow >>> 24;
  bytes[13] = (seqLow >>> 16) & 0xff;
  bytes[14] = (seqLow >>> 8) & 0xff;
  bytes[15] = seqLow & 0xff;
  return base32(bytes);
}

const ID_BYTES = new Uint8Array(16);
const tenantHashes = new Map<string, number>();
/** Tenants whose hash is kept (a bounded cache: the hash is cheap to compute again). */
const TENANT_HASHES_MAX = 10_000;

function tenantHashOf(tenant: string): number {
  let hash = tenantHashes.get(tenant);
  if (hash === undefined) {
    const digest = createHash('sha256').update(tenant).digest();
    hash = (digest[0]! << 8) | digest[1]!;
    if (tenantHashes.size >= TENANT_HASHES_MAX) tenantHashes.clear();
    tenantHashes.set(tenant, hash);
  }
  return hash;
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** 128 bits as 26 Crockford base32 characters (the first carries the top 3 bits), as a ULID. */
function base32(bytes: Uint8Array): string {
  let out = '';
  // 130 bits of output for 128 of input: two zero bits in front.
  let buffer = 0;
  let bits = 2;
  for (let i = 0; i < 16; i++) {
    buffer = ((buffer << 8) | bytes[i]!) & 0x3fff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += CROCKFORD[(buffer >>> bits) & 31]!;
    }
  }
  return out;
}

/** The ISO text of a commit time; records of a batch share one (a one-entry cache). */
let lastIsoMicros = -1n;
let lastIso = '';

function isoOf(timestampMicros: bigint): string {
  if (timestampMicros !== lastIsoMicros) {
    lastIsoMicros = timestampMicros;
    lastIso = new Date(Number(timestampMicros / 1000n)).toISOString();
  }
  return lastIso;
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
    for (let i = 0; i < columns.length; i++) setOwn(row, columns[i]!.name, jsonOf(columns[i]!, values[i] ?? null));
    if (this.keyColumns.length === 0) return { row, key: null };
    const key: JsonObject = {};
    for (const i of this.keyColumns) setOwn(key, columns[i]!.name, row[columns[i]!.name]);
    return { row, key };
  }
}

function jsonOf(column: ColumnDef, value: SqlValue): unknown {
  if (value === null) return null;
  const json = typeSystem.toJson(column.type, value);
  // An event is plain JSON data (cloned to the template worker, MessagePack in the ledger): a top-level
  // jsonb JSON null (JSON_NULL in query results) is null here, as on every JSON wire (docs/api.md).
  return json === JSON_NULL ? null : json;
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
    timestamp: isoOf(facts.timestampMicros),
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
