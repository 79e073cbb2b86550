/**
 * A CDC stream's filter (WITH (operations = ..., columns = ..., predicate = ...)), built on the
 * webhook filter: the same columns rule and the same predicate compiled by the SQL engine.
 * SNAPSHOT rows always pass the operations part and meet the predicate as an INSERT would.
 */
import type { TableDef } from '../../core/catalog.js';
import type { CdcStreamFilter } from '../../core/cdc-stream.js';
import type { SqlEngine } from '../../query/index.js';
import { compileFilter, WEBHOOK_OPERATIONS } from '../webhooks/filter.js';
import type { StreamFilter } from './stream-runner.js';

export async function cdcStreamFilter(engine: SqlEngine, tenant: string, table: TableDef, filter: CdcStreamFilter): Promise<StreamFilter> {
  const operations = filter.operations ?? WEBHOOK_OPERATIONS;
  const rows = await compileFilter(
    { engine, tenant },
    {
      tables: [table],
      // Every operation reaches the row tests; the stream's own list is applied below (SNAPSHOT passes it).
      operations: WEBHOOK_OPERATIONS,
      filter: {
        ...(filter.columns ? { columns: { [table.name]: filter.columns } } : {}),
        ...(filter.predicate !== undefined ? { predicate: filter.predicate } : {}),
      },
    },
  );
  // The operations themselves are checked by compileFilter's rules too.
  await compileFilter({ engine, tenant }, { tables: [table], operations, filter: null });
  return {
    async test(event) {
      const operation = event.event.operation;
      if (operation === 'SNAPSHOT') return rows.test({ ...event, event: { ...event.event, operation: 'INSERT' } });
      return operations.includes(operation) && rows.test(event);
    },
  };
}
