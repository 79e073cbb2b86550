import { LSN_NONE, type Lsn } from '../core/units.js';
import type { AppliedTracker } from './applied-tracker.js';

/**
 * Read-your-writes without making the writer wait for the apply.
 *
 * A row write is answered once its record is durable (fdatasync): the tables projection's LevelDB
 * write and the vector projection's apply run after the answer, not before it. What a read must
 * see is every write answered before it began, so every read of the projections begins here: when
 * nothing answered is still unapplied (`behind` false, two numbers compared) it reads at once;
 * otherwise it waits (`wait()`) until the projections applied the highest LSN answered so far.
 * Writers do not wait here: they validate against the store plus the pending overlay, which holds
 * every appended record until it is applied.
 *
 * The acknowledged LSN is raised before the answer leaves (the sequencer, right after the record
 * is durable), so a read that starts after any client saw an answer waits for that answer's
 * record. Records acknowledged only after the projections applied them (catalog changes) need not
 * be told.
 */
export class ReadBarrier {
  /** The highest LSN answered as durable before being applied. */
  private acknowledgedLsn: Lsn = LSN_NONE;
  /** A plain copy of the tracker's LSN (its own getter goes through an RxJS subject). */
  private appliedLsn: Lsn;

  constructor(private readonly applied: AppliedTracker) {
    this.appliedLsn = applied.lsn;
  }

  /** True while a write was answered that the projections have not applied yet: a read must wait(). */
  get behind(): boolean {
    return this.appliedLsn < this.acknowledgedLsn;
  }

  /** The highest LSN answered before it was applied (LSN_NONE: none). */
  get acknowledged(): Lsn {
    return this.acknowledgedLsn;
  }

  /** Called with a durable record's LSN before its write is answered. */
  acknowledge(lsn: Lsn): void {
    if (lsn > this.acknowledgedLsn) this.acknowledgedLsn = lsn;
  }

  /** Called with every LSN the projections (all that reads use) have applied. */
  advanced(lsn: Lsn): void {
    if (lsn > this.appliedLsn) this.appliedLsn = lsn;
  }

  /**
   * Resolves once every write answered so far is applied; rejects with the tracker's failure when a
   * projection stopped (a read would otherwise miss an acknowledged write, or wait forever).
   */
  wait(): Promise<void> {
    return this.applied.waitFor(this.acknowledgedLsn);
  }
}
