/** The public interface of protocols/: what the composition root (bin/app.ts) wires together. */
export {
  HTTP_STATUS_BY_CODE,
  MALFORMED_REQUEST_CODE,
  errorBody,
  errorEnvelope,
  httpStatusOf,
  installErrorHandler,
  installErrorHandlers,
  installNotFoundHandler,
  restEnvelope,
  sendError,
  toSvcError,
  wireDetails,
  type ErrorBody,
  type ErrorEnvelope,
  type ErrorEnvelopeHook,
} from './errors.js';
export { API_PREFIX, createHttpServer } from './http/server.js';
export { pointRoutes } from './http/direct/point-routes.js';
export type { DirectRoutes } from './http/direct/direct-lane.js';
export { connectionGauge, type ConnectionGauge } from './http/connections.js';
export { REQUEST_ID_HEADER } from './http/fastify-base.js';
export type { EngineStatus, HttpServerDeps } from './http/types.js';
export { ProgressWatch } from './http/admin/health.js';
export { createOpsServer, type OpsServerDeps } from './ops/server.js';
export { listen, settingLabel, type ListenOptions } from './listen.js';
export { loadAdminKey, type AdminKey } from './auth/admin-key.js';
export { authenticate, presentedKey, withAuth, type AuthGate } from './auth/authenticate.js';
export { openAuth, type AuthSettings, type OpenAuthOptions } from './auth/open-auth.js';
export { requireRole, READ_ONLY_ROUTES } from './auth/roles.js';
export { TENANT_HEADER, TENANT_ID_PATTERN } from './auth/tenancy.js';
export { createApiKey, keyInfo, readApiKeys, revokeApiKey, type ApiKeyInfo, type ApiKeyRecord, type NewApiKey } from './auth/api-keys.js';
export { queryRoutes, type QueryRouteLimits } from './http/query/query-routes.js';
export { explainRoutes } from './http/query/explain-routes.js';
export { streamRoutes, type StreamRouteLimits } from './http/query/stream-routes.js';
export { asyncQueryRoutes } from './http/async/async-query-routes.js';
export { AsyncQueries, type AsyncQueryDeps, type AsyncQueryLimits } from './http/async/async-queries.js';
export { DEFAULT_PRINCIPAL, ROLES, engineScope, principalOf, type Principal, type Role } from './auth/principal.js';
export { transactionRoutes, type TransactionRouteLimits } from './http/transactions/transaction-routes.js';
export { infoRoutes, type InfoLimits } from './http/admin/info-routes.js';
export { metricsRoutes } from './http/admin/metrics-routes.js';
export { ConnectionLimiter } from './http/connection-limit.js';
export { loadTlsMaterial } from './http/tls.js';
export { ServiceMetrics, type MetricsSource } from './metrics/service-metrics.js';
export { countedAsQueries, type QueryMetrics } from './metrics/query-metrics.js';
export { tablesRoutes, type TableRouteDeps, type TableRouteLimits } from './http/tables/tables-routes.js';
export { rowsRoutes, type RowRouteDeps, type RowRouteLimits } from './http/rows/rows-routes.js';
export { rowRoutes } from './http/rows/row-routes.js';
export { vectorRoutes, VECTOR_FIELD, type VectorRouteDeps } from './http/vectors/vector-routes.js';
export type { VectorCatalog } from './vectors/vector-table.js';
export type { VectorLimits } from './vectors/limits.js';
export { vectorProtocol, type VectorProtocolDeps } from './pinecone/plugin.js';
export { cdcRoutes, type CdcRouteDeps, type CdcRouteRuntime } from './http/cdc/cdc-routes.js';
export { webhookRoutes, type WebhookRouteDeps } from './http/webhooks/webhook-routes.js';
export { collectionProtocol, COLLECTION_PREFIX, type CollectionProtocolDeps } from './http/collections/plugin.js';
export {
  graphqlRoutes,
  mutationTransactions,
  TenantSchemas,
  wsSchemaResolver,
  type GraphqlLimits,
  type GraphqlRouteDeps,
  type SubscriptionSources,
  type WsSchemaDeps,
} from './graphql/index.js';
export * from './graphql/ws/index.js';
export {
  subscriptionSchema,
  subscribeOperation,
  LiveResult,
  SourceCounter,
  SubscriptionFailure,
  type SubscriptionDeps,
  type SubscriptionModel,
  type SubscriptionTable,
} from './graphql/subscriptions/index.js';
