import type { FastifyInstance } from 'fastify';
import { adminRoutes } from './admin-routes.js';
import { installContentNegotiation } from './content-negotiation.js';
import { createBaseServer } from './fastify-base.js';
import type { HttpServerDeps } from './types.js';

/** The REST interface's root; every resource plugin is registered under it. */
export const API_PREFIX = '/api/v1';

/** The main HTTP listener (SVC_HTTP_PORT): admin routes plus the resource plugins, not yet listening. */
export function createHttpServer(deps: HttpServerDeps): FastifyInstance {
  const app = createBaseServer({
    logger: deps.logger.child({ component: 'http' }),
    bodyLimitBytes: deps.config.bodyLimitBytes,
  });
  installContentNegotiation(app);
  app.register(adminRoutes, { prefix: API_PREFIX, status: deps.status });
  for (const plugin of deps.plugins ?? []) app.register(plugin, { prefix: API_PREFIX });
  return app;
}
