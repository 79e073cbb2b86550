import type { FastifyInstance } from 'fastify';
import { adminRoutes } from './admin/admin-routes.js';
import { ConnectionLimiter, connectionRefusal, installConnectionLimit } from './connection-limit.js';
import { reencoded } from './content-negotiation.js';
import { createBaseServer } from './fastify-base.js';
import { installOpenApi } from './openapi/openapi.js';
import type { HttpServerDeps } from './types.js';
import { API_PREFIX } from './api-prefix.js';

export { API_PREFIX } from './api-prefix.js';

/**
 * An API listener: admin routes plus the resource plugins, not yet listening. Plain HTTP
 * (SVC_HTTP_PORT), or with `deps.tls` HTTPS with HTTP/2 (SVC_HTTPS_PORT); both serve the same routes.
 */
export function createHttpServer(deps: HttpServerDeps): FastifyInstance {
  const tls = deps.tls !== undefined;
  const connections = deps.connections ?? new ConnectionLimiter(deps.config.connectionsMax);
  const app = createBaseServer({
    logger: deps.logger.child({ component: tls ? 'https' : 'http' }),
    bodyLimitBytes: deps.config.bodyLimitBytes,
    headersTimeoutMs: deps.config.headersTimeoutMs,
    requestTimeoutMs: deps.config.requestTimeoutMs,
    ...(deps.tls ? { tls: deps.tls } : {}),
    ...(deps.rateLimit ? { rateLimit: deps.rateLimit } : {}),
    // The connection limit and content negotiation run inside the base server's own hooks.
    admit: connectionRefusal(connections),
    reencode: reencoded,
    // The direct path on plain HTTP only (HTTP/2's requests are not node's IncomingMessage).
    ...(deps.direct !== undefined && !tls ? { direct: { routes: deps.direct, refuses: (socket) => connections.refuses(socket) } } : {}),
  });
  installConnectionLimit(app, connections, { tls });
  if ((deps.plugins ?? []).length > 0) installOpenApi(app, { swaggerUi: deps.config.swaggerUiEnabled });
  app.register(adminRoutes, { prefix: API_PREFIX, status: deps.status, connections });
  for (const plugin of deps.plugins ?? []) app.register(plugin, { prefix: API_PREFIX });
  for (const plugin of deps.rootPlugins ?? []) app.register(plugin);
  return app;
}
