import type { ErrorCode, ErrorDetails } from '../../../core/errors.js';
import type { QueryResult } from '../../../query/index.js';
import type { AsyncQueryStatus } from './async-state.js';

/** Why an async query failed: its error, as the envelope would carry it. */
export interface AsyncQueryError {
  readonly code: ErrorCode;
  readonly message: string;
  readonly details: ErrorDetails;
}

/** What a completed query produced: its result (rows up to max_rows) and how long it ran. */
export interface AsyncQueryOutcome {
  readonly result: QueryResult;
  readonly elapsedMs: number;
}

/** An async query's record as it is now (the routes and the callback render it: async-view.ts). */
export interface AsyncQueryInfo {
  readonly queryId: string;
  readonly status: AsyncQueryStatus;
  readonly createdAtMs: number;
  readonly startedAtMs: number | null;
  /** When it completed, failed or was cancelled; null before. */
  readonly finishedAtMs: number | null;
  /** Rows collected so far (the progress of a running query). */
  readonly rowsCollected: number;
  /** Set once it completed. */
  readonly outcome: AsyncQueryOutcome | null;
  /** Set once it failed. */
  readonly error: AsyncQueryError | null;
}

/** What submit() reports: the new record, and how long queries have lately taken. */
export interface AsyncQuerySubmitted {
  readonly queryId: string;
  readonly status: 'pending';
  readonly estimatedTimeMs: number;
}
