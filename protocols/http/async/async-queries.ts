import { SvcError, shuttingDown } from '../../../core/errors.js';
import { newUlid } from '../../../core/ids.js';
import type { Logger } from '../../../core/logger.js';
import { asSvcError, collectRows, type JsonRow, type ReadOnlyReason, type SqlEngine } from '../../../query/index.js';
import { errorBody } from '../../errors.js';
import { measured, type QueryMetrics } from '../../metrics/query-metrics.js';
import { deliverCallback } from './async-callback.js';
import { isFinished, nextStatus, type AsyncQueryEvent, type AsyncQueryStatus } from './async-state.js';
import type { AsyncQueryError, AsyncQueryInfo, AsyncQueryOutcome, AsyncQuerySubmitted } from './async-record.js';
import { asyncQueryView } from './async-view.js';

/** Rows per engine batch: how often `progress` moves and a cancel is noticed between batches. */
const PROGRESS_BATCH_ROWS = 1000;
/** Weight of the newest run in estimated_time_ms (an exponential moving average). */
const ESTIMATE_WEIGHT = 0.2;

export interface AsyncQueryLimits {
  readonly asyncQueriesMax: number;
  readonly asyncQueryConcurrencyMax: number;
  readonly asyncQueryRetentionMs: number;
  readonly asyncQueryCallbackTimeoutMs: number;
  readonly asyncQueryCallbackSecret: string | undefined;
}

export interface AsyncQueryDeps {
  readonly engine: SqlEngine;
  readonly limits: AsyncQueryLimits;
  readonly logger: Logger;
  /** The path of GET /query/{id} (the spec's status_url). */
  statusPath(id: string): string;
  /** Epoch ms; tests may pass their own clock. */
  now?(): number;
  /** Where each finished query is counted (svc_queries_total, svc_query_duration_seconds). */
  readonly metrics?: QueryMetrics;
}

/** Who asks for a record: its tenant and credential, and whether it is an admin of that tenant. */
export interface RecordCaller {
  readonly tenant: string;
  readonly credential: string;
  readonly admin: boolean;
}

export interface AsyncQueryInput {
  readonly sql: string;
  readonly params: readonly unknown[];
  readonly timeoutMs: number;
  readonly maxRows: number;
  readonly callbackUrl: string | null;
  /** The tenant the query runs in; only callers in the same tenant see its record. */
  readonly tenant: string;
  /** The credential that submitted it: only it (and an admin of the tenant) sees and cancels the record. */
  readonly owner: string;
  readonly readOnly?: ReadOnlyReason;
}

interface Entry {
  readonly id: string;
  readonly input: AsyncQueryInput;
  readonly abort: AbortController;
  readonly createdAtMs: number;
  status: AsyncQueryStatus;
  startedAtMs: number | null;
  finishedAtMs: number | null;
  rows: JsonRow[];
  outcome: AsyncQueryOutcome | null;
  error: AsyncQueryError | null;
  expiry: NodeJS.Timeout | null;
}

/**
 * Async queries (POST /query/async): a bounded table of records, at most asyncQueryConcurrencyMax
 * running (the rest pending, first come first served), finished ones kept asyncQueryRetentionMs.
 * Records live in memory: a restart forgets them (docs/api.md).
 */
export class AsyncQueries {
  private readonly entries = new Map<string, Entry>();
  private readonly queue: Entry[] = [];
  private readonly running = new Set<Promise<void>>();
  private readonly deliveries = new Set<Promise<boolean>>();
  private readonly closed = new AbortController();
  private readonly now: () => number;
  private estimateMs = 0;

  constructor(private readonly deps: AsyncQueryDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Accepts a query as pending (and starts it when a slot is free). */
  submit(input: AsyncQueryInput): AsyncQuerySubmitted {
    if (this.closed.signal.aborted) throw shuttingDown();
    this.makeRoom();
    const entry: Entry = {
      id: newUlid(),
      input,
      abort: new AbortController(),
      createdAtMs: this.now(),
      status: 'pending',
      startedAtMs: null,
      finishedAtMs: null,
      rows: [],
      outcome: null,
      error: null,
      expiry: null,
    };
    this.entries.set(entry.id, entry);
    this.queue.push(entry);
    this.startQueued();
    // Pending as accepted (the spec's 202), even when a free slot has started it already.
    return { queryId: entry.id, status: 'pending', estimatedTimeMs: this.estimateMs };
  }

  /** Where a record can be read (the spec's status_url). */
  statusPath(id: string): string {
    return this.deps.statusPath(id);
  }

  /** The record as it is now. */
  get(id: string, caller: RecordCaller): AsyncQueryInfo {
    return infoOf(this.entryOf(id, caller));
  }

  /** A pending or running query becomes cancelled; a finished one is an INVALID_STATE. */
  cancel(id: string, caller: RecordCaller): AsyncQueryInfo {
    const entry = this.entryOf(id, caller);
    if (!this.move(entry, 'cancel')) {
      throw new SvcError('INVALID_STATE', `query ${id} is already ${entry.status} and cannot be cancelled`, { query_id: id, status: entry.status });
    }
    entry.abort.abort();
    const at = this.queue.indexOf(entry);
    if (at >= 0) this.queue.splice(at, 1);
    return infoOf(entry);
  }

  /** Stops everything: running queries are aborted, pending ones never start, no more callbacks. */
  async close(): Promise<void> {
    this.closed.abort();
    this.queue.length = 0;
    for (const entry of this.entries.values()) {
      entry.abort.abort();
      if (entry.expiry) clearTimeout(entry.expiry);
    }
    await Promise.allSettled([...this.running, ...this.deliveries]);
    this.entries.clear();
  }

  /**
   * Another tenant's record, or another credential's (unless the caller is an admin of the
   * tenant), is answered as missing: its existence is not theirs to learn.
   */
  private entryOf(id: string, caller: RecordCaller): Entry {
    const entry = this.entries.get(id);
    const visible = entry !== undefined && entry.input.tenant === caller.tenant && (caller.admin || entry.input.owner === caller.credential);
    if (!visible) throw new SvcError('NOT_FOUND', `async query ${id} does not exist (or its record has expired)`, { query_id: id });
    return entry;
  }

  /** When the table is full, the oldest finished record goes; with none finished the request is refused. */
  private makeRoom(): void {
    if (this.entries.size < this.deps.limits.asyncQueriesMax) return;
    let oldest: Entry | null = null;
    for (const entry of this.entries.values()) {
      if (entry.finishedAtMs !== null && (oldest === null || entry.finishedAtMs < oldest.finishedAtMs!)) oldest = entry;
    }
    if (oldest) return this.forget(oldest);
    const deadlines = [...this.entries.values()].filter((e) => e.startedAtMs !== null).map((e) => e.startedAtMs! + e.input.timeoutMs);
    const max = this.deps.limits.asyncQueriesMax;
    throw new SvcError('RATE_LIMIT_EXCEEDED', `${max} async queries are unfinished (asyncQueriesMax); retry when one has finished`, {
      limit: max,
      remaining: 0,
      reset_at: new Date(deadlines.length > 0 ? Math.min(...deadlines) : this.now()).toISOString(),
    });
  }

  private forget(entry: Entry): void {
    if (entry.expiry) clearTimeout(entry.expiry);
    this.entries.delete(entry.id);
  }

  /** The one place a status changes (through the state machine), with the time it did. */
  private move(entry: Entry, event: AsyncQueryEvent): boolean {
    const next = nextStatus(entry.status, event);
    if (next === null) return false;
    entry.status = next;
    if (next === 'running') entry.startedAtMs = this.now();
    if (isFinished(next)) this.finished(entry);
    return true;
  }

  private finished(entry: Entry): void {
    entry.finishedAtMs = this.now();
    if (entry.status !== 'completed') entry.rows = [];
    entry.expiry = setTimeout(() => this.forget(entry), this.deps.limits.asyncQueryRetentionMs);
    entry.expiry.unref();
    if (entry.input.callbackUrl !== null) this.deliver(entry, entry.input.callbackUrl);
  }

  private deliver(entry: Entry, url: string): void {
    const delivery = deliverCallback(url, asyncQueryView(infoOf(entry), this.deps.statusPath(entry.id)), entry.id, {
      timeoutMs: this.deps.limits.asyncQueryCallbackTimeoutMs,
      secret: this.deps.limits.asyncQueryCallbackSecret ?? null,
      signal: this.closed.signal,
      logger: this.deps.logger,
    });
    this.deliveries.add(delivery);
    void delivery.finally(() => this.deliveries.delete(delivery));
  }

  private startQueued(): void {
    while (this.running.size < this.deps.limits.asyncQueryConcurrencyMax && this.queue.length > 0) {
      const entry = this.queue.shift()!;
      if (!this.move(entry, 'start')) continue;
      const run = this.run(entry).finally(() => {
        this.running.delete(run);
        if (!this.closed.signal.aborted) this.startQueued();
      });
      this.running.add(run);
    }
  }

  private async run(entry: Entry): Promise<void> {
    const { input } = entry;
    const started = performance.now();
    try {
      const result = await measured(this.deps.metrics, input.tenant, async () => {
        const stream = await this.deps.engine.stream(input.sql, {
          params: input.params,
          timeoutMs: input.timeoutMs,
          signal: entry.abort.signal,
          tenant: input.tenant,
          ...(input.readOnly ? { readOnly: input.readOnly } : {}),
          batchRows: PROGRESS_BATCH_ROWS,
        });
        // Into the record's own array: GET shows the rows collected so far as `progress`.
        return collectRows(stream, input.maxRows, entry.rows);
      });
      const elapsedMs = performance.now() - started;
      entry.outcome = { result, elapsedMs };
      this.estimateMs = this.estimateMs === 0 ? elapsedMs : this.estimateMs * (1 - ESTIMATE_WEIGHT) + elapsedMs * ESTIMATE_WEIGHT;
      this.move(entry, 'complete');
    } catch (error) {
      this.failed(entry, error);
    }
  }

  private failed(entry: Entry, error: unknown): void {
    if (entry.status !== 'running') return; // cancelled meanwhile: the abort is what ended it
    const svcError = asSvcError(error);
    if (svcError.code === 'INTERNAL_ERROR') this.deps.logger.error({ err: error, query_id: entry.id }, 'async query failed');
    entry.error = errorBody(svcError);
    this.move(entry, 'fail');
  }
}

/** The typed record of an entry. */
function infoOf(entry: Entry): AsyncQueryInfo {
  return {
    queryId: entry.id,
    status: entry.status,
    createdAtMs: entry.createdAtMs,
    startedAtMs: entry.startedAtMs,
    finishedAtMs: entry.finishedAtMs,
    rowsCollected: entry.rows.length,
    outcome: entry.status === 'completed' ? entry.outcome : null,
    error: entry.status === 'failed' ? entry.error : null,
  };
}
