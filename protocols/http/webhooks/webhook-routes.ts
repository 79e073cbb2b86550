/**
 * POST/GET /api/v1/webhooks, GET/PATCH/DELETE /webhooks/{id}, GET /webhooks/{id}/deliveries and
 * POST /webhooks/{id}/deliveries/{event_id}/retry. Admin role; a webhook belongs to the tenant it
 * was registered in (any other tenant gets 404, as for an unknown id). The secret is taken, never
 * shown. The service (sinks/ implements it, the composition root hands it in) does every check.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { WebhookCircuitBreaker, WebhookFilter, WebhookRetry, WebhookTls, WebhookTransform } from '../../../core/webhook.js';
import { principalOf } from '../../auth/principal.js';
import { requireRole } from '../../auth/roles.js';
import { API_PREFIX } from '../server.js';
import { createWebhookSchema, deliveriesQuery, deliveryParams, patchWebhookSchema, webhookParams } from './webhook-schemas.js';

/** A registration as the body carries it (the shape of sinks' WebhookInput). */
export interface WebhookBody {
  readonly url: string;
  readonly secret: string;
  readonly tables: readonly string[];
  readonly operations?: readonly string[];
  readonly filter?: WebhookFilter | null;
  readonly transform?: WebhookTransform | null;
  readonly retry?: Partial<WebhookRetry>;
  readonly circuit_breaker?: Partial<WebhookCircuitBreaker>;
  readonly tls?: WebhookTls | null;
  readonly enabled?: boolean;
}

export interface DeliveriesQuery {
  readonly status?: 'delivered' | 'dead_lettered' | 'pending';
  readonly limit: number;
}

/** The webhook service as the routes use it (structurally sinks' WebhookApi: protocols may not import sinks). */
export interface WebhookRouteApi {
  create(tenant: string, input: WebhookBody): Promise<{ readonly id: string }>;
  list(tenant: string): readonly unknown[];
  get(tenant: string, id: string): unknown;
  update(tenant: string, id: string, patch: Partial<WebhookBody>): Promise<unknown>;
  remove(tenant: string, id: string): Promise<void>;
  deliveries(tenant: string, id: string, query: DeliveriesQuery): Promise<readonly unknown[]>;
  redeliver(tenant: string, id: string, eventId: string): Promise<unknown>;
}

export interface WebhookRouteDeps {
  readonly webhooks: WebhookRouteApi;
}

type IdParams = { id: string };

/** The admin's tenant (403 for any other role). */
function adminTenant(request: FastifyRequest): string {
  requireRole(request, 'admin');
  return principalOf(request).tenant;
}

export function webhookRoutes(deps: WebhookRouteDeps): FastifyPluginAsync {
  const { webhooks } = deps;
  return async (app) => {
    app.post<{ Body: WebhookBody }>('/webhooks', { schema: { body: createWebhookSchema } }, async (request, reply) => {
      const created = await webhooks.create(adminTenant(request), request.body);
      return reply.code(201).header('location', `${API_PREFIX}/webhooks/${created.id}`).send(created);
    });

    app.get('/webhooks', async (request) => {
      const list = webhooks.list(adminTenant(request));
      return { webhooks: list, total_count: list.length };
    });

    app.get<{ Params: IdParams }>('/webhooks/:id', { schema: { params: webhookParams } }, async (request) => {
      return webhooks.get(adminTenant(request), request.params.id);
    });

    app.patch<{ Params: IdParams; Body: Partial<WebhookBody> }>(
      '/webhooks/:id',
      { schema: { params: webhookParams, body: patchWebhookSchema } },
      async (request) => webhooks.update(adminTenant(request), request.params.id, request.body),
    );

    app.delete<{ Params: IdParams }>('/webhooks/:id', { schema: { params: webhookParams } }, async (request) => {
      await webhooks.remove(adminTenant(request), request.params.id);
      return { success: true, id: request.params.id, deleted_at: new Date().toISOString() };
    });

    app.get<{ Params: IdParams; Querystring: DeliveriesQuery }>(
      '/webhooks/:id/deliveries',
      { schema: { params: webhookParams, querystring: deliveriesQuery } },
      async (request) => {
        const deliveries = await webhooks.deliveries(adminTenant(request), request.params.id, request.query);
        return { webhook_id: request.params.id, deliveries };
      },
    );

    app.post<{ Params: { id: string; event_id: string } }>(
      '/webhooks/:id/deliveries/:event_id/retry',
      { schema: { params: deliveryParams } },
      async (request) => webhooks.redeliver(adminTenant(request), request.params.id, request.params.event_id),
    );
  };
}
