/**
 * The change-event consumer: reads the log from a position and yields the change events of one
 * table in commit order, following the log's durable head. A bounded pull loop (the consumer
 * asks for the next batch when it has delivered the last), so a slow destination never buffers.
 * CDC streams use it; webhooks and GraphQL subscriptions are meant to.
 */
import type { TableDef, TableId } from '../../core/catalog.js';
import { decodeLogRecord, eventSequenceBase, opSequenceSpan, type TxnOp, type TxnRecord } from '../../core/log-records.js';
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

/** What is captured: one table of one tenant, and the object whose creation starts it. */
export interface CaptureSpec {
  readonly tenant: string;
  readonly tableId: TableId;
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
}

/** The start of a capture: the record that created it (its snapshot, then every change after it). */
export function startOf(spec: CaptureSpec): SourcePosition {
  return { lsn: spec.createdLsn, afterSequence: spec.createdSequence };
}

/** Yields batches of events in sequence order, from `from` on, until the signal aborts. */
export async function* changeEvents(deps: EventSourceDeps, spec: CaptureSpec, from: SourcePosition, options: SourceOptions): AsyncGenerator<SourcedEvent[]> {
  const { log, signal } = { log: deps.log, signal: options.signal };
  await deps.waitTablesApplied(from.lsn, signal);
  const state: ReadState = { table: await deps.tableDefAt(spec.tableId, from.lsn - 1), rows: null, out: [] };
  let next = from.lsn;
  while (!signal.aborted) {
    for await (const entries of log.read(next as Lsn, { batchBytesMax: options.batchBytesMax, signal })) {
      for (const entry of entries) {
        const record = decodeLogRecord(entry.payload);
        yield* eventsOf(deps, spec, state, record, entry.lsn, from.afterSequence, options);
        next = entry.lsn + 1;
      }
      if (state.out.length > 0) yield takeAll(state);
      if (signal.aborted) return;
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

interface ReadState {
  /** The table's definition as of the record being read. */
  table: TableDef | null;
  rows: RowJson | null;
  out: SourcedEvent[];
}

function takeAll(state: ReadState): SourcedEvent[] {
  const out = state.out;
  state.out = [];
  return out;
}

function rowJson(state: ReadState): RowJson | null {
  if (!state.table) return null;
  if (state.rows?.table !== state.table) state.rows = new RowJson(state.table);
  return state.rows;
}

/** The events of one record (into state.out, yielding full batches as they fill). */
async function* eventsOf(
  deps: EventSourceDeps, spec: CaptureSpec, state: ReadState, record: TxnRecord, lsn: number, afterSequence: bigint, options: SourceOptions,
): AsyncGenerator<SourcedEvent[]> {
  let sequence = eventSequenceBase(record, lsn);
  for (const op of record.ops) {
    const span = opSequenceSpan(op);
    if (isOwnCreation(op, spec, sequence) && spec.snapshotRows > 0n) {
      yield* snapshotEvents(deps, spec, state, record, lsn, afterSequence, options);
    } else if (sequence > afterSequence) {
      const event = opEvent(state, record, op, sequence, spec.tableId, lsn);
      if (event) {
        state.out.push(event);
        if (state.out.length >= options.batchEventsMax) yield takeAll(state);
      }
    } else {
      // Already delivered, but a definition change still applies to the events after it.
      followDefinition(state, op, spec.tableId);
    }
    sequence += span;
  }
}

function isOwnCreation(op: TxnOp, spec: CaptureSpec, sequence: bigint): boolean {
  return op.kind === 'put_object' && op.objectKind === spec.objectKind && op.tenant === spec.tenant && op.name === spec.objectName && sequence === spec.createdSequence;
}

/** SNAPSHOT events: the rows copied as of the creating record, numbered after its own sequence. */
async function* snapshotEvents(
  deps: EventSourceDeps, spec: CaptureSpec, state: ReadState, record: TxnRecord, lsn: number, afterSequence: bigint, options: SourceOptions,
): AsyncGenerator<SourcedEvent[]> {
  const rows = rowJson(state);
  if (!rows || !state.table) return;
  const first = spec.createdSequence + 1n;
  const skip = afterSequence >= first ? afterSequence - first + 1n : 0n;
  let sequence = first + skip;
  await deps.waitTablesApplied(lsn, options.signal);
  for await (const images of deps.snapshotRows(spec.createdLsn, skip)) {
    for (const image of images) {
      const { row, key } = rows.decode(image);
      state.out.push({ event: changeEvent(record, sequence, state.table, 'SNAPSHOT', { key, value: row, oldValue: null }), lsn, sequence, table: state.table });
      sequence++;
      if (state.out.length >= options.batchEventsMax) yield takeAll(state);
    }
    if (options.signal.aborted) return;
  }
}

function followDefinition(state: ReadState, op: TxnOp, tableId: TableId): void {
  if (op.kind === 'put_table' && op.table.id === tableId) state.table = op.table;
  else if (op.kind === 'drop_table' && op.tableId === tableId) state.table = null;
}

/** The event of one op for the captured table, or null when the op is about something else. */
function opEvent(state: ReadState, facts: RecordFacts, op: TxnOp, sequence: bigint, tableId: TableId, lsn: number): SourcedEvent | null {
  switch (op.kind) {
    case 'row': {
      if (op.tableId !== tableId) return null;
      const rows = rowJson(state);
      if (!rows || !state.table) return null;
      const after = op.after ? rows.decode(op.after) : null;
      const before = op.before ? rows.decode(op.before) : null;
      const operation = op.op === 'insert' ? 'INSERT' : op.op === 'update' ? 'UPDATE' : 'DELETE';
      const key = (after ?? before)?.key ?? null;
      const event = changeEvent(facts, sequence, state.table, operation, { key, value: after?.row ?? null, oldValue: before?.row ?? null });
      return { event, lsn, sequence, table: state.table };
    }
    case 'truncate': {
      if (!op.tableIds.includes(tableId) || !state.table) return null;
      return { event: changeEvent(facts, sequence, state.table, 'TRUNCATE', { key: null, value: null, oldValue: null }), lsn, sequence, table: state.table };
    }
    case 'put_table': {
      if (op.table.id !== tableId) return null;
      const previous = state.table;
      state.table = op.table;
      const value = schemaValue(previous ? 'ALTER' : 'CREATE', op.table);
      const oldValue = previous ? schemaValue('ALTER', previous) : null;
      return { event: changeEvent(facts, sequence, op.table, 'SCHEMA_CHANGE', { key: null, value, oldValue }), lsn, sequence, table: op.table };
    }
    case 'drop_table': {
      if (op.tableId !== tableId || !state.table) return null;
      const previous = state.table;
      state.table = null;
      const event = changeEvent(facts, sequence, previous, 'SCHEMA_CHANGE', { key: null, value: schemaValue('DROP', null), oldValue: schemaValue('ALTER', previous) });
      return { event, lsn, sequence, table: previous };
    }
    default:
      return null;
  }
}
