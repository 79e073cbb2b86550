/**
 * What GET /api/v1/webhooks shows of a webhook: its definition without the secret (and without
 * the TLS key, only whether each PEM part is set), its tables as the catalog names them now, and
 * the runner's live state (or the state of a runner that has not started: closed, nothing counted).
 */
import type { WebhookDef } from '../../core/webhook.js';
import type { CatalogState } from '../../projections/index.js';
import { tableLabel } from './registration.js';
import type { BreakerView, WebhookRuntime, WebhookView } from '../../core/webhook-api.js';

const IDLE_BREAKER: BreakerView = Object.freeze({ state: 'closed', failure_count: 0, opened_at: null });

const NO_STATS: WebhookView['stats'] = Object.freeze({
  delivered: 0,
  failed_attempts: 0,
  dead_lettered: 0,
  filtered: 0,
  pending: 0,
  last_sequence: null,
  last_error: null,
});

/** The API's view of a definition; never carries the secret or the client key. */
export function webhookView(def: WebhookDef, live: ReturnType<WebhookRuntime['status']>, catalog: CatalogState): WebhookView {
  // A webhook follows table ids: a renamed table shows its new name.
  const tables = def.table_ids.map((id, i) => {
    const entry = catalog.table(id);
    return entry ? tableLabel(entry.def) : (def.tables[i] ?? String(id));
  });
  const breaker = live?.breaker ?? IDLE_BREAKER;
  return {
    id: def.id,
    url: def.url,
    tables,
    operations: [...def.operations],
    filter: def.filter,
    transform: def.transform,
    retry: def.retry,
    circuit_breaker: {
      ...def.circuit_breaker,
      status: { state: breaker.state, failure_count: breaker.failure_count, opened_at: breaker.opened_at },
    },
    tls: def.tls === null ? null : { ca: def.tls.ca !== undefined, cert: def.tls.cert !== undefined, key: def.tls.key !== undefined },
    enabled: def.enabled,
    disabled_reason: def.disabled_reason,
    created_at: def.created_at,
    updated_at: def.updated_at,
    stats: { ...NO_STATS, ...live?.stats },
  };
}
