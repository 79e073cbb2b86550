import type { FastifyPluginAsync } from 'fastify';
import type { CatalogState } from '../../../projections/index.js';
import type { SqlEngine } from '../../../query/index.js';
import { withAuth, type AuthGate } from '../../auth/authenticate.js';
import { principalOf } from '../../auth/principal.js';
import { installCollectionErrors } from './collection-errors.js';
import { collectionRoutes, type CollectionRouteLimits } from './collection-routes.js';
import { CollectionStore } from './collection-store.js';
import { listCollections } from './collection-table.js';
import { openApiDocument } from './openapi.js';

/** The collection interface's root (the spec's {collection_base_url} ends in it). */
export const COLLECTION_PREFIX = '/v1';

export interface CollectionProtocolDeps {
  readonly engine: SqlEngine;
  /** The catalog as of the last applied write (projections.catalog). */
  readonly catalog: CatalogState;
  readonly limits: CollectionRouteLimits & { readonly bodyLimitBytes: number };
  /** The same gate as /api/v1: credentials, roles, tenants, rate limits. */
  readonly gate: AuthGate;
  /** SVC_COLLECTIONS_AUTO_CREATE. */
  readonly autoCreate: boolean;
}

/**
 * The collection interface (docs/collections.md), registered at a listener's root: /v1/api/{collection}
 * and /v1/openapi.json, with its own error body and the /api/v1 auth hook.
 */
export function collectionProtocol(deps: CollectionProtocolDeps): FastifyPluginAsync {
  const store = new CollectionStore({ engine: deps.engine, catalog: deps.catalog, autoCreate: deps.autoCreate });
  const routes: FastifyPluginAsync = async (app) => {
    await app.register(collectionRoutes(store, deps.limits));
    app.get('/openapi.json', async (request) => {
      const collections = listCollections(deps.catalog, principalOf(request).tenant);
      return openApiDocument(collections, `${request.protocol}://${request.host}${COLLECTION_PREFIX}`);
    });
  };
  const root: FastifyPluginAsync = async (app) => {
    installCollectionErrors(app, { bodyLimitBytes: deps.limits.bodyLimitBytes });
    await app.register(withAuth(deps.gate, routes));
  };
  return async (app) => {
    await app.register(root, { prefix: COLLECTION_PREFIX });
  };
}
