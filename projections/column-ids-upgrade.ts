/**
 * The tables projection's one-time upgrade of a store from before the highest column ids were
 * kept (docs/decisions.md "Table and column ids"): run by TablesProjection.load.
 */
import { decodeRow } from '../core/row-decode.js';
import type { Logger } from '../core/logger.js';
import type { CatalogState } from './catalog-state.js';
import { idRange, KeySpace } from './keys.js';
import { PROJECTION_LIMITS } from './limits.js';
import type { StateStore } from './state-store.js';

/**
 * A store written before the highest column id of each table was kept (tables:ids-high without
 * `columns`): a column dropped then may have been the highest, and its values are still in old rows
 * under its id. Once, at the first load, each table's highest column id is raised to the highest in
 * any of its stored rows, so ADD COLUMN allocates above it (docs/decisions.md "Table and column ids").
 */
export async function raiseColumnIdsFromRows(store: StateStore, catalog: CatalogState, logger: Logger): Promise<void> {
  const tables = [...catalog.tables()].filter((entry) => entry.def.kind !== 'view');
  if (tables.length === 0) return;
  logger.info({ tables: tables.length }, 'reading column ids from stored rows once (a store from before column ids were kept)');
  for (const entry of tables) {
    let high = 0;
    for await (const batch of store.entries({ ...idRange(KeySpace.Row, entry.def.id), batchSize: PROJECTION_LIMITS.bulkChunkKeys })) {
      for (const [, value] of batch) for (const id of decodeRow(value).keys()) if (id > high) high = id;
    }
    if (high > catalog.columnIdHigh(entry.def.id)) catalog.raiseIds({ tableId: 0, indexId: 0, columns: { [entry.def.id]: high } });
  }
}
