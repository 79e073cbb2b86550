import type { CatalogState, RowVersionedStore, WriteView } from '../../projections/index.js';
import type { TxnOp } from '../../core/log-records.js';
import type { VectorSearcher } from '../exec/source.js';
import type { ReadScope } from '../run-query.js';

/** What the SQL engine needs of an open transaction to run one of its statements (transaction.ts). */
export interface TxnContext {
  /** Where a SELECT reads: the transaction's snapshot (or a fresh one), its own changes laid over. */
  openReadSource(store: RowVersionedStore, vectors: VectorSearcher | null): ReadScope;
  /**
   * Called inside the sequencer's builder of a DML statement: refuses when the transaction already
   * conflicts (repeatable_read, serializable), and gives the view the statement validates against.
   */
  dmlView(view: WriteView, headLsn: number): WriteView;
  /** Keeps the changes of a DML statement that succeeded (nothing is appended before commit). */
  stage(ops: readonly TxnOp[], catalog: CatalogState): void;
}
