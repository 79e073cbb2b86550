/**
 * What a protocol sees of the log's change events and of table changes: the interfaces GraphQL
 * subscriptions read through. sinks/ implements them over the change-event consumer and the
 * projections; the composition root hands them to protocols/ (which must not import sinks/).
 */

/** Operations a change event can carry (as docs/cdc.md names them). */
export type FeedOperation = 'INSERT' | 'UPDATE' | 'DELETE' | 'TRUNCATE' | 'SCHEMA_CHANGE';

export const FEED_OPERATIONS: readonly FeedOperation[] = ['INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'SCHEMA_CHANGE'];

/** One change event, values as the REST API prints them (the CDC event's fields). */
export interface FeedEvent {
  readonly event_id: string;
  /** Server-wide, increasing in commit order; the same change always has the same one. */
  readonly sequence: number;
  readonly operation: FeedOperation | 'SNAPSHOT';
  /** Commit time, ISO 8601 UTC. */
  readonly timestamp: string;
  readonly key: Record<string, unknown> | null;
  readonly value: Record<string, unknown> | null;
  readonly old_value: Record<string, unknown> | null;
  readonly transaction_id: string;
}

export interface FeedOptions {
  /** Only these operations are yielded (every other event is read and skipped). */
  readonly operations: readonly FeedOperation[];
  /**
   * Yield the events with a sequence above this one (a client's last seen sequence); null: the
   * events of commits after the call.
   */
  readonly fromSequence: bigint | null;
  /** Aborted: the iteration ends (done) as soon as it can. */
  readonly signal: AbortSignal;
}

/** The last events of a feed: the table was dropped (after its SCHEMA_CHANGE event, if asked for). */
export interface FeedEnd {
  readonly kind: 'table_dropped';
  readonly table: string;
}

/** A batch of a feed: events in sequence order, or the feed's end. */
export type FeedBatch = { readonly kind: 'events'; readonly events: readonly FeedEvent[] } | FeedEnd;

/** The change events of one table, in commit order, each exactly once. */
export interface ChangeFeed {
  /**
   * Opens a feed of `table` (`name` or `schema.name` of `tenant`) from `options.fromSequence` on:
   * it follows the log until the signal aborts, the table is dropped (a final `table_dropped`
   * batch) or the server shuts down, each an end without error. Opening throws SvcError
   * TABLE_NOT_FOUND for an unknown table, LIMIT_EXCEEDED when the events after `fromSequence` are
   * no longer in the log or too many feeds are open. Abort the signal to release a feed.
   */
  events(tenant: string, table: string, options: FeedOptions): Promise<AsyncIterable<FeedBatch>>;
}

/** Where a set of tables stood at some moment: compare two to know whether a commit changed them. */
export type TableMark = string;

/** Tells a live query when a commit changed one of its tables (rows or definition). */
export interface TableWatch {
  /** The tables' mark as of the last applied commit. */
  mark(tableIds: readonly number[]): TableMark;
  /**
   * Resolves with the new mark once an applied commit moved the tables away from `since` (at
   * once if they already did); rejects when the signal aborts or the watch is closed.
   */
  changed(tableIds: readonly number[], since: TableMark, signal: AbortSignal): Promise<TableMark>;
}
