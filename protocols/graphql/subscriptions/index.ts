/**
 * The Subscription root of a tenant's GraphQL schema: per table a live query `<table>` and a
 * change stream `<table>_events`. The schema builder (protocols/graphql) describes its tables in
 * a SubscriptionModel; the sources come from the injected ChangeFeed and TableWatch.
 */
import type { GraphQLFieldConfigArgumentMap, GraphQLFieldConfigMap, GraphQLOutputType, GraphQLResolveInfo, GraphQLScalarType } from 'graphql';
import { GraphQLEnumType, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLString } from '../graphql-lib.js';
import { FEED_OPERATIONS, type ChangeFeed, type FeedOperation, type TableWatch } from '../../../core/change-feed.js';
import { SvcError } from '../../../core/errors.js';
import { eventsSource, liveQuery, resolveSubscriptionValue, type SourceCounter } from './sources.js';

export { abortable, eventsSource, liveQuery, resolveSubscriptionValue, SourceCounter, SubscriptionFailure } from './sources.js';
export type { EventsRequest, LiveQueryRequest } from './sources.js';
export { LiveResult, subscribeOperation } from './run.js';

/** One table as the subscriptions see it. */
export interface SubscriptionTable {
  readonly tableId: number;
  /** The SQL name (`name` or `schema.name`) the change feed looks up. */
  readonly table: string;
  /** The live query's field; the change stream is `<fieldName>_events`. */
  readonly fieldName: string;
  /** The live query's type: the query field's (e.g. `[users!]!`). */
  readonly type: GraphQLOutputType;
  /** The live query's arguments: the query field's (where, order_by, limit, offset). */
  readonly args: GraphQLFieldConfigArgumentMap;
  /**
   * Ids of every table this live query reads (itself, and the related tables its selection,
   * where and order_by reach): a commit to one re-runs it.
   */
  readsTableIds(args: Record<string, unknown>, info: GraphQLResolveInfo): readonly number[];
  /**
   * The query field's complete value for these arguments, everything the selection in `info`
   * reads included (a live query sends a result only when this value changed).
   */
  evaluate(args: Record<string, unknown>, context: unknown, info: GraphQLResolveInfo, signal: AbortSignal): Promise<unknown>;
}

export interface SubscriptionModel {
  readonly tables: readonly SubscriptionTable[];
}

export interface SubscriptionDeps {
  readonly feed: ChangeFeed;
  readonly watch: TableWatch;
  /** The schema's JSON scalar (key, value, old_value). */
  readonly json: GraphQLScalarType;
  /** The schema's 64-bit integer scalar (sequence, from_sequence: sequences pass 2^31). */
  readonly bigint: GraphQLScalarType;
  /** The tenant of an operation's context. */
  tenantOf(context: unknown): string;
  readonly counter?: SourceCounter;
}

/** Names of the types subscriptionSchema adds (no table's GraphQL names may take them: model.ts reserves them). */
export const SUBSCRIPTION_TYPE_NAMES = ['Subscription', 'svcdb_change_event', 'svcdb_change_operation'] as const;

/** The Subscription type of a tenant's schema, or null when it has no table. */
export function subscriptionSchema(model: SubscriptionModel, deps: SubscriptionDeps): GraphQLObjectType | null {
  if (model.tables.length === 0) return null;
  const operation = new GraphQLEnumType({
    name: 'svcdb_change_operation',
    values: Object.fromEntries(FEED_OPERATIONS.map((op) => [op, { value: op }])),
  });
  const event = new GraphQLObjectType({
    name: 'svcdb_change_event',
    description: 'One committed change of a table (as CDC and webhooks deliver it)',
    fields: {
      event_id: { type: new GraphQLNonNull(GraphQLString) },
      sequence: {
        type: new GraphQLNonNull(deps.bigint),
        description: 'Server-wide, increasing in commit order; pass the last one seen as from_sequence to resume',
      },
      operation: { type: new GraphQLNonNull(operation) },
      timestamp: { type: new GraphQLNonNull(GraphQLString) },
      key: { type: deps.json },
      value: { type: deps.json },
      old_value: { type: deps.json },
      transaction_id: { type: new GraphQLNonNull(GraphQLString) },
    },
  });
  const fields: GraphQLFieldConfigMap<unknown, unknown> = {};
  for (const table of model.tables) {
    fields[table.fieldName] = {
      type: table.type,
      args: table.args,
      description: `Live query: the current result, then a new one after each commit that changes it`,
      subscribe: (_root, args: Record<string, unknown>, context, info) =>
        liveQuery(deps.watch, { tables: table.readsTableIds(args, info), evaluate: (signal) => table.evaluate(args, context, info, signal) }, deps.counter),
      resolve: resolveSubscriptionValue,
    };
    fields[`${table.fieldName}_events`] = {
      type: new GraphQLNonNull(event),
      args: {
        operations: { type: new GraphQLList(new GraphQLNonNull(operation)), description: 'Default: every operation' },
        from_sequence: { type: deps.bigint, description: 'Send the events after this sequence (a reconnect passes its last one); default: from now on' },
      },
      subscribe: (_root, args: { operations?: FeedOperation[] | null; from_sequence?: unknown }, context) =>
        eventsSource(
          deps.feed,
          {
            tenant: deps.tenantOf(context),
            table: table.table,
            operations: args.operations ?? FEED_OPERATIONS,
            fromSequence: sequenceArg(args.from_sequence),
          },
          deps.counter,
        ),
      resolve: resolveSubscriptionValue,
    };
  }
  return new GraphQLObjectType({ name: 'Subscription', fields });
}

/** from_sequence as the scalar parsed it (a string, number or bigint). */
function sequenceArg(value: unknown): bigint | null {
  if (value === null || value === undefined) return null;
  const text = String(value);
  if (!/^\d{1,20}$/.test(text)) throw new SvcError('VALIDATION_ERROR', `from_sequence must be a non-negative integer, not ${text}`, { from_sequence: text });
  return BigInt(text);
}
