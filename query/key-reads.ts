import type { PointReadStore, ReadBarrier } from '../projections/index.js';
import { readAfterBarrier, readTextAfterBarrier, untilTableApplied } from './barrier-wait.js';
import { PointReader, type KeyRead, type KeyReadResult } from './point-read.js';
import type { JsonRow } from './result.js';
import type { AnswerWrap, RowShapes } from './row-shapes.js';
import type { TypeSystem } from './types/contract.js';

/**
 * The engine's reads that are not statements (SqlEngine.readByKey, readTextByKey, settled): a row by
 * its primary key for GET /tables/{t}/rows/{id}, and the wait of the routes that read a table's
 * stats from the catalog. Each begins at the read barrier (projections/read-barrier.ts) as a SELECT
 * does, waiting while a write answered before it is not applied yet; but its route gives it no
 * deadline, so a wait lasts at most `timeoutMs` (limits.readTimeoutMsDefault), then QUERY_TIMEOUT.
 * Caught up (the common case), a read compares two numbers and reads the store synchronously: no
 * promise, nothing allocated for the barrier.
 */
export class KeyReads {
  private readonly reader: PointReader;

  constructor(
    store: PointReadStore,
    types: TypeSystem,
    shapes: RowShapes,
    private readonly barrier: ReadBarrier,
    private readonly timeoutMs: number,
  ) {
    this.reader = new PointReader(store, types, shapes);
  }

  /** SqlEngine.settled(): undefined when the tables projection applied every write answered so far, else the wait for it. */
  settled(): Promise<void> | undefined {
    return this.barrier.tablesBehind ? untilTableApplied(this.barrier, null, this.timeoutMs) : undefined;
  }

  /** SqlEngine.readByKey(): PointReader.read, after the apply of the writes answered to its table. */
  read(read: KeyRead): KeyReadResult | Promise<KeyReadResult> {
    // Behind for another table's writes only: read at once (the wait is per table).
    if (this.barrier.tablesBehind && this.barrier.tableBehind(read.table.id)) return readAfterBarrier(this.barrier, this.reader, read, this.timeoutMs);
    return this.reader.read(read);
  }

  /** SqlEngine.readTextByKey(): PointReader.readText, after the apply of the writes answered to its table. */
  readText(read: KeyRead, toText: (row: JsonRow) => string, wrap?: AnswerWrap): string | null | undefined | Promise<string | null | undefined> {
    if (this.barrier.tablesBehind && this.barrier.tableBehind(read.table.id))
      return readTextAfterBarrier(this.barrier, this.reader, read, toText, wrap, this.timeoutMs);
    return this.reader.readText(read, toText, wrap);
  }
}
