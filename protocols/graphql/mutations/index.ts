import { EMPTY_CONTRIBUTION, type SchemaContribution } from '../contribution.js';
import type { RequestScope } from '../context.js';
import type { SchemaModel } from '../model.js';
import { tableMutationResolvers } from './resolvers.js';
import { mutationSdl, mutationTables } from './sdl.js';
import type { ExecutionBody } from './transaction.js';

export { mutationTransactions, RequestTransaction, type MutationTransactions, type StatementOptions } from './transaction.js';

/**
 * The mutation part of a tenant's schema (docs/graphql.md, "Mutations"): insert_/update_/delete_
 * <table> with Hasura's names, arguments and semantics, for every table (views take no writes).
 */
export function mutationSchema(model: SchemaModel): SchemaContribution {
  const tables = mutationTables(model);
  if (tables.length === 0) return EMPTY_CONTRIBUTION;
  const mutation: Record<string, unknown> = {};
  for (const m of tables) Object.assign(mutation, tableMutationResolvers(m));
  return { sdl: mutationSdl(tables), resolvers: { Mutation: mutation } };
}

/** After execution: commits the request's mutations, or rolls them back and nulls `data` (transaction.ts). */
export function settleMutations<T extends ExecutionBody>(scope: RequestScope, result: T): Promise<T | { data: null; errors: unknown[] }> {
  return scope.transaction ? scope.transaction.settle(result) : Promise.resolve(result);
}
