/** Public interface of projections/: the consumer framework, the tables projection, the writer. */
export { AppliedTracker } from './applied-tracker.js';
export { CatalogState, type CatalogObject, type CompiledIndex, type TableEntry, type TableStats } from './catalog-state.js';
export { runConsumer, type Consumer, type ConsumerRunOptions } from './consumer.js';
export { dataDirLayout, prepareDataDir, type DataDirLayout, type PrepareDataDirOptions } from './data-dir.js';
export { scanDataDirModes, type ModeEntry, type ModeScan } from './data-dir-modes.js';
export * as keys from './keys.js';
export { Projections, VECTOR_CHECKPOINT_DEFAULTS, type ConsumerOffset, type ProjectionOptions } from './projections.js';
export { CachedRow, droppedSlotBytes as rowCacheDroppedSlotBytes, latin1 as rowCacheName, MEMO_OVERHEAD_BYTES, stringBytes } from './cached-row.js';
export { ReadBarrier, type BarrierLimit } from './read-barrier.js';
export { RowVersionedStore, type RowWrite, type RowWriteListener } from './row-versions.js';
export { rebuildProjections, type RebuildProgress } from './rebuild.js';
export { overlaid, type KeyRange, type OverlayEntry } from './merged-range.js';
export { PendingOverlay, type PendingEntry } from './pending-overlay.js';
export { rowRecordEffects } from './row-ops.js';
export { Sequencer, type AppendObserver, type TxnBuilder, type WriteView } from './sequencer.js';
export {
  openStateStore,
  STORE_OPTIONS,
  type GetManyOptions,
  type KvOp,
  type PointReadStore,
  type RangeOptions,
  type StateStore,
  type StoreSnapshot,
} from './state-store.js';
export { TablesProjection, TABLES_CONSUMER } from './tables-projection.js';
export { VectorProjection, VECTORS_CONSUMER } from './vector-projection.js';
export { checkpointLsn } from './vector-checkpoint.js';
export { hnswSpecs, metricOf, type VectorHit, type VectorIndexSpec, type VectorMetric } from './vector-index.js';
