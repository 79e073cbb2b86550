import type { TxnRecord } from '../core/log-records.js';
import type { Lsn } from '../core/units.js';
import type { RowRecordEffects } from './row-ops.js';

export interface PreparedRecord {
  readonly record: TxnRecord;
  readonly effects: RowRecordEffects;
}

/**
 * Records the sequencer appended, with the effects it already computed for the pending overlay,
 * waiting for the tables projection. Applying them spares decoding the payload and recomputing
 * index keys. It is only an optimisation: a record not found here (after a restart, in a replay)
 * is decoded from the log and gives the same effects, which the replay tests check key for key.
 * Bounded by the records in flight: each entry is taken when its LSN is applied.
 */
export class RecordHandoff {
  private readonly prepared = new Map<Lsn, PreparedRecord>();

  put(lsn: Lsn, prepared: PreparedRecord): void {
    this.prepared.set(lsn, prepared);
  }

  take(lsn: Lsn): PreparedRecord | undefined {
    const prepared = this.prepared.get(lsn);
    if (prepared) this.prepared.delete(lsn);
    return prepared;
  }
}
