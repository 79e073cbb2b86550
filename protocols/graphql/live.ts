/**
 * The Subscription root of a tenant's schema over its query schema: per table the live query
 * `<table>` (the query field's type and arguments) and the change stream `<table>_events`
 * (subscriptions/index.ts). A live query evaluates its whole selection, related tables included,
 * as the same operation sent as a query, and re-runs after a commit to any table it reads.
 */
import type {
  DocumentNode,
  FieldNode,
  GraphQLArgument,
  GraphQLFieldConfigArgumentMap,
  GraphQLResolveInfo,
  GraphQLScalarType,
  OperationDefinitionNode,
} from 'graphql';
import type { ChangeFeed, TableWatch } from '../../core/change-feed.js';
import { isSvcError, SvcError } from '../../core/errors.js';
import type { GraphqlContext, RequestScope } from './context.js';
import { execute, GraphQLSchema, Kind, print, valueFromASTUntyped } from './graphql-lib.js';
import type { SchemaModel, TableModel } from './model.js';
import { subFields } from './selection.js';
import { SharedEvaluations } from './shared-evaluations.js';
import { LiveResult, subscriptionSchema, type SourceCounter, type SubscriptionTable } from './subscriptions/index.js';

/** What the Subscription root reads from the server (the composition root passes sinks/'s feed and watch). */
export interface SubscriptionSources {
  readonly feed: ChangeFeed;
  readonly watch: TableWatch;
  readonly counter?: SourceCounter;
}

type Args = Record<string, unknown>;

function argsConfig(args: readonly GraphQLArgument[]): GraphQLFieldConfigArgumentMap {
  return Object.fromEntries(args.map((a) => [a.name, { type: a.type, defaultValue: a.defaultValue, description: a.description, astNode: a.astNode }]));
}

/** The schema with a Subscription root added (the same type objects: the query's resolvers stay on them). */
export function withSubscriptions(model: SchemaModel, schema: GraphQLSchema, sources: SubscriptionSources): GraphQLSchema {
  const query = schema.getQueryType()!.getFields();
  // One schema per tenant and catalog version: identical live queries on it share evaluations.
  const shared = new SharedEvaluations<LiveResult>();
  const tenantTableIds = model.tables.map((t) => t.def.id);
  const tables: SubscriptionTable[] = model.tables.map((table) => ({
    tableId: table.def.id,
    // Qualified, so a table whose name holds a dot is found (the feed splits at the first dot).
    table: `${table.def.schema}.${table.def.name}`,
    fieldName: table.base,
    type: query[table.base]!.type,
    args: argsConfig(query[table.base]!.args),
    readsTableIds: (args, info) => tablesRead(model, table, args, info),
    evaluate: (_args, context, info, signal) =>
      shared.run(evaluationKey(context, info), sources.watch.mark(tenantTableIds), signal, (own) => evaluateLive(context, info, own)),
  }));
  const subscription = subscriptionSchema(
    { tables },
    {
      feed: sources.feed,
      watch: sources.watch,
      json: schema.getType('jsonb') as GraphQLScalarType,
      bigint: schema.getType('bigint') as GraphQLScalarType,
      tenantOf: (context) => (context as GraphqlContext).svc.tenant,
      ...(sources.counter ? { counter: sources.counter } : {}),
    },
  );
  return subscription ? new GraphQLSchema({ ...schema.toConfig(), subscription }) : schema;
}

const printed = new WeakMap<object, string>();

/** What makes two live queries the same evaluation: tenant, role, the operation with its fragments, the variables. */
function evaluationKey(context: unknown, info: GraphQLResolveInfo): string {
  const scope = (context as GraphqlContext).svc;
  let text = printed.get(info.operation);
  if (text === undefined) {
    text = [info.operation, ...Object.values(info.fragments)].map((node) => print(node)).join('\n');
    printed.set(info.operation, text);
  }
  const field = info.fieldNodes[0]!.alias?.value ?? info.fieldName;
  return JSON.stringify([scope.tenant, scope.role, field, text, info.variableValues], (_key, value: unknown) =>
    typeof value === 'bigint' ? `${value}n` : value,
  );
}

/**
 * One evaluation: the subscription's operation run as a query (the Query root has the same field
 * and arguments), in a new request scope (its own deadline and batched loads). A failure of the
 * whole field (a dropped table) ends the stream with its error; a nested field's error is sent.
 */
async function evaluateLive(context: unknown, info: GraphQLResolveInfo, signal: AbortSignal): Promise<LiveResult> {
  const own = context as GraphqlContext;
  // The stream's signal: an unsubscribe aborts the evaluation's statements.
  const scope: RequestScope = own.renew ? own.renew(signal) : own.svc;
  const operation: OperationDefinitionNode = { ...info.operation, operation: 'query' as OperationDefinitionNode['operation'] };
  const document: DocumentNode = { kind: Kind.DOCUMENT, definitions: [operation, ...Object.values(info.fragments)] };
  // The variables are already coerced; coercing them again gives the same values (our scalars' parseValue is idempotent).
  const result = await execute({ schema: info.schema, document, variableValues: info.variableValues, contextValue: { svc: scope } });
  const key = info.fieldNodes[0]!.alias?.value ?? info.fieldName;
  const first = result.errors?.[0];
  if (first && (result.data == null || result.data[key] == null)) {
    const original = first.originalError;
    if (isSvcError(original)) throw original;
    throw original ? new SvcError('INTERNAL_ERROR', 'internal error', {}, original) : new SvcError('INVALID_QUERY', first.message, {});
  }
  return new LiveResult(result);
}

/**
 * Ids of every table a live query reads: its table, the tables of the relations it selects
 * (`_aggregate` included), and those its where and order_by reach, at every level. A view reads
 * tables its definition names: every table of the tenant is watched then (over-approximating
 * costs an evaluation, never a missed change).
 */
export function tablesRead(model: SchemaModel, root: TableModel, args: Args, info: GraphQLResolveInfo): number[] {
  const ids = new Set<number>();
  const variables = info.variableValues;
  const visit = (table: TableModel, fields: readonly FieldNode[], fieldArgs: Args): void => {
    ids.add(table.def.id);
    conditionTables(table, fieldArgs['where'], ids);
    orderTables(table, fieldArgs['order_by'], ids);
    for (const field of fields) {
      const name = field.name.value;
      const relation = table.relationByField.get(name) ?? table.relations.find((r) => r.aggregateField === name);
      if (!relation) continue;
      const nested: Args = Object.fromEntries((field.arguments ?? []).map((a) => [a.name.value, valueFromASTUntyped(a.value, variables)]));
      const children = subFields([field.selectionSet], info.fragments);
      const rows =
        relation.field === name
          ? children
          : subFields(
              children.filter((c) => c.name.value === 'nodes').map((c) => c.selectionSet),
              info.fragments,
            );
      visit(relation.target, rows, nested);
    }
  };
  visit(
    root,
    subFields(
      info.fieldNodes.map((n) => n.selectionSet),
      info.fragments,
    ),
    args,
  );
  if (model.tables.some((t) => ids.has(t.def.id) && t.def.kind !== 'table')) for (const t of model.tables) ids.add(t.def.id);
  return [...ids];
}

/** Tables a `where` reaches through relations (`{posts: {title: {_eq: …}}}`). */
function conditionTables(table: TableModel, where: unknown, ids: Set<number>): void {
  if (typeof where !== 'object' || where === null) return;
  for (const [key, value] of Object.entries(where)) {
    if (key === '_and' || key === '_or') for (const item of Array.isArray(value) ? value : [value]) conditionTables(table, item, ids);
    else if (key === '_not') conditionTables(table, value, ids);
    else {
      const relation = table.relationByField.get(key);
      if (!relation) continue;
      ids.add(relation.target.def.id);
      conditionTables(relation.target, value, ids);
    }
  }
}

/** Tables an `order_by` reaches through object relations. */
function orderTables(table: TableModel, orderBy: unknown, ids: Set<number>): void {
  for (const item of Array.isArray(orderBy) ? orderBy : [orderBy]) {
    if (typeof item !== 'object' || item === null) continue;
    for (const [key, value] of Object.entries(item)) {
      const relation = table.relationByField.get(key);
      if (!relation) continue;
      ids.add(relation.target.def.id);
      orderTables(relation.target, value, ids);
    }
  }
}
