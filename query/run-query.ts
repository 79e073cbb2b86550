import type { RowVersionedStore } from '../projections/index.js';
import { run, SnapshotSource, type ExecContext, type NodeStats, type Row, type RowSource } from './exec/index.js';
import type { VectorSearcher } from './exec/source.js';
import type { Plan } from './plan/nodes.js';
import type { ScanCache } from './exec/scan-cache.js';
import type { QValue, TypeSystem } from './types/contract.js';
import { DEFAULT_SQL_LIMITS } from './limits.js';

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

/** Runs a read-only plan against a snapshot of the store taken now (one consistent view per statement). */
export async function withSnapshot<T>(store: RowVersionedStore, fn: (source: RowSource) => Promise<T>, vectors: VectorSearcher | null = null): Promise<T> {
  const snapshot = store.snapshot();
  try {
    return await fn(new SnapshotSource(store, snapshot, vectors));
  } finally {
    await snapshot.close();
  }
}
