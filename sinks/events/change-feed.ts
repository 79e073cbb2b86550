/**
 * The ChangeFeed of GraphQL `_events` subscriptions: the change-event consumer (event-source.ts)
 * read from the position of a client's last sequence, for one table, until the client stops,
 * the table is dropped or the server shuts down. Nothing is stored: a client resumes by the
 * sequence it last saw, and the same change always has the same sequence (invariant 5).
 */
import { DEFAULT_SCHEMA, type TableDef, type TableId } from '../../core/catalog.js';
import type { ChangeFeed, FeedBatch, FeedEvent, FeedOperation, FeedOptions, TableWatch } from '../../core/change-feed.js';
import { SvcError } from '../../core/errors.js';
import { decodeLogRecord, eventSequenceBase, nextSequenceAfter, type TxnRecord } from '../../core/log-records.js';
import type { Lsn } from '../../core/units.js';
import { keys, type Projections } from '../../projections/index.js';
import type { SourcedEvent } from './change-event.js';
import { changeEvents, type CaptureSpec, type SourcePosition } from './event-source.js';
import { projectionEventSource } from './projection-source.js';
import { ProjectionTableWatch } from './table-watch.js';

export interface ChangeFeedLimits {
  /** Feeds open at once over all clients (each reads the log on its own). */
  readonly feedsMax: number;
  readonly batchEventsMax: number;
  readonly readBatchBytesMax: number;
}

/** The retention hold's name (svcdb inspect lists it among the consumers). */
const RETENTION_HOLD = 'graphql-subscriptions';

export class ProjectionChangeFeed implements ChangeFeed {
  /** Per open feed: the LSN it reads next (retention keeps the log from there on). */
  private readonly open = new Map<symbol, { lsn: number }>();
  private readonly shutdown = new AbortController();

  constructor(
    private readonly projections: Projections,
    private readonly limits: ChangeFeedLimits,
  ) {
    projections.holdRetention(RETENTION_HOLD, () => this.lowestNeededLsn());
  }

  /** Feeds open now (tests check that none is left behind). */
  get openFeeds(): number {
    return this.open.size;
  }

  /** Ends every feed (they finish as if their client stopped) and refuses new ones. */
  close(): void {
    this.shutdown.abort(new SvcError('SHUTTING_DOWN', 'the server is shutting down', {}));
  }

  async events(tenant: string, tableName: string, options: FeedOptions): Promise<AsyncIterable<FeedBatch>> {
    if (this.shutdown.signal.aborted) throw new SvcError('SHUTTING_DOWN', 'the server is shutting down', {});
    if (this.open.size >= this.limits.feedsMax) {
      throw new SvcError('LIMIT_EXCEEDED', `${this.limits.feedsMax} event subscriptions are open (the server's limit)`, {
        limit: 'feedsMax',
        value: this.limits.feedsMax,
      });
    }
    const table = this.tableOf(tenant, tableName);
    const position = await this.startOf(table, options.fromSequence);
    const token = Symbol(tableName);
    const reading = { lsn: position.lsn };
    this.open.set(token, reading);
    // An iteration never started has no finally to run: the signal releases the feed too.
    const release = (): void => void this.open.delete(token);
    const signal = AbortSignal.any([options.signal, this.shutdown.signal]);
    if (signal.aborted) release();
    else signal.addEventListener('abort', release, { once: true });
    const spec: CaptureSpec = {
      tenant,
      tableIds: [table.id],
      objectKind: 'graphql_subscription',
      objectName: tableName,
      createdLsn: 0,
      createdSequence: -1n,
      snapshotRows: 0n,
    };
    return this.read(spec, position, reading, new Set(options.operations), signal, () => {
      signal.removeEventListener('abort', release);
      release();
    });
  }

  private async *read(
    spec: CaptureSpec,
    position: SourcePosition,
    reading: { lsn: number },
    operations: ReadonlySet<FeedOperation>,
    signal: AbortSignal,
    release: () => void,
  ): AsyncGenerator<FeedBatch> {
    try {
      const source = changeEvents(projectionEventSource(this.projections), spec, position, {
        batchEventsMax: this.limits.batchEventsMax,
        batchBytesMax: this.limits.readBatchBytesMax,
        signal,
        onProgress: (p) => (reading.lsn = p.lsn),
      });
      yield* this.batches(source, operations, reading, spec);
    } catch (error) {
      // A stop while waiting (for the log or the tables projection) is the end, not a failure.
      if (!signal.aborted) throw error;
    } finally {
      release();
    }
  }

  private async *batches(
    source: AsyncIterable<SourcedEvent[]>,
    operations: ReadonlySet<FeedOperation>,
    reading: { lsn: number },
    spec: CaptureSpec,
  ): AsyncGenerator<FeedBatch> {
    for await (const batch of source) {
      const events: FeedEvent[] = [];
      let dropped = false;
      for (const { event, lsn } of batch) {
        reading.lsn = lsn;
        dropped = event.operation === 'SCHEMA_CHANGE' && (event.value as { ddl?: string } | null)?.ddl === 'DROP';
        if (operations.has(event.operation as FeedOperation)) events.push(feedEvent(event));
        if (dropped) break;
      }
      if (events.length > 0) yield { kind: 'events', events };
      if (dropped) {
        yield { kind: 'table_dropped', table: spec.objectName };
        return;
      }
    }
  }

  private tableOf(tenant: string, name: string): TableDef {
    const dot = name.indexOf('.');
    const [schema, bare] = dot > 0 && dot < name.length - 1 ? [name.slice(0, dot), name.slice(dot + 1)] : [DEFAULT_SCHEMA, name];
    const def = this.projections.catalog.tableByName(tenant, schema, bare)?.def;
    if (!def) throw new SvcError('TABLE_NOT_FOUND', `table "${name}" does not exist`, { table: name });
    if (def.kind !== 'table') throw new SvcError('VALIDATION_ERROR', `"${name}" is a view: only tables have change events`, { table: name });
    return def;
  }

  /**
   * Where to read from: after the call (no sequence), or the first record holding a sequence
   * above `fromSequence`, but never before the record that created this table (an id of a dropped
   * table can be handed out again: what came before is another table's).
   */
  private async startOf(table: TableDef, fromSequence: bigint | null): Promise<SourcePosition> {
    const log = this.projections.log;
    if (fromSequence === null) return { lsn: log.durableLsn + 1, afterSequence: 0n };
    const created = await this.creationLsn(table.id);
    const found = await this.firstLsnAfter(fromSequence);
    if (found < created) return { lsn: created, afterSequence: fromSequence };
    if (found === log.firstLsn && log.firstLsn > 1 && created < found) {
      const first = eventSequenceBase(await this.recordAt(found), found);
      if (first > fromSequence + 1n) {
        throw new SvcError(
          'LIMIT_EXCEEDED',
          `the events after sequence ${fromSequence} are no longer in the log (retention); the oldest kept starts at ${first}`,
          {
            limit: 'log retention',
            from_sequence: fromSequence.toString(),
            oldest_sequence: first.toString(),
          },
        );
      }
    }
    return { lsn: found, afterSequence: fromSequence };
  }

  /** The smallest durable LSN whose record holds a sequence above `sequence` (durable + 1 when none): a binary search. */
  private async firstLsnAfter(sequence: bigint): Promise<number> {
    const log = this.projections.log;
    let lo: number = log.firstLsn;
    let hi: number = log.durableLsn;
    if (hi < lo) return hi + 1;
    const lastOf = async (lsn: number): Promise<bigint> => nextSequenceAfter(await this.recordAt(lsn), lsn) - 1n;
    if ((await lastOf(hi)) <= sequence) return hi + 1;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if ((await lastOf(mid)) > sequence) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  private async recordAt(lsn: number): Promise<TxnRecord> {
    for await (const batch of this.projections.log.read(lsn as Lsn, { toLsn: lsn as Lsn })) {
      const entry = batch[0];
      if (entry) return decodeLogRecord(entry.payload);
    }
    throw new SvcError('INTERNAL_ERROR', `log record ${lsn} could not be read`, { lsn });
  }

  /** The LSN of the put_table that created the table's current incarnation (0: not recorded). */
  private async creationLsn(tableId: TableId): Promise<number> {
    let created = 0;
    const range = {
      gte: keys.tableHistoryKey(tableId, 0 as Lsn),
      lt: keys.tableHistoryKey(tableId, Number.MAX_SAFE_INTEGER as Lsn),
      reverse: true,
      batchSize: 16,
    };
    for await (const batch of this.projections.store.entries(range)) {
      for (const [key, value] of batch) {
        if (value.length === 0) return created;
        created = keys.decodeU64(key.subarray(keys.ID_PREFIX_BYTES));
      }
    }
    return created;
  }

  private lowestNeededLsn(): Lsn {
    let lowest = this.projections.log.durableLsn as number;
    // The hold is "keep from offset + 1": a feed reading `lsn` needs lsn - 1 as its offset.
    for (const { lsn } of this.open.values()) lowest = Math.min(lowest, lsn - 1);
    return lowest as Lsn;
  }
}

function feedEvent(event: SourcedEvent['event']): FeedEvent {
  return {
    event_id: event.event_id,
    sequence: event.sequence,
    operation: event.operation as FeedEvent['operation'],
    timestamp: event.timestamp,
    key: event.key,
    value: event.value,
    old_value: event.old_value,
    transaction_id: event.transaction_id,
  };
}

/** The change feed and the table watch of GraphQL subscriptions, over the projections (the composition root builds them once). */
export function createChangeFeed(
  projections: Projections,
  limits: ChangeFeedLimits,
): { readonly feed: ProjectionChangeFeed; readonly watch: ProjectionTableWatch & TableWatch } {
  return { feed: new ProjectionChangeFeed(projections, limits), watch: new ProjectionTableWatch(projections) };
}
