/** The public interface of protocols/: what the composition root (bin/app.ts) wires together. */
export { HTTP_STATUS_BY_CODE, MALFORMED_REQUEST_CODE, errorEnvelope, httpStatusOf, toSvcError, type ErrorEnvelope } from './errors.js';
export { API_PREFIX, createHttpServer } from './http/server.js';
export { connectionGauge, type ConnectionGauge } from './http/connections.js';
export { REQUEST_ID_HEADER } from './http/fastify-base.js';
export type { EngineStatus, HttpServerDeps } from './http/types.js';
export { createOpsServer, type OpsServerDeps } from './ops/server.js';
export { listen, settingLabel, type ListenOptions } from './listen.js';
export { loadAdminKey, type AdminKey } from './auth/admin-key.js';
export { authenticate, presentedKey, withAuth } from './auth/authenticate.js';
export { queryRoutes, type QueryRouteLimits } from './http/query-routes.js';
export { explainRoutes } from './http/explain-routes.js';
export { streamRoutes, type StreamRouteLimits } from './http/stream-routes.js';
export { asyncQueryRoutes } from './http/async-query-routes.js';
export { AsyncQueries, type AsyncQueryDeps, type AsyncQueryLimits } from './http/async-queries.js';
export { DEFAULT_PRINCIPAL, ROLES, engineScope, principalOf, type Principal, type Role } from './auth/principal.js';
export { transactionRoutes, type TransactionRouteLimits } from './http/transaction-routes.js';
export { tablesRoutes, type TableRouteDeps, type TableRouteLimits } from './http/tables-routes.js';
