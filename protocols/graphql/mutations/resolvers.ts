import type { GraphQLResolveInfo } from 'graphql';
import { SvcError } from '../../../core/errors.js';
import type { QueryResult } from '../../../query/index.js';
import { scopeOf, type RequestScope } from '../context.js';
import type { ColumnModel, TableModel } from '../model.js';
import { neededColumns, selectedFields, selectedUnder } from '../selection.js';
import type { BoolExp } from '../where.js';
import type { MutationTable } from './sdl.js';
import { deleteStatement, insertStatement, primaryKeyWhere, updateStatement, type Changes, type OnConflict, type Statement } from './statements.js';
import type { RequestTransaction } from './transaction.js';

type Row = Record<string, unknown>;
type Args = Record<string, unknown>;
type Resolver = (parent: unknown, args: Args, context: unknown, info: GraphQLResolveInfo) => Promise<unknown>;
type Body = (args: Args, info: GraphQLResolveInfo, write: (statement: Statement) => Promise<QueryResult>) => Promise<unknown>;

/** The request's transaction; a transport that brings none cannot run mutations (never run them outside one). */
function transactionOf(scope: RequestScope): RequestTransaction {
  if (!scope.transaction) throw new SvcError('INVALID_QUERY', 'mutations are served by POST /graphql', { reason: 'graphql_mutation_transport' });
  return scope.transaction;
}

/**
 * A Mutation field: refused for read_only (AUTHORIZATION_DENIED, before any SQL; the engine would
 * refuse the write too), skipped after an earlier field failed, its statement run in the
 * request's transaction, and its failure recorded so the whole request rolls back.
 */
function mutationField(body: Body): Resolver {
  return async (_parent, args, context, info) => {
    const scope = scopeOf(context);
    const txn = transactionOf(scope);
    txn.enter();
    try {
      if (scope.role === 'read_only') throw new SvcError('AUTHORIZATION_DENIED', 'the read_only role may not run mutations', { role: 'read_only' });
      return await body(args, info, async (statement) => {
        const result = await txn.run(statement.sql, statement.params);
        if (result.truncated) scope.truncated = true;
        return result;
      });
    } catch (error) {
      txn.fail(error);
      throw error;
    }
  };
}

/** The columns RETURNING must give for `returning { … }`, or null when it is not asked for. */
function responseColumns(table: TableModel, info: GraphQLResolveInfo): ColumnModel[] | null {
  if (!selectedFields(info).some((f) => f.name.value === 'returning')) return null;
  return neededColumns(table, selectedUnder(info, 'returning'));
}

/** The columns RETURNING must give for a field that returns one row (`_one`, `_by_pk`). */
const rowColumns = (table: TableModel, info: GraphQLResolveInfo): ColumnModel[] => neededColumns(table, selectedFields(info));

/** `{ affected_rows, returning }` of a statement. */
function response(result: QueryResult): { affected_rows: number; returning: Row[] } {
  return { affected_rows: result.affectedRows ?? result.rowCount, returning: result.rows };
}

/** The Mutation resolvers of one writable table. */
export function tableMutationResolvers(m: MutationTable): Record<string, Resolver> {
  const { table } = m;
  const b = table.base;
  const out: Record<string, Resolver> = {
    // An empty objects list inserts nothing, as in Hasura (SQL has no zero-row VALUES).
    [`insert_${b}`]: mutationField(async (args, info, write) =>
      (args.objects as Row[]).length === 0
        ? { affected_rows: 0, returning: [] }
        : response(await write(insertStatement(m, args.objects as Row[], args.on_conflict as OnConflict | undefined, responseColumns(table, info)))),
    ),
    [`insert_${b}_one`]: mutationField(
      async (args, info, write) =>
        (await write(insertStatement(m, [args.object as Row], args.on_conflict as OnConflict | undefined, rowColumns(table, info)))).rows[0] ?? null,
    ),
    [`update_${b}`]: mutationField(async (args, info, write) =>
      response(await write(updateStatement(table, args.where as BoolExp, args as Changes, responseColumns(table, info)))),
    ),
    [`delete_${b}`]: mutationField(async (args, info, write) =>
      response(await write(deleteStatement(table, args.where as BoolExp, responseColumns(table, info)))),
    ),
  };
  if (table.primaryKey.length) {
    out[`update_${b}_by_pk`] = mutationField(
      async (args, info, write) =>
        (await write(updateStatement(table, primaryKeyWhere(table, args.pk_columns as Row), args as Changes, rowColumns(table, info)))).rows[0] ?? null,
    );
    out[`delete_${b}_by_pk`] = mutationField(
      async (args, info, write) => (await write(deleteStatement(table, primaryKeyWhere(table, args), rowColumns(table, info)))).rows[0] ?? null,
    );
  }
  return out;
}
