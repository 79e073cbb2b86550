/**
 * GET /api/v1/cdc/streams and /cdc/streams/{name}: the tenant's CDC streams as SHOW CDC STREAMS
 * and SHOW CDC STREAM STATUS print them (same fields, JSON), and /cdc/streams/{name}/schema, the
 * Avro schema a FORMAT AVRO stream writes with. Admin role.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { SvcError } from '../../../core/errors.js';
import type { CatalogState } from '../../../projections/index.js';
import { stateOf, statusRow, streamDefs, streamNotFound, streamRow, type CdcRuntime } from '../../../query/index.js';
import { principalOf } from '../../auth/principal.js';
import { requireRole } from '../../auth/roles.js';

/** What the routes read of the running streams (sinks/ implements it; the composition root hands it in). */
export interface CdcRouteRuntime extends CdcRuntime {
  /** The current Avro schema of a stream and its fingerprint (null: not a FORMAT AVRO stream). */
  schema(tenant: string, name: string): { readonly schema: unknown; readonly fingerprint: string } | null;
}

export interface CdcRouteDeps {
  readonly catalog: CatalogState;
  readonly runtime: CdcRouteRuntime;
}

const nameParams = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 1, maxLength: 128 } },
  required: ['name'],
  additionalProperties: false,
} as const;

export function cdcRoutes(deps: CdcRouteDeps): FastifyPluginAsync {
  const { catalog, runtime } = deps;
  const streamOf = (request: FastifyRequest<{ Params: { name: string } }>) => {
    requireRole(request, 'admin');
    const tenant = principalOf(request).tenant;
    const def = streamDefs(catalog, tenant).find((d) => d.name === request.params.name);
    if (!def) throw streamNotFound(request.params.name);
    return def;
  };
  return async (app) => {
    app.get('/cdc/streams', async (request) => {
      requireRole(request, 'admin');
      const streams = streamDefs(catalog, principalOf(request).tenant).map((def) => streamRow(def, stateOf(def, runtime)));
      return { streams, total_count: streams.length };
    });
    app.get<{ Params: { name: string } }>('/cdc/streams/:name', { schema: { params: nameParams } }, async (request) => {
      const def = streamOf(request);
      const { name: _name, state: _state, ...status } = statusRow(def, runtime.status(def.tenant, def.name));
      return { ...streamRow(def, stateOf(def, runtime)), status };
    });
    app.get<{ Params: { name: string } }>('/cdc/streams/:name/schema', { schema: { params: nameParams } }, async (request) => {
      const def = streamOf(request);
      const found = runtime.schema(def.tenant, def.name);
      if (!found) {
        throw new SvcError('NOT_FOUND', `CDC stream "${def.name}" writes ${def.format.toUpperCase()}, which has no Avro schema`, {
          stream: def.name,
          format: def.format,
        });
      }
      return { stream: def.name, format: def.format, fingerprint: found.fingerprint, schema: found.schema };
    });
  };
}
