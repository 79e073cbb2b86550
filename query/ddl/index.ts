import { SvcError } from '../../core/errors.js';
import type { ParsedStatement } from '../parse/index.js';
import type { QueryResult } from '../result.js';
import { alterTable, renameColumn } from './alter.js';
import { createIndex } from './create-index.js';
import { createTable } from './create-table.js';
import type { DdlDeps } from './deps.js';
import { dropIndex, dropTables, truncate } from './drop.js';
import { createView } from './view.js';

export type { DdlDeps } from './deps.js';

/** Runs a DDL statement: each is one catalog record in the log (or nothing when it changes nothing). */
export function executeDdl(statement: ParsedStatement, deps: DdlDeps): Promise<QueryResult> {
  if (statement.custom?.kind === 'rename_column') return renameColumn(statement.custom, deps);
  const ast = statement.ast!;
  const keyword = String(ast.keyword ?? '').toLowerCase();
  switch (ast.type) {
    case 'create':
      if (keyword === 'table') return createTable(ast, deps);
      if (keyword === 'index') return createIndex(ast, deps);
      if (keyword === 'view') return createView(ast, deps);
      break;
    case 'alter':
      if (keyword === 'table') return alterTable(ast, deps);
      break;
    case 'drop':
      if (keyword === 'table' || keyword === 'view') return dropTables(ast, deps, keyword);
      if (keyword === 'index') return dropIndex(ast, deps);
      break;
    case 'truncate':
      return truncate(ast, deps);
  }
  return Promise.reject(
    new SvcError('INVALID_QUERY', `unsupported statement: ${String(ast.type).toUpperCase()} ${keyword.toUpperCase()}`.trim(), { statement: ast.type }),
  );
}
