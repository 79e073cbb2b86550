import type { RowVersionedStore } from '../projections/index.js';
import { checkContinue, run, SnapshotSource, type ExecContext, type NodeStats, type Row, type RowSource } from './exec/index.js';
import type { VectorSearcher } from './exec/source.js';
import type { Plan } from './plan/nodes.js';
import type { ScanCache } from './exec/scan-cache.js';
import type { QValue, TypeSystem } from './types/contract.js';
import { DEFAULT_SQL_LIMITS } from './limits.js';
import type { JsonRow } from './result.js';
import type { SourceBatch } from './stream.js';

export interface RunOptions {
  readonly types: TypeSystem;
  readonly source: RowSource;
  readonly params: readonly QValue[];
  readonly deadlineMs: number;
  readonly signal: AbortSignal | undefined;
  readonly stats: Map<Plan, NodeStats> | null;
  readonly materializedRowsMax: number;
  /** Whole-table scans of unchanged tables from memory (null: always from the store). */
  readonly scanCache?: ScanCache | null;
  /** hnsw search beam of index scans; default DEFAULT_SQL_LIMITS.efSearchDefault (pgvector's hnsw.ef_search). */
  readonly efSearch?: number;
}

export function execContext(options: RunOptions): ExecContext {
  return {
    types: options.types,
    source: options.source,
    signal: options.signal,
    deadlineMs: options.deadlineMs,
    params: options.params,
    outer: [],
    subResults: new Map(),
    statementCache: new Map(),
    stats: options.stats,
    materializedRowsMax: options.materializedRowsMax,
    scanCache: options.scanCache ?? null,
    efSearch: options.efSearch ?? DEFAULT_SQL_LIMITS.efSearchDefault,
    clock: { lastYieldMs: performance.now() },
    run,
  };
}

/**
 * Runs a plan and hands each row to `onRow` until it returns false (then stops pulling, so
 * upstream scans close early). Returns whether rows were left unread.
 */
export async function pullRows(plan: Plan, ctx: ExecContext, onRow: (row: Row) => boolean): Promise<boolean> {
  for await (const batch of run(plan, ctx)) {
    for (const row of batch) if (!onRow(row)) return true;
  }
  return false;
}

/**
 * Runs a plan over the rows `open` gives and yields them converted, `batchRows` at a time. A full
 * batch goes only when the next row exists, so `last` is known; after each one the signal and the
 * deadline are checked again (the consumer may have been slow). A consumer that stops early stops
 * the plan: its scans close, then the read scope.
 */
export async function* planBatches(
  plan: Plan,
  options: Omit<RunOptions, 'source'>,
  open: () => ReadScope,
  convert: (row: Row) => JsonRow,
  batchRows: number,
): AsyncGenerator<SourceBatch> {
  const scope = open();
  try {
    const ctx = execContext({ ...options, source: scope.source });
    let batch: JsonRow[] = [];
    for await (const rows of run(plan, ctx)) {
      for (let at = fill(batch, rows, 0, batchRows, convert); at < rows.length; at = fill(batch, rows, at, batchRows, convert)) {
        // The batch is full and another row exists.
        yield { rows: batch, last: false };
        batch = [];
        checkContinue(ctx);
      }
    }
    if (batch.length > 0) yield { rows: batch, last: true };
  } finally {
    await scope.close();
  }
}

/**
 * Runs a plan over the rows `open` gives and collects at most `rowsMax` rows converted (execute()'s
 * SELECT): planBatches' result without its generators, so a point read pays for no extra layers.
 * truncated: a row past rowsMax exists (pulling stops at it, so the plan's scans close early).
 */
export async function collectPlan(
  plan: Plan,
  options: Omit<RunOptions, 'source'>,
  open: () => ReadScope,
  convert: (row: Row) => JsonRow,
  rowsMax: number,
): Promise<{ rows: JsonRow[]; truncated: boolean }> {
  const scope = open();
  try {
    const ctx = execContext({ ...options, source: scope.source });
    const rows: JsonRow[] = [];
    for await (const batch of run(plan, ctx)) {
      for (let i = 0; i < batch.length; i++) {
        if (rows.length >= rowsMax) return { rows, truncated: true };
        rows.push(convert(batch[i]!));
      }
    }
    return { rows, truncated: false };
  } finally {
    await scope.close();
  }
}

/** Converts rows from `at` into `batch` until it holds `batchRows`; returns the first row not taken (a plain loop: kept out of the generator, which V8 runs slower). */
function fill(batch: JsonRow[], rows: readonly Row[], at: number, batchRows: number, convert: (row: Row) => JsonRow): number {
  let next = at;
  while (next < rows.length && batch.length < batchRows) batch.push(convert(rows[next++]!));
  return next;
}

/** Rows to read a statement from, and what to let go of when it is done. */
export interface ReadScope {
  readonly source: RowSource;
  close(): Promise<void>;
}

/** A snapshot of the store taken now (one consistent view per statement); close() releases it. */
export function openSnapshot(store: RowVersionedStore, vectors: VectorSearcher | null = null): ReadScope {
  const snapshot = store.snapshot();
  return { source: new SnapshotSource(store, snapshot, vectors), close: () => snapshot.close() };
}

/** Runs a read-only plan against a snapshot of the store taken now (one consistent view per statement). */
export async function withSnapshot<T>(store: RowVersionedStore, fn: (source: RowSource) => Promise<T>, vectors: VectorSearcher | null = null): Promise<T> {
  const scope = openSnapshot(store, vectors);
  try {
    return await fn(scope.source);
  } finally {
    await scope.close();
  }
}
