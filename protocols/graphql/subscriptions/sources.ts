/**
 * The async iterables subscription resolvers return: `_events` (a change feed, one event per
 * result) and live queries (a result again after each commit that changed their tables). Each
 * ends at once when its consumer returns (graphql-js calls return() when the client stops): an
 * async generator cannot be returned while it awaits, so return() first aborts what it awaits.
 */
import type { ChangeFeed, FeedEvent, FeedOperation, TableWatch } from '../../../core/change-feed.js';
import { SvcError } from '../../../core/errors.js';

/** The last value of a stream that ends with an error: the field's resolver throws it (resolveSubscriptionValue). */
export class SubscriptionFailure {
  constructor(readonly error: SvcError) {}
}

/** The `resolve` of a subscription field: the value, or the error a SubscriptionFailure carries (sent, then the stream completes). */
export function resolveSubscriptionValue(value: unknown): unknown {
  if (value instanceof SubscriptionFailure) throw value.error;
  return value;
}

/** Counts the sources open now, for the transport's metrics and leak tests. */
export class SourceCounter {
  private count = 0;
  get open(): number {
    return this.count;
  }
  opened(): void {
    this.count++;
  }
  closed(): void {
    this.count--;
  }
}

/** `run` as an iterator whose return() aborts `run`'s signal first, so a pending next() ends at once. */
export function abortable<T>(controller: AbortController, run: AsyncGenerator<T>, counter?: SourceCounter): AsyncIterableIterator<T> {
  counter?.opened();
  let open = true;
  const close = (): void => {
    if (!open) return;
    open = false;
    counter?.closed();
  };
  const iterator: AsyncIterableIterator<T> = {
    async next() {
      try {
        const step = await run.next();
        if (step.done) close();
        return step;
      } catch (error) {
        close();
        throw error;
      }
    },
    async return(value?: unknown) {
      controller.abort();
      close();
      await run.return(undefined).catch(() => undefined);
      return { done: true, value: value as T };
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}

export interface EventsRequest {
  readonly tenant: string;
  readonly table: string;
  readonly operations: readonly FeedOperation[];
  /** The client's last sequence; null: from now on. */
  readonly fromSequence: bigint | null;
}

/**
 * The `_events` source: every change event of the table after `fromSequence`, in order, one per
 * value; when the table is dropped, a SubscriptionFailure (TABLE_NOT_FOUND) and the end.
 * Opening throws (unknown table, events no longer in the log), so the error is the subscription's answer.
 */
export async function eventsSource(
  feed: ChangeFeed,
  request: EventsRequest,
  counter?: SourceCounter,
): Promise<AsyncIterableIterator<FeedEvent | SubscriptionFailure>> {
  const controller = new AbortController();
  const batches = await feed.events(request.tenant, request.table, {
    operations: request.operations,
    fromSequence: request.fromSequence,
    signal: controller.signal,
  });
  async function* flatten(): AsyncGenerator<FeedEvent | SubscriptionFailure> {
    for await (const batch of batches) {
      if (batch.kind === 'events') yield* batch.events;
      else {
        yield new SubscriptionFailure(new SvcError('TABLE_NOT_FOUND', `table "${batch.table}" was dropped`, { table: batch.table }));
        return;
      }
    }
  }
  return abortable(controller, flatten(), counter);
}

export interface LiveQueryRequest<R> {
  /** Ids of the tables the query reads: a commit that changes one of them re-runs it. */
  readonly tables: readonly number[];
  /**
   * Runs the query; a SvcError ends the stream with that error (a dropped table: TABLE_NOT_FOUND).
   * `signal` aborts when the stream ends, so an evaluation under way stops its statements.
   */
  readonly evaluate: (signal: AbortSignal) => Promise<R>;
  /** Aborted: the stream ends. */
  readonly signal?: AbortSignal;
}

/**
 * A live query: the current result at once, then a new one after each commit that changed one of
 * the tables and changed the result. One evaluation at a time, started only when the consumer
 * asks for the next result: changes during an evaluation or a slow send coalesce into one re-run
 * that sees the latest state. Triggered by the applied LSN and the row versions, never a timer.
 */
export function liveQuery<R>(watch: TableWatch, request: LiveQueryRequest<R>, counter?: SourceCounter): AsyncIterableIterator<R | SubscriptionFailure> {
  const controller = new AbortController();
  const signal = request.signal ? AbortSignal.any([request.signal, controller.signal]) : controller.signal;
  async function* run(): AsyncGenerator<R | SubscriptionFailure> {
    let mark = watch.mark(request.tables);
    let last: string | null = null;
    while (!signal.aborted) {
      let result: R;
      try {
        result = await request.evaluate(signal);
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof SvcError) {
          yield new SubscriptionFailure(error);
          return;
        }
        throw error;
      }
      const text = JSON.stringify(result);
      if (text !== last) {
        last = text;
        yield result;
      }
      try {
        mark = await watch.changed(request.tables, mark, signal);
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof SvcError && error.code === 'SHUTTING_DOWN') return;
        throw error;
      }
    }
  }
  return abortable(controller, run(), counter);
}
