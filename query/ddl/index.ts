import { SvcError } from '../../core/errors.js';
import type { ParsedStatement } from '../parse/index.js';
import type { QueryResult } from '../result.js';
import { alterTable } from './alter.js';
import { createIndex } from './create-index.js';
import { createTable } from './create-table.js';
import type { DdlDeps } from './deps.js';
import { dropIndex, dropTables, truncate } from './drop.js';
import { refreshMatview } from './matview.js';
import { createView } from './view.js';

export type { DdlDeps } from './deps.js';

/** Runs a DDL statement: each is one catalog record in the log (or nothing when it changes nothing). */
export function executeDdl(statement: ParsedStatement, deps: DdlDeps): Promise<QueryResult> {
  const { body } = statement;
  switch (body.kind) {
    case 'create_table':
      return createTable(body, deps);
    case 'create_index':
      return createIndex(body, deps);
    case 'create_view':
      return createView(body, deps);
    case 'refresh_matview':
      return refreshMatview(body, deps);
    case 'alter_table':
      return alterTable(body, deps);
    case 'drop':
      if (body.object === 'table' || body.object === 'view' || body.object === 'materialized_view') return dropTables(body, deps, body.object);
      if (body.object === 'index') return dropIndex(body, deps);
      return Promise.reject(unsupported(`DROP ${body.object.replaceAll('_', ' ').toUpperCase()}`));
    case 'truncate':
      return truncate(body, deps);
    default:
      return Promise.reject(unsupported(body.kind.replaceAll('_', ' ').toUpperCase()));
  }
}

function unsupported(name: string): SvcError {
  return new SvcError('INVALID_QUERY', `${name} is not supported`, { statement: name, reason: 'unsupported' });
}
