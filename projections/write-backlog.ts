import type { TxnOp } from '../core/log-records.js';
import type { Lsn } from '../core/units.js';
import type { Log } from '../log/index.js';
import type { AppliedTracker } from './applied-tracker.js';
import type { CatalogState } from './catalog-state.js';
import { PROJECTION_LIMITS } from './limits.js';
import { PendingOverlay } from './pending-overlay.js';

export interface WriteBacklogDeps {
  readonly log: Log;
  readonly catalog: CatalogState;
  readonly applied: AppliedTracker;
}

/**
 * What the sequencer has appended and the projections have not applied yet, and the bound that
 * admits writers while it is small. Writers validate against the store plus this backlog (the row
 * and index effects of records in flight, the sequence values they took, values open transactions
 * reserved), and every read may wait at the read barrier for it to be applied: so it is bounded,
 * and it is let go of as the projections apply (released()), never before the store has it.
 */
export class WriteBacklog {
  /** The row and index effects of records appended and not yet applied (what getRow and the scans read before the store). */
  readonly overlay = new PendingOverlay();
  /** The last value of each sequence a record in flight took, until that record is applied (the catalog has it then). */
  private readonly pendingSequences = new Map<string, { value: bigint; lsn: Lsn }>();
  /** Sequence values handed out by open transactions, not yet in any record (like PostgreSQL, never given twice). */
  private readonly reservedSequences = new Map<string, bigint>();

  constructor(private readonly deps: WriteBacklogDeps) {}

  /** Row and index keys appended but not yet applied. */
  get size(): number {
    return this.overlay.size;
  }

  /**
   * A writer may go on at once: the log has room for what it has not written and the apply is not
   * far behind. When false, untilAdmitted() waits (asked first, so the common submit awaits nothing).
   */
  admits(): boolean {
    return this.deps.log.writable && this.overlay.size <= PROJECTION_LIMITS.unappliedKeysMax;
  }

  /**
   * Waits while the log has too much unwritten (bounded memory), then while the apply is far behind
   * (bulk writers outrun it; found by review: an unrelated read waited 20 s at the read barrier and
   * the overlay doubled the memory), until it has caught up: the backlog every read may wait for
   * stays under unappliedKeysMax plus the records still syncing (bounded by the log's unwritten
   * bytes). Until everything durable is applied, not everything appended: a record whose fdatasync
   * failed is never applied, and the writer must then get the log's failure, not wait for it forever.
   */
  async untilAdmitted(): Promise<void> {
    const { log, applied } = this.deps;
    if (!log.writable) await log.whenWritable();
    if (this.overlay.size > PROJECTION_LIMITS.unappliedKeysMax) await applied.waitFor(log.durableLsn);
  }

  /** The sequence values a record appended at `lsn` took (its ops of kind 'sequence'). */
  sequencesTaken(ops: readonly TxnOp[], lsn: Lsn): void {
    for (const op of ops) {
      if (op.kind === 'sequence') this.pendingSequences.set(op.name, { value: op.lastValue, lsn });
    }
  }

  /**
   * Marks sequence values as taken without a log record (an open transaction used them): later
   * writers continue above them. Forgotten at restart, when no transaction is open any more.
   */
  reserveSequence(name: string, value: bigint): void {
    if (value > (this.reservedSequences.get(name) ?? 0n)) this.reservedSequences.set(name, value);
  }

  /** The last value of a sequence as a writer sees it: records in flight and reservations included. */
  sequence(name: string): bigint | undefined {
    const current = this.pendingSequences.get(name)?.value ?? this.deps.catalog.sequence(name);
    const reserved = this.reservedSequences.get(name);
    return current !== undefined && reserved !== undefined && reserved > current ? reserved : current;
  }

  /**
   * The projections applied everything up to `applied`: it leaves the overlay and the pending
   * sequences, as the store and the catalog have it now.
   */
  released(applied: Lsn): void {
    this.overlay.release(applied);
    // Most inserts touch no sequence: no iterator over an empty map per insert.
    if (this.pendingSequences.size > 0) {
      for (const [name, pending] of this.pendingSequences) {
        if (pending.lsn <= applied) this.pendingSequences.delete(name);
      }
    }
  }

  /** After a wait for a catalog record (either way): released() as far as is applied (a failed projection applies nothing more). */
  settled(): void {
    const applied = this.deps.applied;
    if (applied.failed === null) this.released(applied.lsn);
  }
}
