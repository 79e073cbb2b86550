import type { TxnRecord } from '../core/log-records.js';
import type { Lsn } from '../core/units.js';
import type { RowRecordEffects } from './row-ops.js';
import { PROJECTION_LIMITS } from './limits.js';
import type { PreparedWrite } from './state-store.js';

export interface PreparedRecord {
  readonly record: TxnRecord;
  readonly effects: RowRecordEffects;
  /**
   * A store batch holding effects.ops already (StateStore.prepare), if one was made; given once:
   * to the write that applies the record, or discarded with a record that will not be.
   */
  takeWrite?(): PreparedWrite | undefined;
}

/**
 * Records the sequencer appended, with the effects it already computed for the pending overlay,
 * waiting for the tables projection. Applying them spares decoding the payload and recomputing
 * index keys. It is only an optimisation: a record not found here (after a restart, in a replay)
 * is decoded from the log and gives the same effects, which the replay tests check key for key.
 * Bounded by the records in flight: each entry is taken when its LSN is applied.
 */
export class RecordHandoff {
  private prepared = new Map<Lsn, PreparedRecord>();
  /**
   * LSNs of prepared records not yet seen by the vector projection: they change rows (and
   * sequences) only, so without a vector index it need not decode them. Taken when it applies
   * them; what a failed log never applies stays until the process ends (the log refuses writes).
   */
  private rowsOnly = new Set<Lsn>();
  /** Deletes since the two collections were last renewed (PROJECTION_LIMITS.churnedMapRenewDeletes). */
  private deletes = 0;

  put(lsn: Lsn, prepared: PreparedRecord): void {
    this.prepared.set(lsn, prepared);
    this.rowsOnly.add(lsn);
  }

  /** True (once) when the record at lsn is known to change only rows and sequences. */
  takeRowsOnly(lsn: Lsn): boolean {
    if (!this.rowsOnly.delete(lsn)) return false;
    this.deleted();
    return true;
  }

  take(lsn: Lsn): PreparedRecord | undefined {
    const prepared = this.prepared.get(lsn);
    if (prepared) {
      this.prepared.delete(lsn);
      this.deleted();
    }
    return prepared;
  }

  /** Every so many deletes, both collections start over as copies of what they hold (see churnedMapRenewDeletes). */
  private deleted(): void {
    if (++this.deletes < PROJECTION_LIMITS.churnedMapRenewDeletes) return;
    this.deletes = 0;
    this.prepared = new Map(this.prepared);
    this.rowsOnly = new Set(this.rowsOnly);
  }
}
