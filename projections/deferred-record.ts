import type { TxnRecord } from '../core/log-records.js';
import type { PreparedRecord } from './record-handoff.js';
import type { RowRecordEffects } from './row-ops.js';
import type { PreparedWrite, StateStore } from './state-store.js';

/**
 * A row-only record handed to the tables projection before its effects are built: the sequencer
 * builds them (and the store's batch of them) while the log writes and fdatasyncs the record, so
 * a bulk insert's answer no longer waits for that work after the fdatasync. Whoever needs the
 * effects first builds them, once: the sequencer after the log's write started, or the projection
 * if it applies the record before that (then no batch is prepared for it).
 */
export class DeferredRecord implements PreparedRecord {
  private built: RowRecordEffects | null = null;
  private write: PreparedWrite | undefined;
  private taken = false;

  constructor(
    readonly record: TxnRecord,
    private readonly build: () => RowRecordEffects,
  ) {}

  get effects(): RowRecordEffects {
    this.built ??= this.build();
    return this.built;
  }

  /** Puts the effects' ops into a store batch for the projection's write, unless it took the record already. */
  prepare(store: StateStore): void {
    if (!this.taken && store.prepare) this.write = store.prepare(this.effects.ops);
  }

  takeWrite(): PreparedWrite | undefined {
    this.taken = true;
    const write = this.write;
    this.write = undefined;
    return write;
  }
}
