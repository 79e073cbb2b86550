/**
 * The composition root: the one module that builds the parts and connects them. No logic here
 * beyond the order things open and close in.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { Logger as PinoLogger } from 'pino';
import type { Config } from '../core/config.js';
import { dataDirModePolicy } from '../core/file-modes.js';
import type { Logger } from '../core/logger.js';
import { inspectLogDir, openLog, repairLog, type Log, type LogOptions } from '../log/index.js';
import {
  checkpointLsn,
  openStateStore,
  prepareDataDir,
  Projections,
  rebuildProjections,
  scanDataDirModes,
  TablesProjection,
  VECTORS_CONSUMER,
  type DataDirLayout,
  type StateStore,
} from '../projections/index.js';
import {
  API_PREFIX,
  AsyncQueries,
  asyncQueryRoutes,
  createHttpServer,
  createOpsServer,
  explainRoutes,
  listen,
  loadAdminKey,
  openAuth,
  queryRoutes,
  settingLabel,
  streamRoutes,
  transactionRoutes,
  withAuth,
  type AuthGate,
  type EngineStatus,
} from '../protocols/index.js';
import { ConnectionLimiter, infoRoutes, loadTlsMaterial, metricsRoutes, ProgressWatch, ServiceMetrics, type MetricsSource } from '../protocols/index.js';
import { countedAsQueries, rowRoutes, rowsRoutes, tablesRoutes } from '../protocols/index.js';
import { cdcRoutes, vectorProtocol, vectorRoutes, webhookRoutes } from '../protocols/index.js';
import { collectionProtocol, pointRoutes, type DirectRoutes } from '../protocols/index.js';
import { graphqlRoutes, graphqlWebSocket, mutationTransactions, TenantSchemas, wsSchemaResolver } from '../protocols/index.js';
import { READ_TIMEOUT_MS_DEFAULT, SqlEngine, TxnManager, typeSystem, type SqlLimits } from '../query/index.js';
import { createCdcStreams, createChangeFeed, createWebhooks, parseCidrList } from '../sinks/index.js';
import type { AppCommands, InspectReport, ReplayProgress, ReplayReport, ServeHandle } from './app-types.js';
import { SVC_VERSION } from '../core/version.js';

/** One sparse-index entry per this many bytes of log segment. */
const LOG_INDEX_INTERVAL_BYTES = 64 * 1024;

function logOptions(config: Config, layout: DataDirLayout, logger: Logger): LogOptions {
  return {
    dir: layout.logDir,
    segmentSizeBytesMax: config.logSegmentSizeBytesMax,
    durability: config.logDurability,
    fsyncIntervalMs: config.logFsyncIntervalMs,
    readBatchBytesMax: config.logReadBatchBytesMax,
    indexIntervalBytes: LOG_INDEX_INTERVAL_BYTES,
    logger: logger.child({ component: 'log' }),
  };
}

interface Storage {
  readonly layout: DataDirLayout;
  readonly store: StateStore;
  readonly log: Log;
}

/** Data dir checks, then the store (its LevelDB lock makes the directory ours), then the log. */
async function openStorage(config: Config, logger: Logger, create: boolean): Promise<Storage> {
  const layout = await prepareDataDir(config.dataDir, { create, mode: config.dataDirMode });
  const store = await openStateStore(layout.stateDir);
  try {
    const log = await openLog(logOptions(config, layout, logger));
    return { layout, store, log };
  } catch (error) {
    await store.close();
    throw error;
  }
}

export async function startServer(config: Config, rootLogger: PinoLogger): Promise<ServeHandle> {
  const logger = rootLogger as unknown as Logger;
  const startedAtMs = Date.now();
  const tls = await loadTlsMaterial(config);
  // A malformed SVC_WEBHOOK_ALLOWED_CIDRS stops the start, before anything is opened.
  parseCidrList(config.webhookAllowedCidrs);
  const { layout, store, log } = await openStorage(config, logger, true);
  const projections = await Projections.open(log, store, {
    readBatchBytesMax: config.logReadBatchBytesMax,
    retentionEnabled: config.logRetentionEnabled,
    logger: logger.child({ component: 'projections' }),
    vectorDir: layout.vectorDir,
  });
  const adminKey = await loadAdminKey(layout.root, config.apiKey);
  const auth = await openAuth({ dataDir: layout.root, adminKey, settings: config, logger: logger.child({ component: 'auth' }) });
  let caughtUp = false;
  const progress = new ProgressWatch(config.projectionStallMs);
  const status: EngineStatus = {
    version: SVC_VERSION,
    startedAtMs,
    isReady: () => caughtUp && projections.healthy,
    storageHealthy: () => projections.healthy && log.healthy,
    storeHealthy: () => store.isOpen() && projections.healthy,
    projectionStalled: (nowMs) => progress.stalled(projections.applied.lsn, log.durableLsn, nowMs),
    replicaCount: 0,
  };
  // Transactions first: the engine runs the statements of transactions in their scope (query/txn/scope.ts).
  const transactions = new TxnManager({ projections, limits: config, logger: logger.child({ component: 'transactions' }) });
  const engine = new SqlEngine({ projections, types: typeSystem, logger: logger.child({ component: 'sql' }), limits: sqlLimitsOf(config), transactions });
  const connections = new ConnectionLimiter(config.connectionsMax);
  const metrics = new ServiceMetrics({ connections, scanCache: () => engine.scanCacheStats(), healthy: status.storageHealthy });
  const asyncQueries = new AsyncQueries({
    engine,
    limits: config,
    logger: logger.child({ component: 'async-queries' }),
    statusPath: (id) => `${API_PREFIX}/query/${id}`,
    metrics,
  });
  const cdc = createCdcStreams(projections, engine, config, logger.child({ component: 'cdc' }));
  engine.useCdcRuntime(cdc);
  const { deliveries: webhookDeliveries, service: webhooks } = createWebhooks(projections, engine, config, logger.child({ component: 'webhooks' }), {
    onAttempt: (id, outcome, ms) => webhookMetrics.observeAttempt(id, outcome, ms),
    onRetry: (id) => webhookMetrics.observeRetry(id),
  });
  const webhookMetrics = metrics.registerEvents(
    () => cdc.metrics(),
    () => webhookDeliveries.metrics(),
  );
  const plugins = [
    queryRoutes({ engine, limits: config, metrics }),
    explainRoutes({ engine, limits: config, metrics }),
    streamRoutes({ engine, limits: config, metrics }),
    asyncQueryRoutes({ queries: asyncQueries, limits: config }),
    transactionRoutes({ transactions, engine, limits: config, metrics }),
    countedAsQueries(metrics, tablesRoutes({ engine, catalog: projections.catalog, limits: config })),
    countedAsQueries(metrics, rowsRoutes({ engine, catalog: projections.catalog, limits: config })),
    countedAsQueries(metrics, rowRoutes({ engine, catalog: projections.catalog, limits: config })),
    infoRoutes({ limits: config }),
    metricsRoutes({ metrics }),
    countedAsQueries(metrics, vectorRoutes({ engine, catalog: projections.catalog, limits: config })),
    cdcRoutes({ catalog: projections.catalog, runtime: cdc }),
    webhookRoutes({ webhooks }),
  ].map((plugin) => withAuth(auth, plugin));
  const vectors = vectorProtocol({ engine, catalog: projections.catalog, limits: config, gate: auth, vectorApiKey: config.vectorApiKey });
  const collections = countedAsQueries(
    metrics,
    collectionProtocol({ engine, catalog: projections.catalog, limits: config, gate: auth, autoCreate: config.collectionsAutoCreate }),
  );
  // GraphQL subscriptions read the log through the change feed (`_events`) and the table watch (live queries).
  const { feed, watch } = createChangeFeed(projections, {
    feedsMax: config.graphqlWsConnectionsMax,
    batchEventsMax: config.cdcBatchEventsMax,
    readBatchBytesMax: config.logReadBatchBytesMax,
  });
  const graphqlSchemas = new TenantSchemas(projections.catalog, config, { feed, watch });
  const graphqlTransactions = mutationTransactions(engine, transactions);
  const graphql = graphqlRoutes({
    engine,
    transactions: graphqlTransactions,
    schemas: graphqlSchemas,
    limits: config,
    gate: auth,
    metrics,
    bodyLimitBytes: config.bodyLimitBytes,
  });
  const graphqlWs = graphqlWebSocket({
    gate: auth,
    resolveSchema: wsSchemaResolver({
      engine,
      transactions: graphqlTransactions,
      schemas: graphqlSchemas,
      limits: config,
      logger: logger.child({ component: 'graphql-ws' }),
    }),
    limits: config,
    logger: logger.child({ component: 'graphql-ws' }),
    // The WebSocket handler joins GET /graphql, which graphqlRoutes declares after it.
    route: 'attach',
  });
  // The point reads answered in front of fastify (protocols/http/direct), counted on /metrics.
  const direct = pointRoutes({ engine, catalog: projections.catalog, limits: config, gate: auth, metrics });
  metrics.registerDirect(
    () => direct.answers,
    () => direct.declines,
  );
  const { http, https, ops, vector } = createListeners({
    config,
    rootLogger,
    status,
    plugins,
    connections,
    metrics,
    tls,
    vectors,
    collections,
    graphql,
    graphqlWs: graphqlWs.plugin,
    rateLimit: auth,
    direct,
  });

  let closing: Promise<void> | null = null;
  const close = (reason: string): Promise<void> => {
    closing ??= (async () => {
      logger.info({ reason }, 'shutting down');
      caughtUp = false;
      // Stop accepting and let in-flight requests (and so their writes) finish, then stop applying
      // and flush the log: every acknowledged write is durable before the process exits.
      await Promise.all([http.close(), https?.close(), ops?.close(), vector?.close(), asyncQueries.close()]);
      await transactions.close();
      await graphqlSchemas.close();
      // The listeners closed their WebSockets (1001); the feeds and waits they held end here.
      feed.close();
      watch.close();
      // Sinks stop after the batch in flight; a broker or receiver that hangs cannot hold the stop
      // (Kafka fencing and the webhook ledger make abandoning a delivery safe).
      await stopWithin(SINK_STOP_TIMEOUT_MS, logger, [cdc.stop(), webhookDeliveries.stop()]);
      await projections.stop();
      await log.close();
      await store.close();
      logger.info({}, 'shut down');
    })();
    return closing;
  };

  try {
    // Listen before catching up, so /live answers and /ready says false while the log is replayed.
    const httpUrl = await listen(http, { host: config.host, port: config.httpPort, settingName: settingLabel('httpPort') });
    const httpsUrl = https ? await listen(https, { host: config.host, port: config.httpsPort, settingName: settingLabel('httpsPort') }) : null;
    const opsUrl = ops ? await listen(ops, { host: config.host, port: config.opsPort, settingName: settingLabel('opsPort') }) : null;
    const vectorUrl = vector ? await listen(vector, { host: config.host, port: config.vectorPort ?? 0, settingName: settingLabel('vectorPort') }) : null;
    const target = log.durableLsn;
    await projections.start((applied) => {
      if (applied === target || applied % 100_000 === 0) logger.info({ appliedLsn: applied, targetLsn: target }, 'catching up');
    });
    caughtUp = true;
    cdc.start();
    webhookDeliveries.start();
    logger.info({ lsn: log.durableLsn, tables: [...projections.catalog.tables()].length }, 'ready');
    return { httpUrl, httpsUrl, opsUrl, vectorUrl, generatedApiKey: adminKey.generated, sql: engine, webhooks, close };
  } catch (error) {
    await close('start failed').catch(() => undefined);
    throw error;
  }
}

interface ListenerDeps {
  readonly config: Config;
  readonly rootLogger: PinoLogger;
  readonly status: EngineStatus;
  readonly plugins: readonly FastifyPluginAsync[];
  readonly connections: ConnectionLimiter;
  readonly metrics: MetricsSource;
  readonly tls: Awaited<ReturnType<typeof loadTlsMaterial>>;
  /** The vector-compatible protocol: on the API listeners, or on its own when SVC_VECTOR_PORT is another port. */
  readonly vectors: FastifyPluginAsync;
  /** The collection interface (/v1): on the API listeners. */
  readonly collections: FastifyPluginAsync;
  /** The auth gate's limiter: every answer of every listener carries X-RateLimit-*. */
  readonly rateLimit: AuthGate;
  /** The point reads answered in front of fastify (protocols/http/direct): on the plain HTTP listener only. */
  readonly direct: DirectRoutes;
  /** /graphql and /graphiql, at the root of the API listeners. */
  readonly graphql: FastifyPluginAsync;
  /** GraphQL over WebSocket on GET /graphql: registered before `graphql`, whose GET route it joins. */
  readonly graphqlWs: FastifyPluginAsync;
}

type Listeners = { http: FastifyInstance; https: FastifyInstance | null; ops: FastifyInstance | null; vector: FastifyInstance | null };

/** The API listeners (plain HTTP; HTTPS when TLS is set), sharing one connection limit, and the ops listener. */
function createListeners(deps: ListenerDeps): Listeners {
  const { config, rootLogger: logger, status, plugins, connections, metrics, tls, rateLimit } = deps;
  const own = config.vectorPort !== undefined && config.vectorPort !== config.httpPort;
  // The WebSocket plugin and the GraphQL routes in a context of their own: @fastify/websocket's hooks
  // and handler wrapper then run on /graphql's routes only, not on every request of the listener.
  const graphql: FastifyPluginAsync = async (app) => {
    await app.register(deps.graphqlWs);
    await app.register(deps.graphql);
  };
  const rootPlugins = own ? [deps.collections, graphql] : [deps.collections, deps.vectors, graphql];
  const http = createHttpServer({ config, logger, status, plugins, connections, rootPlugins, rateLimit, direct: deps.direct });
  const https = tls === null ? null : createHttpServer({ config, logger, status, plugins, connections, tls, rootPlugins, rateLimit });
  const ops = config.opsPort === 0 ? null : createOpsServer({ config, logger, status, connections, metrics, rateLimit });
  const vector = own ? createHttpServer({ config, logger, status, plugins: [], connections, rootPlugins: [deps.vectors], rateLimit }) : null;
  return { http, https, ops, vector };
}

export async function replay(config: Config, onProgress: (progress: ReplayProgress) => void, rootLogger: PinoLogger): Promise<ReplayReport> {
  const logger = rootLogger as unknown as Logger;
  const started = Date.now();
  const { layout, store, log } = await openStorage(config, logger, false);
  try {
    const { records } = await rebuildProjections({
      log,
      layout,
      liveStore: store,
      batchBytesMax: config.logReadBatchBytesMax,
      logger,
      onProgress,
    });
    return { records, elapsedMs: Date.now() - started };
  } finally {
    await log.close();
  }
}

export async function inspect(config: Config, rootLogger: PinoLogger): Promise<InspectReport> {
  // Reports the modes instead of refusing them: inspect is how a too-open directory is diagnosed.
  const layout = await prepareDataDir(config.dataDir, { create: false, mode: config.dataDirMode, checkModes: false });
  const modes = await scanDataDirModes(layout.root, dataDirModePolicy(config.dataDirMode));
  const segments = await inspectLogDir(layout.logDir);
  // The store is locked while a server runs; the log can still be listed.
  let consumers: InspectReport['consumers'] = [];
  let tables = 0;
  let storeLocked = false;
  let store: StateStore | null = null;
  try {
    store = await openStateStore(layout.stateDir);
    const projection = await TablesProjection.load(store, rootLogger as unknown as Logger);
    // The vector graphs' offset is their last checkpoint: the next start applies the log above it.
    const vectorsLsn = await checkpointLsn(layout.vectorDir);
    consumers = [{ name: projection.name, offsetLsn: projection.offset }, ...(vectorsLsn === null ? [] : [{ name: VECTORS_CONSUMER, offsetLsn: vectorsLsn }])];
    tables = [...projection.catalog.tables()].length;
  } catch (error) {
    if ((error as { code?: string }).code !== 'DATA_DIR_LOCKED') throw error;
    storeLocked = true;
  } finally {
    await store?.close();
  }
  return {
    dataDir: layout.root,
    segments: segments.segments.map((s) => ({ file: s.path, baseLsn: s.baseLsn, lastLsn: s.lastLsn, sizeBytes: s.sizeBytes })),
    firstLsn: segments.firstLsn,
    lastLsn: segments.lastLsn,
    consumers,
    tables,
    storeLocked,
    modes: { ...modes, allowed: config.dataDirMode },
  };
}

export async function repair(config: Config, rootLogger: PinoLogger): Promise<{ bytesTruncated: number; segment: string | null }> {
  const logger = rootLogger as unknown as Logger;
  const layout = await prepareDataDir(config.dataDir, { create: false, mode: config.dataDirMode });
  const store = await openStateStore(layout.stateDir);
  try {
    return await repairLog(logOptions(config, layout, logger));
  } finally {
    await store.close();
  }
}

/** How long a graceful stop waits for CDC streams and webhook deliveries to finish what is in flight. */
const SINK_STOP_TIMEOUT_MS = 5_000;

async function stopWithin(timeoutMs: number, logger: Logger, stops: readonly Promise<void>[]): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs)));
  const outcome = await Promise.race([Promise.allSettled(stops).then(() => 'done' as const), late]);
  clearTimeout(timer);
  if (outcome === 'late') logger.warn({ timeoutMs }, 'sinks did not stop in time; leaving their deliveries in flight (they resume at the next start)');
}

export const commands: AppCommands = { startServer, replay, inspect, repair };

function sqlLimitsOf(config: Config): SqlLimits {
  return {
    queryTextBytesMax: config.queryTextBytesMax,
    resultRowsMax: config.resultRowsMax,
    materializedRowsMax: config.sqlMaterializedRowsMax,
    dmlRowsMax: config.sqlDmlRowsMax,
    planCacheEntriesMax: config.sqlPlanCacheEntriesMax,
    scanCacheRowsMax: config.sqlScanCacheRowsMax,
    scanCacheBytesMax: config.sqlScanCacheBytesMax,
    efSearchDefault: config.vectorEfSearchDefault,
    // What the REST routes' statements run with by default (30 s, at most the configured maximum).
    readTimeoutMsDefault: Math.min(READ_TIMEOUT_MS_DEFAULT, config.queryTimeoutMsMax),
  };
}
