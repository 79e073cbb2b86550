/**
 * The change-event consumer: reads the log from a position and yields the change events of one
 * table in commit order, following the log's durable head. A bounded pull loop (the consumer
 * asks for the next batch when it has delivered the last), so a slow destination never buffers.
 * CDC streams use it; webhooks and GraphQL subscriptions are meant to.
 */
import type { TableDef, TableId } from '../../core/catalog.js';
import { decodeLogRecord, eventSequenceBase, nextSequenceAfter, opSequenceSpan, type TxnOp, type TxnRecord } from '../../core/log-records.js';
import type { Lsn } from '../../core/units.js';
import type { Log } from '../../log/index.js';
import { changeEvent, RowJson, schemaValue, type RecordFacts, type SourcedEvent } from './change-event.js';

/** What the source reads besides the log: the tables projection's history and snapshot copies. */
export interface EventSourceDeps {
  readonly log: Log;
  /** The table's definition as of the record at `lsn` (null: none then). Needs tables applied >= lsn. */
  tableDefAt(tableId: TableId, lsn: number): Promise<TableDef | null>;
  /** Resolves once the tables projection applied `lsn` (rejects when `signal` aborts). */
  waitTablesApplied(lsn: number, signal: AbortSignal): Promise<void>;
  /** The rows a snapshot copied ([pk, image] batches in key order), the first `skip` rows left out. */
  snapshotRows(createdLsn: number, skip: bigint): AsyncIterable<Uint8Array[]>;
}

/** What is captured: tables of one tenant (a CDC stream: one), and the object whose creation starts it. */
export interface CaptureSpec {
  readonly tenant: string;
  readonly tableIds: readonly TableId[];
  readonly objectKind: string;
  readonly objectName: string;
  /** LSN and first sequence of the record that created the capture, and its snapshot's rows. */
  readonly createdLsn: number;
  readonly createdSequence: bigint;
  readonly snapshotRows: bigint;
}

/** Read from the record at `lsn`, skipping every event with a sequence <= `afterSequence`. */
export interface SourcePosition {
  readonly lsn: number;
  readonly afterSequence: bigint;
}

export interface SourceOptions {
  /** Most events per yielded batch. */
  readonly batchEventsMax: number;
  readonly batchBytesMax: number;
  readonly signal: AbortSignal;
  /** Stop at the durable head instead of waiting for more (tests, benchmarks). */
  readonly stopAtHead?: boolean;
  /**
   * Told, after each read of the log, the position after the last record read once every event
   * of it was delivered (a capture of quiet tables still moves on: retention, lag).
   */
  readonly onProgress?: (position: SourcePosition) => void;
}

/** The start of a capture: the record that created it (its snapshot, then every change after it). */
export function startOf(spec: CaptureSpec): SourcePosition {
  return { lsn: spec.createdLsn, afterSequence: spec.createdSequence };
}

/** Yields batches of events in sequence order, from `from` on, until the signal aborts. */
export async function* changeEvents(deps: EventSourceDeps, spec: CaptureSpec, from: SourcePosition, options: SourceOptions): AsyncGenerator<SourcedEvent[]> {
  const { log, signal } = { log: deps.log, signal: options.signal };
  await deps.waitTablesApplied(from.lsn, signal);
  const state: ReadState = { tables: new Map(), out: [] };
  for (const tableId of spec.tableIds) {
    const table = await deps.tableDefAt(tableId, from.lsn - 1);
    // An id another tenant's table holds now is not the table this capture was made for.
    const foreign = table !== null && table.tenant !== spec.tenant;
    state.tables.set(tableId, { table: foreign ? null : table, rows: null, gone: foreign, tenant: spec.tenant });
  }
  let next = from.lsn;
  while (!signal.aborted) {
    for await (const entries of log.read(next as Lsn, { batchBytesMax: options.batchBytesMax, signal })) {
      let afterSequence = from.afterSequence;
      for (const entry of entries) {
        const record = decodeLogRecord(entry.payload);
        yield* eventsOf(deps, spec, state, record, entry.lsn, from.afterSequence, options);
        next = entry.lsn + 1;
        afterSequence = nextSequenceAfter(record, entry.lsn) - 1n;
      }
      if (state.out.length > 0) yield takeAll(state);
      if (signal.aborted) return;
      // The consumer asked for more, so it has delivered everything yielded: every record read is done.
      if (afterSequence > from.afterSequence) options.onProgress?.({ lsn: next, afterSequence });
    }
    if (options.stopAtHead) return;
    try {
      await log.waitForDurable(next as Lsn, signal);
    } catch (error) {
      if (signal.aborted) return;
      throw error;
    }
  }
}

interface Captured {
  /** The table's definition as of the record being read (null: it does not exist then). */
  table: TableDef | null;
  rows: RowJson | null;
  /**
   * Dropped (or its id taken by another tenant): a table created later under the same id is
   * another table, never captured (ids of dropped tables can be handed out again).
   */
  gone: boolean;
  readonly tenant: string;
}

interface ReadState {
  /** Per captured table id. */
  readonly tables: Map<TableId, Captured>;
  out: SourcedEvent[];
}

function takeAll(state: ReadState): SourcedEvent[] {
  const out = state.out;
  state.out = [];
  return out;
}

function rowJson(captured: Captured): RowJson | null {
  if (!captured.table) return null;
  if (captured.rows?.table !== captured.table) captured.rows = new RowJson(captured.table);
  return captured.rows;
}

/** The events of one record (into state.out, yielding full batches as they fill). */
async function* eventsOf(
  deps: EventSourceDeps,
  spec: CaptureSpec,
  state: ReadState,
  record: TxnRecord,
  lsn: number,
  afterSequence: bigint,
  options: SourceOptions,
): AsyncGenerator<SourcedEvent[]> {
  let sequence = eventSequenceBase(record, lsn);
  for (const op of record.ops) {
    const span = opSequenceSpan(op);
    if (isOwnCreation(op, spec, sequence) && spec.snapshotRows > 0n) {
      yield* snapshotEvents(deps, spec, state, record, lsn, afterSequence, options);
    } else if (sequence > afterSequence) {
      const event = opEvent(state, record, op, sequence, lsn);
      if (event) {
        state.out.push(event);
        if (state.out.length >= options.batchEventsMax) yield takeAll(state);
      }
    } else {
      // Already delivered, but a definition change still applies to the events after it.
      followDefinition(state, op);
    }
    sequence += span;
  }
}

function isOwnCreation(op: TxnOp, spec: CaptureSpec, sequence: bigint): boolean {
  return (
    op.kind === 'put_object' &&
    op.objectKind === spec.objectKind &&
    op.tenant === spec.tenant &&
    op.name === spec.objectName &&
    sequence === spec.createdSequence
  );
}

/** SNAPSHOT events: the rows copied as of the creating record, numbered after its own sequence. */
async function* snapshotEvents(
  deps: EventSourceDeps,
  spec: CaptureSpec,
  state: ReadState,
  record: TxnRecord,
  lsn: number,
  afterSequence: bigint,
  options: SourceOptions,
): AsyncGenerator<SourcedEvent[]> {
  const snapshotOf = snapshotTable(record, spec);
  const captured = snapshotOf === null ? undefined : state.tables.get(snapshotOf);
  const rows = captured ? rowJson(captured) : null;
  const table = captured?.table;
  if (!rows || !table) return;
  const first = spec.createdSequence + 1n;
  const skip = afterSequence >= first ? afterSequence - first + 1n : 0n;
  let sequence = first + skip;
  await deps.waitTablesApplied(lsn, options.signal);
  for await (const images of deps.snapshotRows(spec.createdLsn, skip)) {
    for (const image of images) {
      const { row, key } = rows.decode(image);
      state.out.push({ event: changeEvent(record, sequence, table, 'SNAPSHOT', { key, value: row, oldValue: null }), lsn, sequence, table });
      sequence++;
      if (state.out.length >= options.batchEventsMax) yield takeAll(state);
    }
    if (options.signal.aborted) return;
  }
}

/** The table a record's creation op snapshots (the op names it). */
function snapshotTable(record: TxnRecord, spec: CaptureSpec): TableId | null {
  for (const op of record.ops) {
    if (op.kind === 'put_object' && op.objectKind === spec.objectKind && op.name === spec.objectName && op.snapshot) return op.snapshot.tableId;
  }
  return null;
}

function followDefinition(state: ReadState, op: TxnOp): void {
  if (op.kind === 'put_table') {
    const captured = followed(state, op.table);
    if (captured) captured.table = op.table;
  } else if (op.kind === 'drop_table') {
    const captured = state.tables.get(op.tableId);
    if (captured) {
      captured.table = null;
      captured.gone = true;
    }
  }
}

/** The capture a table definition belongs to, or undefined (not captured, dropped before, or another tenant's). */
function followed(state: ReadState, table: TableDef): Captured | undefined {
  const captured = state.tables.get(table.id);
  if (!captured || captured.gone) return undefined;
  if (table.tenant !== captured.tenant) {
    captured.gone = true;
    captured.table = null;
    return undefined;
  }
  return captured;
}

/** The event of one op for a captured table, or null when the op is about something else. */
function opEvent(state: ReadState, facts: RecordFacts, op: TxnOp, sequence: bigint, lsn: number): SourcedEvent | null {
  switch (op.kind) {
    case 'row': {
      const captured = state.tables.get(op.tableId);
      const rows = captured ? rowJson(captured) : null;
      const table = captured?.table;
      if (!rows || !table) return null;
      const after = op.after ? rows.decode(op.after) : null;
      const before = op.before ? rows.decode(op.before) : null;
      const operation = op.op === 'insert' ? 'INSERT' : op.op === 'update' ? 'UPDATE' : 'DELETE';
      const key = (after ?? before)?.key ?? null;
      const event = changeEvent(facts, sequence, table, operation, { key, value: after?.row ?? null, oldValue: before?.row ?? null });
      return { event, lsn, sequence, table };
    }
    case 'truncate': {
      // One TRUNCATE of several captured tables is one event, of the first (its ops name them all).
      const tableId = op.tableIds.find((id) => state.tables.get(id)?.table);
      const table = tableId === undefined ? null : state.tables.get(tableId)!.table;
      if (!table) return null;
      return { event: changeEvent(facts, sequence, table, 'TRUNCATE', { key: null, value: null, oldValue: null }), lsn, sequence, table };
    }
    case 'put_table': {
      const captured = followed(state, op.table);
      if (!captured) return null;
      const previous = captured.table;
      captured.table = op.table;
      const value = schemaValue(previous ? 'ALTER' : 'CREATE', op.table);
      const oldValue = previous ? schemaValue('ALTER', previous) : null;
      return { event: changeEvent(facts, sequence, op.table, 'SCHEMA_CHANGE', { key: null, value, oldValue }), lsn, sequence, table: op.table };
    }
    case 'drop_table': {
      const captured = state.tables.get(op.tableId);
      const previous = captured?.table;
      if (!captured || !previous) return null;
      captured.table = null;
      captured.gone = true;
      const event = changeEvent(facts, sequence, previous, 'SCHEMA_CHANGE', {
        key: null,
        value: schemaValue('DROP', null),
        oldValue: schemaValue('ALTER', previous),
      });
      return { event, lsn, sequence, table: previous };
    }
    default:
      return null;
  }
}
