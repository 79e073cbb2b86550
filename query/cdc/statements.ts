/**
 * The CDC statements: CREATE / ALTER / DROP write the stream's definition into the log as a
 * catalog object (one record each); SHOW reads the catalog and the running streams' status
 * (CdcRuntime, implemented by sinks/ and handed in by the composition root).
 */
import { DEFAULT_SCHEMA } from '../../core/catalog.js';
import {
  CDC_STREAM_DEF_VERSION,
  CDC_STREAM_OBJECT,
  decodeCdcStreamDef,
  destinationAddress,
  encodeCdcStreamDef,
  type CdcDestination,
  type CdcStreamDef,
  type CdcStreamFilter,
} from '../../core/cdc-stream.js';
import { SvcError, tableNotFound } from '../../core/errors.js';
import { newUlid } from '../../core/ids.js';
import type { CatalogState, WriteView } from '../../projections/index.js';
import type { CdcStatement } from '../parse/index.js';
import { emptyResult, type QueryResult, type ResultColumn } from '../result.js';
import { alreadyExists, txnRecord } from '../ddl/common.js';
import type { DdlDeps } from '../ddl/deps.js';
import { submitDdl } from '../ddl/deps.js';
import type { CdcRuntime, CdcStreamStatus } from './runtime.js';

/** Longest stream name (it becomes part of Kafka transactional ids and metric labels). */
export const CDC_STREAM_NAME_BYTES_MAX = 128;

export async function executeCdc(statement: CdcStatement, deps: DdlDeps, runtime: CdcRuntime | null): Promise<QueryResult> {
  const tenant = deps.env.tenant;
  switch (statement.kind) {
    case 'cdc_create':
      return createStream(statement, deps, runtime);
    case 'cdc_alter':
      return alterStream(statement.name, statement.action, deps);
    case 'cdc_drop':
      return dropStream(statement.name, statement.ifExists, deps);
    case 'cdc_show':
      return showStreams(deps.projections.catalog, tenant, runtime);
    case 'cdc_status':
      return showStatus(deps.projections.catalog, tenant, statement.name, runtime);
  }
}

/** The definitions of a tenant's streams, by name. */
export function streamDefs(catalog: CatalogState, tenant: string): CdcStreamDef[] {
  return catalog
    .objects(CDC_STREAM_OBJECT)
    .filter((o) => o.tenant === tenant)
    .map((o) => decodeCdcStreamDef(o.definition))
    .sort((a, b) => a.name.localeCompare(b.name));
}

function streamDef(catalog: CatalogState, tenant: string, name: string): CdcStreamDef | null {
  const object = catalog.object(CDC_STREAM_OBJECT, tenant, name);
  return object ? decodeCdcStreamDef(object.definition) : null;
}

export function streamNotFound(name: string): SvcError {
  return new SvcError('NOT_FOUND', `CDC stream "${name}" does not exist; SHOW CDC STREAMS lists them`, { stream: name });
}

function checkName(name: string): void {
  if (Buffer.byteLength(name) > CDC_STREAM_NAME_BYTES_MAX || name.includes('\u0000')) {
    throw new SvcError('INVALID_QUERY', `a CDC stream name is at most ${CDC_STREAM_NAME_BYTES_MAX} bytes, without NUL`, { stream: name.slice(0, 64) });
  }
}

/** brokers: host:port[,host:port...] */
function checkBrokers(brokers: string): void {
  const parts = brokers.split(',').map((b) => b.trim());
  const ok = parts.every((b) => /^[A-Za-z0-9.\-_]+:\d{1,5}$/.test(b) || /^\[[0-9A-Fa-f:]+\]:\d{1,5}$/.test(b));
  if (!ok) throw new SvcError('INVALID_QUERY', `KAFKA takes a broker list host:port[,host:port...], got '${brokers}'`, { brokers });
}

/** The name users get when they give none: table and destination, as an identifier. */
function derivedName(table: string, destination: CdcDestination): string {
  const target = destination.kind === 'kafka' ? destination.topic : destination.stream;
  return `${table}_to_${target}`
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .slice(0, CDC_STREAM_NAME_BYTES_MAX);
}

async function createStream(statement: Extract<CdcStatement, { kind: 'cdc_create' }>, deps: DdlDeps, runtime: CdcRuntime | null): Promise<QueryResult> {
  const tenant = deps.env.tenant;
  const schema = statement.table.schema ?? DEFAULT_SCHEMA;
  const tableName = statement.table.name;
  const d = statement.destination;
  if (d.kind === 'kafka') checkBrokers(d.brokers);
  const destination: CdcDestination =
    d.kind === 'kafka'
      ? { kind: 'kafka', brokers: d.brokers, topic: d.topic ?? `${tenant}.${tableName}` }
      : { kind: 'kinesis', stream: d.stream, region: d.region };
  const name = statement.name ?? derivedName(tableName, destination);
  checkName(name);
  runtime?.checkDestination?.(destination);
  const filter: CdcStreamFilter | null = statement.filter ? { ...statement.filter } : null;
  if (filter) {
    // Checked against the table as it is now, before the record: a filter that cannot run is refused.
    const entry = deps.projections.catalog.tableByName(tenant, schema, tableName);
    if (entry && runtime?.checkFilter) await runtime.checkFilter(tenant, entry.def, filter);
  }
  let created: CdcStreamDef | null = null;
  await submitDdl(deps, async (view) => {
    const entry = view.catalog.tableByName(tenant, schema, tableName);
    if (!entry || entry.def.kind !== 'table') {
      throw tableNotFound(tableName, { noun: 'table' });
    }
    if (view.catalog.object(CDC_STREAM_OBJECT, tenant, name)) throw alreadyExists('CDC stream', name);
    const def: CdcStreamDef = {
      version: CDC_STREAM_DEF_VERSION,
      id: newUlid(),
      name,
      tenant,
      tableId: entry.def.id,
      table: tableName,
      destination,
      format: statement.format,
      snapshot: statement.snapshot,
      filter,
      paused: false,
      createdAt: new Date().toISOString(),
    };
    created = def;
    const snapshot = statement.snapshot ? { tableId: entry.def.id, rows: await countRows(view, entry.def.id) } : null;
    const op = { kind: 'put_object' as const, objectKind: CDC_STREAM_OBJECT, tenant, name, definition: encodeCdcStreamDef(def), snapshot };
    return { record: txnRecord(tenant, [op]), result: null };
  });
  return streamRows('CREATE CDC STREAM', [created!], null);
}

/** Rows of a table as the next record will see them (the snapshot reserves one sequence each). */
async function countRows(view: WriteView, tableId: number): Promise<bigint> {
  let rows = 0n;
  for await (const batch of view.rows(tableId)) rows += BigInt(batch.length);
  return rows;
}

async function alterStream(name: string, action: 'PAUSE' | 'RESUME', deps: DdlDeps): Promise<QueryResult> {
  const tenant = deps.env.tenant;
  await submitDdl(deps, async (view) => {
    const def = streamDef(view.catalog, tenant, name);
    if (!def) throw streamNotFound(name);
    const paused = action === 'PAUSE';
    if (def.paused === paused) return null;
    const op = { kind: 'put_object' as const, objectKind: CDC_STREAM_OBJECT, tenant, name, definition: encodeCdcStreamDef({ ...def, paused }), snapshot: null };
    return { record: txnRecord(tenant, [op]), result: null };
  });
  return emptyResult(`ALTER CDC STREAM ${action}`);
}

async function dropStream(name: string, ifExists: boolean, deps: DdlDeps): Promise<QueryResult> {
  const tenant = deps.env.tenant;
  await submitDdl(deps, async (view) => {
    if (!view.catalog.object(CDC_STREAM_OBJECT, tenant, name)) {
      if (ifExists) return null;
      throw streamNotFound(name);
    }
    return { record: txnRecord(tenant, [{ kind: 'drop_object', objectKind: CDC_STREAM_OBJECT, tenant, name }]), result: null };
  });
  return emptyResult('DROP CHANGE DATA CAPTURE');
}

const text = (name: string, nullable = false): ResultColumn => ({ name, type: 'TEXT', nullable });
const bigint = (name: string, nullable = false): ResultColumn => ({ name, type: 'BIGINT', nullable });

const STREAM_COLUMNS: ResultColumn[] = [
  text('name'),
  text('table'),
  text('destination'),
  text('address'),
  text('topic'),
  text('region', true),
  text('format'),
  text('state'),
  { name: 'created_at', type: 'TIMESTAMP WITH TIME ZONE', nullable: false },
  { name: 'filter', type: 'JSONB', nullable: true },
];

/** One row of SHOW CDC STREAMS (also what GET /cdc/streams lists). */
export function streamRow(def: CdcStreamDef, state: string): Record<string, unknown> {
  const d = def.destination;
  return {
    name: def.name,
    table: def.table,
    destination: d.kind,
    address: destinationAddress(d),
    topic: d.kind === 'kafka' ? d.topic : d.stream,
    region: d.kind === 'kinesis' ? d.region : null,
    format: def.format,
    state,
    created_at: def.createdAt,
    filter: def.filter ?? null,
  };
}

/** A stream's state: the runtime's word for it, or what its definition says when it is not running here. */
export function stateOf(def: CdcStreamDef, runtime: CdcRuntime | null): string {
  return runtime?.status(def.tenant, def.name)?.state ?? (def.paused ? 'paused' : 'starting');
}

function streamRows(command: string, defs: readonly CdcStreamDef[], runtime: CdcRuntime | null): QueryResult {
  const rows = defs.map((def) => streamRow(def, stateOf(def, runtime)));
  return { command, columns: STREAM_COLUMNS, rows, rowCount: rows.length, affectedRows: null, truncated: false };
}

function showStreams(catalog: CatalogState, tenant: string, runtime: CdcRuntime | null): QueryResult {
  return streamRows('SHOW', streamDefs(catalog, tenant), runtime);
}

const STATUS_COLUMNS: ResultColumn[] = [
  text('name'),
  text('state'),
  bigint('last_sequence', true),
  bigint('last_lsn', true),
  bigint('lag_records'),
  bigint('events_delivered'),
  bigint('events_filtered'),
  bigint('delivery_errors'),
  text('last_error', true),
  { name: 'last_error_at', type: 'TIMESTAMP WITH TIME ZONE', nullable: true },
];

/** SHOW CDC STREAM STATUS's one row (also GET /cdc/streams/{name}'s status). */
export function statusRow(def: CdcStreamDef, status: CdcStreamStatus | null): Record<string, unknown> {
  return {
    name: def.name,
    state: status?.state ?? (def.paused ? 'paused' : 'starting'),
    last_sequence: status?.lastSequence ?? null,
    last_lsn: status?.lastLsn ?? null,
    lag_records: status?.lagRecords ?? 0,
    events_delivered: status?.eventsDelivered ?? 0,
    events_filtered: status?.eventsFiltered ?? 0,
    delivery_errors: status?.deliveryErrors ?? 0,
    last_error: status?.lastError ?? null,
    last_error_at: status?.lastErrorAt ?? null,
  };
}

function showStatus(catalog: CatalogState, tenant: string, name: string, runtime: CdcRuntime | null): QueryResult {
  const def = streamDef(catalog, tenant, name);
  if (!def) throw streamNotFound(name);
  const rows = [statusRow(def, runtime?.status(tenant, name) ?? null)];
  return { command: 'SHOW', columns: STATUS_COLUMNS, rows, rowCount: 1, affectedRows: null, truncated: false };
}
