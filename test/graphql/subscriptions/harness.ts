/**
 * A real svcdb stack (log, LevelDB, projections, SQL engine, auth) with the GraphQL WebSocket
 * transport registered on the API listener as the composition root will wire it, and a small
 * hand-written schema whose Subscription root is subscriptionSchema()'s. Also the clients: a
 * graphql-ws client and a raw `ws` socket for the legacy protocol.
 */
import { createRequire } from 'node:module';
import type { GraphQLSchema as GraphQLSchemaType } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import { pino } from 'pino';
import { resolveConfig, type Config } from '../../../core/config.js';
import type { Logger } from '../../../core/logger.js';
import { loadAdminKey, openAuth, createHttpServer, listen, type AuthGate, type Principal } from '../../../protocols/index.js';
import { subscriptionSchema, SourceCounter, type SubscriptionTable } from '../../../protocols/graphql/subscriptions/index.js';
import { GRAPHQL_WS_DEFAULTS, type GraphqlWsLimits } from '../../../protocols/graphql/ws/limits.js';
import { graphqlWebSocket, type GraphqlWs } from '../../../protocols/graphql/ws/plugin.js';
import { SqlEngine, typeSystem } from '../../../query/index.js';
import { createChangeFeed, type ProjectionChangeFeed } from '../../../sinks/events/change-feed.js';
import type { ProjectionTableWatch } from '../../../sinks/events/table-watch.js';
import { FakeEngineStatus } from '../../protocols/helpers.js';
import { openStack, tempDir, type Stack } from '../../helpers/stack.js';

// graphql-js as CommonJS, the copy protocols/graphql (graphql-lib.ts) and mercurius use: one schema mixes no two copies.
const { GraphQLBoolean, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLScalarType, GraphQLSchema, GraphQLString, Kind } = createRequire(
  import.meta.url,
)('graphql') as typeof import('graphql');

export const ADMIN_KEY = 'test-key';

/** The `ws` client class (the package ships no types; what the tests use of it). */
export interface WsSocket {
  readonly protocol: string;
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  on(event: 'message', listener: (data: Buffer) => void): this;
  on(event: 'close', listener: (code: number, reason: Buffer) => void): this;
  on(event: 'open' | 'error' | 'unexpected-response', listener: (...args: any[]) => void): this;
  pause(): void;
}
export const WebSocket = createRequire(import.meta.url)('ws') as {
  new (url: string, protocols?: string | string[], options?: { headers?: Record<string, string> }): WsSocket;
  readonly OPEN: number;
};

export interface Harness {
  readonly stack: Stack;
  readonly engine: SqlEngine;
  readonly gate: AuthGate;
  readonly ws: GraphqlWs;
  readonly feed: ProjectionChangeFeed;
  readonly watch: ProjectionTableWatch;
  readonly sources: SourceCounter;
  readonly url: string;
  readonly wsUrl: string;
  readonly dataDir: string;
  /** Runs SQL in the default tenant (in process). */
  sql(text: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  /** A graphql-ws client on /graphql (admin key unless told). */
  client(connectionParams?: Record<string, unknown> | (() => Record<string, unknown>)): Client;
  close(): Promise<void>;
}

const JsonScalar = new GraphQLScalarType({ name: 'JSON', serialize: (v) => v, parseValue: (v) => v });
const BigIntScalar = new GraphQLScalarType({
  name: 'BigInt',
  serialize: (v) => String(v),
  parseValue: (v) => String(v),
  parseLiteral: (ast) => (ast.kind === Kind.INT || ast.kind === Kind.STRING ? ast.value : null),
});

/** The hand-written schema of a principal: every table of its tenant, live as `<name>(limit)`, and `<name>_events`. */
function schemaFor(
  harness: { engine: SqlEngine; stack: Stack; feed: ProjectionChangeFeed; watch: ProjectionTableWatch; sources: SourceCounter },
  principal: Principal,
): GraphQLSchemaType {
  const tables: SubscriptionTable[] = [];
  for (const entry of harness.stack.projections.catalog.tables()) {
    const def = entry.def;
    if (def.tenant !== principal.tenant || def.kind !== 'table') continue;
    tables.push({
      tableId: def.id,
      table: def.name,
      fieldName: def.name,
      type: new GraphQLList(JsonScalar),
      args: { limit: { type: GraphQLInt } },
      readsTableIds: () => [def.id],
      evaluate: async (args) => {
        const limit = typeof args['limit'] === 'number' ? ` LIMIT ${args['limit']}` : '';
        const result = await harness.engine.execute(`SELECT * FROM "${def.name}" ORDER BY 1${limit}`, {
          tenant: principal.tenant,
          timeoutMs: 10_000,
          maxRows: 10_000,
        });
        return result.rows;
      },
    });
  }
  const subscription = subscriptionSchema(
    { tables },
    {
      feed: harness.feed,
      watch: harness.watch,
      json: JsonScalar,
      bigint: BigIntScalar,
      counter: harness.sources,
      tenantOf: (context) => (context as { principal: Principal }).principal.tenant,
    },
  );
  const query = new GraphQLObjectType({
    name: 'query_root',
    fields: {
      whoami: { type: new GraphQLNonNull(GraphQLString), resolve: (_r, _a, ctx: { principal: Principal }) => `${ctx.principal.role}@${ctx.principal.tenant}` },
    },
  });
  const mutation = new GraphQLObjectType({
    name: 'mutation_root',
    fields: { noop: { type: GraphQLBoolean, resolve: () => true } },
  });
  return new GraphQLSchema({ query, mutation, ...(subscription ? { subscription } : {}) });
}

export async function startHarness(
  options: { limits?: Partial<GraphqlWsLimits>; feedsMax?: number; env?: Record<string, string>; stack?: Parameters<typeof openStack>[1] } = {},
): Promise<Harness> {
  const dir = await tempDir('svcdb-gql-subs-');
  const stack = await openStack(dir.dir, options.stack);
  const config: Config = resolveConfig({ env: { SVC_DATA_DIR: dir.dir, SVC_HOST: '127.0.0.1', SVC_HTTP_PORT: '0', SVC_API_KEY: ADMIN_KEY, ...options.env } });
  const logger = pino({ level: process.env['GQL_TEST_LOG'] ?? 'silent' });
  const engine = new SqlEngine({ projections: stack.projections, types: typeSystem, logger: logger as unknown as Logger });
  const gate = await openAuth({ dataDir: dir.dir, adminKey: await loadAdminKey(dir.dir, ADMIN_KEY), settings: config, logger: logger as unknown as Logger });
  const { feed, watch } = createChangeFeed(stack.projections, { feedsMax: options.feedsMax ?? 10_000, batchEventsMax: 500, readBatchBytesMax: 1024 * 1024 });
  const sources = new SourceCounter();
  const parts = { engine, stack, feed, watch, sources };
  const ws = graphqlWebSocket({
    gate,
    resolveSchema: async (principal) => ({ schema: schemaFor(parts, principal), contextValue: { principal } }),
    limits: { ...GRAPHQL_WS_DEFAULTS, ...options.limits },
    logger: logger as unknown as Logger,
  });
  const app = createHttpServer({ config, logger, status: new FakeEngineStatus(), plugins: [], rootPlugins: [ws.plugin], rateLimit: gate });
  const url = await listen(app, { host: '127.0.0.1', port: 0, settingName: 'SVC_HTTP_PORT' });
  const wsUrl = `${url.replace(/^http/, 'ws').replace(/\/$/, '')}/graphql`;
  const clients: Client[] = [];
  let closing: Promise<void> | null = null;
  return {
    ...parts,
    gate,
    ws,
    url,
    wsUrl,
    dataDir: dir.dir,
    async sql(text, params = []) {
      return (await engine.execute(text, { tenant: 'default', params, timeoutMs: 30_000, maxRows: 100_000 })).rows;
    },
    client(connectionParams = { Authorization: `Bearer ${ADMIN_KEY}` }) {
      const client = createClient({ url: wsUrl, webSocketImpl: WebSocket, connectionParams, retryAttempts: 0, lazy: true });
      clients.push(client);
      return client;
    },
    close() {
      closing ??= (async () => {
        await Promise.all(clients.map(async (c) => c.dispose()));
        // The composition root's order: listeners first (their connections end), then the feeds, then the projections.
        await app.close();
        feed.close();
        watch.close();
        await stack.close();
        await dir.remove();
      })();
      return closing;
    },
  };
}

/** Collects a graphql-ws subscription's results (and its end). */
export function subscribe(client: Client, query: string, variables: Record<string, unknown> = {}): Subscription {
  const results: any[] = [];
  const waiters = new Set<() => void>();
  const state: Subscription = {
    results,
    errors: [],
    completed: false,
    stop: () => undefined,
    async until(check, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!check(state)) {
        if (Date.now() > deadline || state.completed)
          throw new Error(
            `subscription condition not met in ${timeoutMs} ms: ${JSON.stringify({ results: results.slice(-3), errors: state.errors, completed: state.completed })}`,
          );
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 100);
          waiters.add(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
  };
  const wake = (): void => {
    for (const w of waiters) w();
    waiters.clear();
  };
  state.stop = client.subscribe(
    { query, variables },
    {
      next: (value) => {
        results.push(value);
        wake();
      },
      error: (error) => {
        state.errors.push(error);
        state.completed = true;
        wake();
      },
      complete: () => {
        state.completed = true;
        wake();
      },
    },
  );
  return state;
}

export interface Subscription {
  readonly results: any[];
  readonly errors: unknown[];
  completed: boolean;
  stop: () => void;
  until(check: (s: Subscription) => boolean, timeoutMs?: number): Promise<void>;
}

/** Waits until `check` holds (polling every 20 ms). */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
