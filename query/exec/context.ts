import { SvcError } from '../../core/errors.js';
import type { QValue, TypeSystem } from '../types/contract.js';
import type { Plan } from '../plan/nodes.js';
import type { RowSource } from './source.js';
import type { ScanCache } from './scan-cache.js';

export type Row = QValue[];
export type Batch = Row[];

/** Rows and time per plan node, filled by EXPLAIN ANALYZE. */
export interface NodeStats {
  rows: number;
  timeMs: number;
  loops: number;
}

/** Results of subqueries, by subquery id. */
export type SubResult =
  | { readonly kind: 'value'; readonly value: QValue }
  | { readonly kind: 'set'; readonly values: readonly QValue[]; readonly keys: Set<string> | null; readonly hasNull: boolean };

/** What every operator of one execution shares. */
export interface ExecContext {
  readonly types: TypeSystem;
  readonly source: RowSource;
  readonly signal: AbortSignal | undefined;
  /** Date.now() after which the statement is cancelled. */
  readonly deadlineMs: number;
  readonly params: readonly QValue[];
  /** Rows of enclosing queries (correlated subqueries): outer[0] is the nearest. */
  readonly outer: readonly Row[];
  /** Subquery results of this execution level (correlated ones are overwritten per row). */
  readonly subResults: Map<number, SubResult>;
  /** Results of uncorrelated subqueries, shared by the whole statement. */
  readonly statementCache: Map<number, SubResult>;
  readonly stats: Map<Plan, NodeStats> | null;
  /** Rows a blocking operator may hold (SqlLimits.materializedRowsMax). */
  readonly materializedRowsMax: number;
  /** When this execution last let the event loop run (shared by its subquery contexts). */
  readonly clock: { lastYieldMs: number };
  /** Decoded rows of whole tables (scan-cache.ts); null: every scan reads the store. */
  readonly scanCache: ScanCache | null;
  /** hnsw search beam (candidates kept) of vector index scans. */
  readonly efSearch: number;
  /** Working tables of the WITH RECURSIVE rounds running (recursive-union.ts), by plan id. */
  readonly worktables?: ReadonlyMap<number, readonly Row[]>;
  /** Builds the operator tree of a plan (injected so operators need not import the builder). */
  readonly run: (plan: Plan, ctx: ExecContext) => AsyncIterable<Batch>;
}

/** Throws the statement's QUERY_TIMEOUT error once it is cancelled or past its deadline (an execution's, or a statement's env at the read barrier). */
export function checkContinue(ctx: Pick<ExecContext, 'signal' | 'deadlineMs'>): void {
  if (ctx.signal?.aborted) throw new SvcError('QUERY_TIMEOUT', 'canceling statement due to user request', { reason: 'cancelled' });
  if (Date.now() > ctx.deadlineMs) throw new SvcError('QUERY_TIMEOUT', 'canceling statement due to statement timeout', { reason: 'timeout' });
}

/** Longest delay setTimeout takes (a larger one fires at once). */
const TIMER_MS_MAX = 2 ** 31 - 1;

/**
 * Waits for `work` (another statement's, e.g. a scan-cache fill), but no longer than this statement
 * may run: its cancel or its deadline ends the wait, and checkContinue then throws. Polling alone
 * would notice them only once `work` ends, however long that takes.
 */
export async function waitWithin(work: Promise<unknown>, ctx: ExecContext): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stop = new Promise<void>((resolve) => {
    const leftMs = ctx.deadlineMs - Date.now();
    if (leftMs < TIMER_MS_MAX) timer = setTimeout(resolve, Math.max(0, leftMs) + 1);
    if (ctx.signal) ctx.signal.addEventListener('abort', (onAbort = () => resolve()), { once: true });
  });
  try {
    await Promise.race([work, stop]);
  } finally {
    clearTimeout(timer);
    if (onAbort) ctx.signal?.removeEventListener('abort', onAbort);
  }
  checkContinue(ctx);
}

/**
 * A query over rows in memory never waits for I/O, so without this it would hold the event loop
 * to its end: no other request served, no timer (an abort, a client gone) noticed. Operators call
 * it per batch (or per row in loops that multiply rows); it gives the loop a turn every few ms.
 */
const YIELD_EVERY_MS = 10;

export function shouldYield(ctx: ExecContext): boolean {
  return performance.now() - ctx.clock.lastYieldMs >= YIELD_EVERY_MS;
}

/** Gives the event loop a turn (call when shouldYield says so), then checks deadline and abort. */
export async function yieldNow(ctx: ExecContext): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  ctx.clock.lastYieldMs = performance.now();
  checkContinue(ctx);
}

/** A child context for a correlated subquery evaluated for `row`. */
export function childContext(ctx: ExecContext, row: Row | null): ExecContext {
  return { ...ctx, outer: row === null ? [] : [row, ...ctx.outer], subResults: new Map() };
}

export function limitExceeded(what: string, max: number): SvcError {
  return new SvcError('LIMIT_EXCEEDED', `${what} holds more than ${max} rows; add a LIMIT or a more selective WHERE`, { rows_max: max });
}
