/**
 * The SQL engine's waits at the read barrier (projections/read-barrier.ts): a row write is answered
 * once durable, and a read that finds a write answered but not yet applied by the projections it
 * reads waits here for the apply. Callers check `barrier.tablesBehind` / `barrier.behind` first
 * (caught up, a read compares two numbers and goes on) and call these only when behind, so the
 * synchronous paths (GET row's and the point SELECT's) allocate nothing for them.
 */
import type { TableId } from '../core/catalog.js';
import type { BarrierLimit, ReadBarrier } from '../projections/index.js';
import { checkContinue } from './exec/context.js';
import type { PointReader, KeyRead, KeyReadResult } from './point-read.js';
import type { PreparedQuery } from './prepare.js';
import type { JsonRow } from './result.js';
import type { AnswerWrap } from './row-shapes.js';
import type { StatementEnv } from './statement.js';

/**
 * PointReader.read once the tables projection applied every acknowledged write (a function, not a
 * closure: no context allocated on the sync path). A read by key is given no deadline by its route,
 * so it gets `timeoutMs` (the default statement timeout): past it, the QUERY_TIMEOUT error a SELECT
 * waiting here that long gets, rather than a request held for as long as the apply takes.
 */
export async function readAfterBarrier(barrier: ReadBarrier, reader: PointReader, read: KeyRead, timeoutMs: number): Promise<KeyReadResult> {
  await untilTableApplied(barrier, read.table.id, timeoutMs);
  return reader.read(read);
}

/** PointReader.readText once every acknowledged write is applied, within `timeoutMs` (readAfterBarrier's reasons). */
export async function readTextAfterBarrier(
  barrier: ReadBarrier,
  reader: PointReader,
  read: KeyRead,
  toText: (row: JsonRow) => string,
  wrap: AnswerWrap | undefined,
  timeoutMs: number,
): Promise<string | null | undefined> {
  await untilTableApplied(barrier, read.table.id, timeoutMs);
  return reader.readText(read, toText, wrap);
}

/**
 * Waits for the tables projection's apply of every write acknowledged to table `tableId` (null: to
 * any table, for SqlEngine.settled(): the stats of every table); throws checkContinue's timeout error
 * past `timeoutMs`, which its callers take from the default statement timeout (they are given none).
 */
export async function untilTableApplied(barrier: ReadBarrier, tableId: TableId | null, timeoutMs: number): Promise<void> {
  const limit: BarrierLimit = { deadlineMs: Date.now() + timeoutMs, signal: undefined };
  // false: the wait gave up at the deadline (a timer that fired a little early waits again).
  while (!(await (tableId === null ? barrier.waitTables(limit) : barrier.waitTable(tableId, limit)))) checkContinue(limit);
}

/**
 * The wait at the read barrier of a statement (called only when `barrier.behind`). `prepared` reads
 * the tables projection alone unless it may search an hnsw index (mayScanVectors), and only the
 * tables its plan names (tablesUsed: views and subqueries included): it waits for the writes
 * answered to them (to every table when it names none). null: a vector search, or a statement
 * whose plan is not at hand (EXPLAIN), which waits for every write and every projection. The
 * statement's deadline and cancel signal end the wait with the errors they end its execution with
 * (checkContinue's).
 */
export async function untilApplied(barrier: ReadBarrier, prepared: PreparedQuery | null, env: StatementEnv): Promise<void> {
  const all = prepared === null || mayScanVectors(prepared);
  if (!all && !barrier.tablesBehind) return;
  // A plan that reads no table (SELECT 1) waits for every table, as before: a caller may use one as a
  // sync point after its writes, and it has nothing to gain.
  const tables = all || prepared.tablesUsed.size === 0 ? null : prepared.tablesUsed;
  if (tables !== null && !barrier.tablesBehindOf(tables.keys())) return;
  // false: the wait gave up at the deadline or the cancel, and checkContinue throws (a timer that
  // fired a little early waits again).
  while (!(await (all ? barrier.waitAll(env) : tables ? barrier.waitTablesOf(tables.keys(), env) : barrier.waitTables(env)))) checkContinue(env);
}

/**
 * Whether running `prepared` may search an hnsw index (read the vector projection's graphs): only a
 * table with one can be searched so, and the plan names every table it reads, views and subqueries
 * included (tablesUsed). Cheaper than walking the plan and its subqueries' plans for vector scans,
 * and errs on the waiting side only: a SELECT of an hnsw-indexed table without a vector ORDER BY
 * waits for that table's vector apply too.
 */
function mayScanVectors(prepared: PreparedQuery): boolean {
  for (const def of prepared.tablesUsed.values()) {
    for (const index of def.indexes) if (index.kind === 'hnsw') return true;
  }
  return false;
}
