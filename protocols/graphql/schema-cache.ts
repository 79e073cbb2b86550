import Fastify, { type FastifyInstance } from 'fastify';
import mercurius from 'mercurius';
import { buildFederationSchema } from '@mercuriusjs/federation';
import { entitiesOneByOne } from './entities.js';
import type { ExecutionResult, GraphQLScalarType, GraphQLSchema, ValidationRule } from 'graphql';
import { NoSchemaIntrospectionCustomRule } from './graphql-lib.js';
import type { TableDef } from '../../core/catalog.js';
import { complexityRule } from './complexity.js';
import { scopeOf } from './context.js';
import type { SchemaContribution } from './contribution.js';
import { formatError } from './errors.js';
import { DOCUMENT_CACHE_ENTRIES_MAX, LIST_SIZE_DEFAULT, type GraphqlLimits } from './limits.js';
import { buildSchemaModel, tenantDefs, type SchemaModel } from './model.js';
import { mutationSchema } from './mutations/index.js';
import { queryResolvers } from './resolvers.js';
import { querySdl } from './sdl.js';
import { withSubscriptions, type SubscriptionSources } from './live.js';
import { customScalars } from './types.js';

/** What the schema cache reads of the catalog (projections' CatalogState satisfies it). */
export interface GraphqlCatalog {
  tables(): Iterable<{ readonly def: TableDef }>;
}

/** A tenant's built schema: a hidden (never listening) fastify instance with mercurius on it. */
export interface TenantSchema {
  readonly app: FastifyInstance;
  readonly model: SchemaModel;
  /** The table definitions it was built from: the cache key's version (catalog objects are replaced on DDL). */
  readonly defs: readonly TableDef[];
  /** SDL text (before federation), for docs and tests. */
  readonly sdl: string;
  /** The executable schema (mercurius's): Query, Mutation and, with change sources, Subscription. */
  readonly schema: GraphQLSchema;
  /** The validation rules mercurius checks beside graphql-js's (the WebSocket side checks them too). */
  readonly rules: readonly ValidationRule[];
}

const sameDefs = (a: readonly TableDef[], b: readonly TableDef[]): boolean => a.length === b.length && a.every((d, i) => d === b[i]);

/** mercurius takes a scalar's functions, not the object. */
function scalarResolvers(): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [name, s] of Object.entries(customScalars()) as [string, GraphQLScalarType][]) {
    out[name] = { serialize: s.serialize, parseValue: s.parseValue, parseLiteral: s.parseLiteral };
  }
  return out;
}

function mergeResolvers(...parts: Record<string, Readonly<Record<string, unknown>>>[]): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const part of parts) for (const [type, fields] of Object.entries(part)) out[type] = { ...(out[type] ?? {}), ...fields };
  return out;
}

/** Every error of an execution result in our shape (extensions.code); status stays 200 (the route decides). */
function errorFormatter(execution: ExecutionResult, context: unknown): { statusCode: number; response: ExecutionResult } {
  const errors = (execution.errors ?? []).map((e) => {
    const formatted = formatError(e);
    if (formatted.extensions.code === 'INTERNAL_ERROR') scopeOf(context).logInternal(e.originalError ?? e);
    return formatted;
  });
  return { statusCode: 200, response: { data: execution.data ?? null, errors: errors as never } };
}

/** Builds one tenant's schema (SDL + resolvers, federated) on a new hidden fastify instance. */
export async function buildTenantSchema(
  tenant: string,
  defs: readonly TableDef[],
  limits: GraphqlLimits,
  sources: Partial<SubscriptionSources>,
): Promise<TenantSchema> {
  const model = buildSchemaModel(tenant, defs);
  const parts: SchemaContribution[] = [{ sdl: querySdl(model), resolvers: queryResolvers(model) }, mutationSchema(model)];
  const sdl = parts
    .map((p) => p.sdl)
    .filter((s) => s !== '')
    .join('\n\n');
  const federated = buildFederationSchema(sdl);
  entitiesOneByOne(federated, model);
  // The Subscription root is built on the query types (not SDL): its fields carry their own subscribe/resolve.
  const schema = sources.feed && sources.watch ? withSubscriptions(model, federated, { ...sources, feed: sources.feed, watch: sources.watch }) : federated;
  const rules = [complexityRule({ complexityMax: limits.graphqlComplexityMax, listSizeDefault: LIST_SIZE_DEFAULT })];
  if (!limits.graphqlIntrospection) rules.push(NoSchemaIntrospectionCustomRule as never);
  const app = Fastify({ logger: false });
  await app.register(mercurius, {
    schema,
    resolvers: mergeResolvers(scalarResolvers(), ...parts.map((p) => p.resolvers as Record<string, Record<string, unknown>>)) as never,
    routes: false,
    graphiql: false,
    // No JIT: graphql-jit compiles an operation's variable coercion on its second use, and for a
    // `<t>_bool_exp` variable that took 7-11 s of blocked event loop (a one-request DoS).
    jit: 0,
    cache: DOCUMENT_CACHE_ENTRIES_MAX,
    queryDepth: limits.graphqlDepthMax,
    validationRules: rules,
    errorFormatter: errorFormatter as never,
  });
  await app.ready();
  return { app, model, defs, sdl, schema: app.graphql.schema, rules };
}

/**
 * Tenant schemas, built on first use and rebuilt when the tenant's catalog changed (a DDL puts
 * new TableDef objects, so comparing identities is exact), least recently used dropped past the limit.
 */
export class TenantSchemas {
  private readonly entries = new Map<string, Promise<TenantSchema>>();

  constructor(
    private readonly catalog: GraphqlCatalog,
    private readonly limits: GraphqlLimits,
    /** The change feed and table watch of subscriptions (without them, the schemas have no Subscription root). */
    private readonly sources: Partial<SubscriptionSources> = {},
  ) {}

  /** The tenant's schema for the catalog as it is now. */
  async get(tenant: string): Promise<TenantSchema> {
    const defs = tenantDefs(this.catalog, tenant);
    const cached = this.entries.get(tenant);
    if (cached) {
      const built = await cached;
      if (sameDefs(built.defs, defs)) {
        this.entries.delete(tenant);
        this.entries.set(tenant, cached);
        return built;
      }
      if (this.entries.get(tenant) === cached) this.drop(tenant, cached);
    }
    // A concurrent request for the same version shares this build.
    const again = this.entries.get(tenant);
    if (again) return again;
    const building = buildTenantSchema(tenant, defs, this.limits, this.sources);
    this.entries.set(tenant, building);
    building.catch(() => this.entries.get(tenant) === building && this.entries.delete(tenant));
    while (this.entries.size > this.limits.graphqlSchemaCacheEntriesMax) {
      const oldest = this.entries.keys().next().value as string;
      this.drop(oldest, this.entries.get(oldest)!);
    }
    return building;
  }

  /** Closes every built instance. */
  async close(): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.allSettled(all.map(async (p) => (await p).app.close()));
  }

  private drop(tenant: string, entry: Promise<TenantSchema>): void {
    void entry;
    // Not closed: a hidden instance never listens and holds no handles, and requests still
    // running on it must finish; the garbage collector frees it.
    this.entries.delete(tenant);
  }
}
