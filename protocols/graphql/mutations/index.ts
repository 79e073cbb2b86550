import { EMPTY_CONTRIBUTION, type SchemaContribution } from '../contribution.js';
import type { SchemaModel } from '../model.js';

/**
 * The mutation part of a tenant's schema (insert_/update_/delete_<table>…): none yet. The
 * schema builder calls this for every tenant schema; what it returns is added to the query part.
 * Shared helpers for it: model.ts (tables, names), where.ts (compileWhere), types.ts (scalars),
 * selection.ts (returning rows: neededColumns/selectList), sql-params.ts, context.ts (scopeOf).
 */
export function mutationSchema(model: SchemaModel): SchemaContribution {
  void model;
  return EMPTY_CONTRIBUTION;
}
