import type { TableId } from '../../core/catalog.js';
import type { TypeSystem } from '../types/contract.js';

export interface OptimizerDeps {
  readonly types: TypeSystem;
  /** Exact row count of a table from the projection's statistics. */
  rowCount(tableId: TableId): number;
}
