import type { TableId } from '../core/catalog.js';
import type { TxnOp } from '../core/log-records.js';
import { LSN_NONE, type Lsn } from '../core/units.js';
import type { AppliedTracker } from './applied-tracker.js';

/** How long a read may wait at the barrier: the statement's own deadline and cancel signal. */
export interface BarrierLimit {
  /** Date.now() after which the statement is cancelled. */
  readonly deadlineMs: number;
  readonly signal: AbortSignal | undefined;
}

/**
 * Read-your-writes without making the writer wait for the apply.
 *
 * A row write is answered once its record is durable (fdatasync): the tables projection's LevelDB
 * write and the vector projection's apply run after the answer, not before it. What a read must
 * see is every write answered before it began, so every read of the projections begins here: when
 * nothing answered is still unapplied (two numbers compared) it reads at once; otherwise it waits
 * until the projections it reads applied the highest LSN answered so far.
 *
 * Two projections, two waits. Most reads use the tables projection alone (the store: GET row,
 * point and general SELECTs, REST lists, GraphQL, collections): they wait for it only
 * (`tablesBehind`, waitTables). A vector search also reads the hnsw graphs: it waits for both
 * (`behind`, waitAll). The vector apply of a bulk upsert into an hnsw index takes seconds; a read of
 * a plain table must not wait for it.
 *
 * A wait given a limit ends with the statement's deadline or cancel signal (false: the caller
 * throws the statement's timeout or cancel error) and leaves no waiter behind in the tracker.
 *
 * Writers do not wait here: they validate against the store plus the pending overlay, which holds
 * every appended record until every projection applied it.
 *
 * Per table, not per write: a read that names its tables (GET row, a SELECT's plan) waits only for
 * the writes answered to those tables (tableBehind, waitTable), so bulk writers of one table do not hold the
 * reads of another. The tables projection applies in LSN order, so a read of A after writes to A at
 * LSN 10 and to B at LSN 12 waits for LSN 10 only. A read whose tables are not known here
 * (settled(): the stats of every table) waits for every write (waitTables).
 *
 * The acknowledged LSN is raised before the answer leaves (the sequencer, right after the record
 * is durable), so a read that starts after any client saw an answer waits for that answer's
 * record. Records acknowledged only after the projections applied them (catalog changes) need not
 * be told.
 */
export class ReadBarrier {
  /** The highest LSN answered as durable before being applied. */
  private acknowledgedLsn: Lsn = LSN_NONE;
  /**
   * Answered for every table at once (acknowledge()): the records durable at open, any of which may
   * have been answered before a crash, whose tables are not known without reading them.
   */
  private everyTableLsn: Lsn = LSN_NONE;
  /**
   * Per table whose rows a record answered since the tables projection last caught up: the highest
   * such LSN (acknowledgeRows). Emptied when it catches up (every entry is applied then): it holds
   * at most the tables written meanwhile.
   */
  private readonly tableLsns = new Map<TableId, Lsn>();
  /** Plain copies of the trackers' LSNs (their getters go through an RxJS subject). */
  private tablesLsn: Lsn;
  private allLsn: Lsn;

  constructor(
    /** Applied by the tables projection. */
    private readonly tables: AppliedTracker,
    /** Applied by every projection (the lower of tables and vectors). */
    private readonly all: AppliedTracker,
  ) {
    this.tablesLsn = tables.lsn;
    this.allLsn = all.lsn;
  }

  /** True while a write was answered that some projection has not applied yet: a vector search must waitAll(). */
  get behind(): boolean {
    return this.allLsn < this.acknowledgedLsn;
  }

  /** True while a write was answered that the tables projection has not applied yet: a read of the store must waitTables(). Implies `behind`. */
  get tablesBehind(): boolean {
    return this.tablesLsn < this.acknowledgedLsn;
  }

  /** The highest LSN answered before it was applied (LSN_NONE: none). */
  get acknowledged(): Lsn {
    return this.acknowledgedLsn;
  }

  /** Called with a durable record's LSN before its write is answered, when the tables it changes are not known: it counts for every table. */
  acknowledge(lsn: Lsn): void {
    if (lsn > this.acknowledgedLsn) this.acknowledgedLsn = lsn;
    if (lsn > this.everyTableLsn) this.everyTableLsn = lsn;
  }

  /** Called with a durable record's LSN and its row changes (`ops`) before its write is answered: it counts for the tables they change. */
  acknowledgeRows(lsn: Lsn, ops: readonly TxnOp[]): void {
    if (lsn > this.acknowledgedLsn) this.acknowledgedLsn = lsn;
    // A record's changes come table by table (a bulk insert: 10,000 of one table): one set per run.
    let last = -1;
    for (const op of ops) {
      if (op.kind !== 'row' || op.tableId === last) continue;
      last = op.tableId;
      // LSNs are acknowledged nearly in order, but group commits may answer a lower one later.
      if (!((this.tableLsns.get(last) ?? LSN_NONE) >= lsn)) this.tableLsns.set(last, lsn);
    }
  }

  /** Called on every advance: what the tables projection applied, and what every projection applied. */
  advanced(tables: Lsn, all: Lsn): void {
    if (tables > this.tablesLsn) this.tablesLsn = tables;
    if (all > this.allLsn) this.allLsn = all;
    if (this.tablesLsn >= this.acknowledgedLsn && this.tableLsns.size > 0) this.tableLsns.clear();
  }

  /**
   * True while a write answered to table `tableId` (or one answered at open) is not applied by the
   * tables projection yet: a read of it must waitTable(). Check tablesBehind first (two numbers
   * compared; this looks the table up).
   */
  tableBehind(tableId: TableId): boolean {
    return this.tablesLsn < this.lsnOfTable(tableId);
  }

  /** tableBehind for a read of several tables (a plan's tablesUsed): behind when any of them is. */
  tablesBehindOf(tableIds: Iterable<TableId>): boolean {
    return this.tablesLsn < this.lsnOfTables(tableIds);
  }

  /** waitTables for the writes answered to table `tableId` only (and those answered at open). */
  waitTable(tableId: TableId, limit?: BarrierLimit): Promise<boolean> {
    return wait(this.tables, this.lsnOfTable(tableId), limit);
  }

  /** waitTable for a read of several tables. */
  waitTablesOf(tableIds: Iterable<TableId>, limit?: BarrierLimit): Promise<boolean> {
    return wait(this.tables, this.lsnOfTables(tableIds), limit);
  }

  /** The LSN a read of table `tableId` must see applied. */
  private lsnOfTable(tableId: TableId): Lsn {
    const lsn = this.tableLsns.get(tableId);
    return lsn !== undefined && lsn > this.everyTableLsn ? lsn : this.everyTableLsn;
  }

  private lsnOfTables(tableIds: Iterable<TableId>): Lsn {
    let lsn = this.everyTableLsn;
    for (const id of tableIds) {
      const table = this.tableLsns.get(id);
      if (table !== undefined && table > lsn) lsn = table;
    }
    return lsn;
  }

  /**
   * Waits until the tables projection applied every write answered so far: resolves true then, or
   * false once `limit`'s deadline passed or its signal aborted (no limit: never gives up). Rejects
   * with the tracker's failure when the tables projection stopped (a read would otherwise miss an
   * acknowledged write, or wait forever).
   */
  waitTables(limit?: BarrierLimit): Promise<boolean> {
    return wait(this.tables, this.acknowledgedLsn, limit);
  }

  /**
   * Resolves once every projection applied every write answered so far (no limit): for the stop, and
   * for tests that read below the engine.
   */
  wait(): Promise<void> {
    return this.all.waitFor(this.acknowledgedLsn);
  }

  /** waitTables for every projection (the tables and the vector graphs): for reads that search an hnsw index. */
  waitAll(limit?: BarrierLimit): Promise<boolean> {
    return wait(this.all, this.acknowledgedLsn, limit);
  }
}

function wait(tracker: AppliedTracker, lsn: Lsn, limit: BarrierLimit | undefined): Promise<boolean> {
  // No deadline: no timer either (waitWithin sets none past setTimeout's range).
  return tracker.waitWithin(lsn, limit?.deadlineMs ?? Infinity, limit?.signal);
}
