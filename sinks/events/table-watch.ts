/**
 * The TableWatch of live queries: after each batch the tables projection applies (its applied
 * LSN moves), compare the per-table row versions (projections/row-versions.ts, the scan cache's
 * key) and definitions with what each waiter last saw. Driven by the log, never by a timer.
 */
import type { Subscription } from 'rxjs';
import type { TableId } from '../../core/catalog.js';
import type { TableMark, TableWatch } from '../../core/change-feed.js';
import { SvcError } from '../../core/errors.js';
import type { Projections } from '../../projections/index.js';

interface Waiter {
  readonly tableIds: readonly number[];
  readonly since: TableMark;
  resolve(mark: TableMark): void;
  reject(error: unknown): void;
}

/** Marks with a write in flight carry this; they never equal a later mark (see markOf). */
const IN_FLIGHT = '?';

export class ProjectionTableWatch implements TableWatch {
  private readonly waiters = new Set<Waiter>();
  private subscription: Subscription | null = null;
  /** The error that stopped the watch (its reader's), boxed so its `unknown` type survives narrowing. */
  private failure: { readonly error: unknown } | null = null;
  private closed = false;

  constructor(private readonly projections: Projections) {}

  mark(tableIds: readonly number[]): TableMark {
    return this.markOf(tableIds);
  }

  changed(tableIds: readonly number[], since: TableMark, signal: AbortSignal): Promise<TableMark> {
    if (this.closed) return Promise.reject(closedError());
    if (this.failure !== null) return Promise.reject(this.failure.error);
    if (signal.aborted) return Promise.reject(signal.reason);
    const now = this.markOf(tableIds);
    if (now !== since && !now.includes(IN_FLIGHT)) return Promise.resolve(now);
    return new Promise<TableMark>((resolve, reject) => {
      const onAbort = (): void => waiter.reject(signal.reason);
      const waiter: Waiter = {
        tableIds,
        since,
        resolve: (mark) => {
          this.remove(waiter, signal, onAbort);
          resolve(mark);
        },
        reject: (error) => {
          this.remove(waiter, signal, onAbort);
          reject(error);
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(waiter);
      this.subscribeOnce();
    });
  }

  /** Waiters now (tests check that none is left behind). */
  get waiting(): number {
    return this.waiters.size;
  }

  /** Rejects every waiter (shutdown). */
  close(): void {
    this.closed = true;
    for (const waiter of [...this.waiters]) waiter.reject(closedError());
    this.subscription?.unsubscribe();
    this.subscription = null;
  }

  private remove(waiter: Waiter, signal: AbortSignal, onAbort: () => void): void {
    signal.removeEventListener('abort', onAbort);
    this.waiters.delete(waiter);
    if (this.waiters.size === 0) {
      // Nobody waits: no snapshot per applied batch.
      this.subscription?.unsubscribe();
      this.subscription = null;
    }
  }

  private subscribeOnce(): void {
    if (this.subscription) return;
    this.subscription = this.projections.tablesApplied.lsn$.subscribe({
      next: () => this.onApplied(),
      error: (error: unknown) => {
        this.failure = { error };
        for (const waiter of [...this.waiters]) waiter.reject(error);
      },
    });
  }

  private onApplied(): void {
    // One store snapshot for every waiter: a table's part of the mark is computed once.
    const parts = new Map<number, string>();
    this.withSnapshot((partOf) => {
      for (const waiter of [...this.waiters]) {
        const now = waiter.tableIds
          .map((id) => {
            let part = parts.get(id);
            if (part === undefined) parts.set(id, (part = partOf(id)));
            return part;
          })
          .join(',');
        if (now !== waiter.since) waiter.resolve(now);
      }
    });
  }

  private markOf(tableIds: readonly number[]): TableMark {
    return this.withSnapshot((partOf) => tableIds.map(partOf).join(','));
  }

  /**
   * Runs `fn` with a table's part of a mark as of one store snapshot: its row version (odd while
   * a write to its rows is in flight, shown as IN_FLIGHT plus a unique count: such a mark stands
   * for no settled state) and its definition's identity (DDL changes it).
   */
  private withSnapshot<T>(fn: (partOf: (tableId: number) => string) => T): T {
    const store = this.projections.store;
    const snapshot = store.snapshot();
    try {
      return fn((id) => {
        const version = store.rowVersion(snapshot, id as TableId);
        const def = this.projections.catalog.table(id as TableId)?.def;
        const identity = def ? `${def.createdAtMicros}.${def.updatedAtMicros}` : 'none';
        return `${id}:${version ?? `${IN_FLIGHT}${++inFlightMarks}`}:${identity}`;
      });
    } finally {
      void snapshot.close().catch(() => undefined);
    }
  }
}

let inFlightMarks = 0;

const closedError = (): SvcError => new SvcError('SHUTTING_DOWN', 'the server is shutting down', {});
