import type { FastifyPluginAsync } from 'fastify';
import type { SqlEngine } from '../../query/index.js';
import type { AuthGate } from '../auth/authenticate.js';
import type { VectorLimits } from '../vectors/limits.js';
import type { VectorCatalog } from '../vectors/vector-table.js';
import { controlRoutes } from './control-routes.js';
import { dataReadRoutes } from './data-read-routes.js';
import { dataWriteRoutes } from './data-write-routes.js';
import { installVectorErrors } from './errors.js';
import { IndexStore } from './index-store.js';
import { vectorAuth } from './auth.js';

export interface VectorProtocolDeps {
  readonly engine: SqlEngine;
  readonly catalog: VectorCatalog;
  readonly limits: VectorLimits & { readonly bodyLimitBytes: number };
  readonly gate: AuthGate;
  /** SVC_VECTOR_API_KEY; undefined: only svcdb credentials are accepted. */
  readonly vectorApiKey: string | undefined;
}

/**
 * The vector-compatible protocol (Pinecone's REST API): the control plane at /indexes and each
 * index's data plane under its host, /indexes/<name>/... Registered at a listener's root.
 */
export function vectorProtocol(deps: VectorProtocolDeps): FastifyPluginAsync {
  const store = new IndexStore({ engine: deps.engine, catalog: deps.catalog, limits: deps.limits });
  const dataDeps = { engine: deps.engine, catalog: deps.catalog, limits: deps.limits };
  return async (app) => {
    installVectorErrors(app, { bodyLimitBytes: deps.limits.bodyLimitBytes });
    app.addHook('onRequest', vectorAuth(deps.gate, deps.vectorApiKey));
    await app.register(controlRoutes({ store, catalog: deps.catalog }));
    await app.register(dataWriteRoutes(dataDeps));
    await app.register(dataReadRoutes(dataDeps));
  };
}
