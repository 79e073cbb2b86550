/**
 * POST/GET /api/v1/webhooks, GET/PATCH/DELETE /webhooks/{id}, GET /webhooks/{id}/deliveries and
 * POST /webhooks/{id}/deliveries/{event_id}/retry. Admin role; a webhook belongs to the tenant it
 * was registered in (any other tenant gets 404, as for an unknown id). The secret is taken, never
 * shown. The service (sinks/ implements it, the composition root hands it in) does every check.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { DeliveryQuery, WebhookApi, WebhookInput } from '../../../core/webhook-api.js';
import { principalOf } from '../../auth/principal.js';
import { requireRole } from '../../auth/roles.js';
import { API_PREFIX } from '../api-prefix.js';
import { createWebhookSchema, deliveriesQuery, deliveryParams, patchWebhookSchema, webhookParams } from './webhook-schemas.js';

export interface WebhookRouteDeps {
  /** The webhook service (sinks/ implements it; the composition root hands it in). */
  readonly webhooks: WebhookApi;
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
    app.post<{ Body: WebhookInput }>('/webhooks', { schema: { body: createWebhookSchema } }, async (request, reply) => {
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

    app.patch<{ Params: IdParams; Body: Partial<WebhookInput> }>(
      '/webhooks/:id',
      { schema: { params: webhookParams, body: patchWebhookSchema } },
      async (request) => webhooks.update(adminTenant(request), request.params.id, request.body),
    );

    app.delete<{ Params: IdParams }>('/webhooks/:id', { schema: { params: webhookParams } }, async (request) => {
      await webhooks.remove(adminTenant(request), request.params.id);
      return { success: true, id: request.params.id, deleted_at: new Date().toISOString() };
    });

    app.get<{ Params: IdParams; Querystring: DeliveryQuery }>(
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
