/**
 * The webhook service: registration (create, list, get, update, remove) and the way to a webhook's
 * deliveries. A webhook is a catalog fact in the log: one `put_object` record (kind 'webhook',
 * named by its id) per create or change, one `drop_object` per removal, so webhooks survive
 * restarts and `svcdb replay`. Everything is checked before the record is built
 * (registration.ts); the record itself is built under the sequencer's write lock against the
 * catalog as it is then (the tables still exist, nobody changed the webhook meanwhile).
 *
 * The delivery side (WebhookRuntime, the registry of runners) follows the catalog on its own; the
 * service asks it only for live state, delivery records and redeliveries.
 */
import { randomUUID } from 'node:crypto';
import type { TableId } from '../../core/catalog.js';
import { SvcError } from '../../core/errors.js';
import { newUlid } from '../../core/ids.js';
import type { TxnOp } from '../../core/log-records.js';
import {
  WEBHOOK_BREAKER_DEFAULTS,
  WEBHOOK_DEF_VERSION,
  WEBHOOK_OBJECT,
  WEBHOOK_RETRY_DEFAULTS,
  decodeWebhookDef,
  encodeWebhookDef,
  type WebhookDef,
} from '../../core/webhook.js';
import type { CatalogState, Sequencer } from '../../projections/index.js';
import { AllowedAddresses, type ResolveAll } from './allowed-addresses.js';
import { WEBHOOK_LIMITS } from './limits.js';
import {
  DEFAULT_WEBHOOK_OPERATIONS,
  checkRegistration,
  mergeSettings,
  type CheckedFields,
  type CompileFilter,
  type RegistrationFields,
} from './registration.js';
import type { DeliveryQuery, DeliveryRecord, WebhookApi, WebhookInput, WebhookPatch, WebhookRuntime, WebhookView } from '../../core/webhook-api.js';
import { webhookView } from './view.js';

export interface WebhookServiceLimits {
  /** Webhooks one tenant may register; one more is LIMIT_EXCEEDED. */
  readonly webhooksPerTenantMax: number;
}

export interface WebhookServiceDeps {
  /** The catalog the webhooks are read from, and the one writer their records go through. */
  readonly projections: { readonly catalog: CatalogState; readonly sequencer: Pick<Sequencer, 'submit'> };
  readonly runtime: WebhookRuntime;
  readonly compileFilter: CompileFilter;
  /** SVC_WEBHOOK_ALLOWED_CIDRS (empty: any address). */
  readonly allowedCidrs: readonly string[];
  readonly limits?: Partial<WebhookServiceLimits>;
  /** DNS for the url check (tests pass their own). */
  readonly resolve?: ResolveAll;
  /** Wall clock (ms) of created_at / updated_at. */
  readonly nowMs?: () => number;
}

const INPUT_FIELDS: readonly string[] = ['url', 'secret', 'tables', 'operations', 'filter', 'transform', 'retry', 'circuit_breaker', 'tls', 'enabled'];

/** What PATCH {enabled: false} leaves in disabled_reason. */
export const DISABLED_BY_REQUEST = 'disabled by PATCH';

export function webhookNotFound(id: string): SvcError {
  const shown = id.length > 64 ? `${id.slice(0, 64)}…` : id;
  return new SvcError('NOT_FOUND', `webhook ${shown} does not exist; GET /api/v1/webhooks lists them`, { webhook_id: shown });
}

function checkInputObject(input: unknown): Record<string, unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new SvcError('VALIDATION_ERROR', 'a webhook definition is an object', { field: 'body' });
  }
  const unknown = Object.keys(input).find((k) => !INPUT_FIELDS.includes(k));
  if (unknown !== undefined) {
    throw new SvcError('VALIDATION_ERROR', `${unknown}: unknown field (a webhook takes ${INPUT_FIELDS.join(', ')})`, { field: unknown });
  }
  const enabled = (input as Record<string, unknown>).enabled;
  if (enabled !== undefined && typeof enabled !== 'boolean') throw new SvcError('VALIDATION_ERROR', 'enabled: is true or false', { field: 'enabled' });
  return input as Record<string, unknown>;
}

/** A definition in the field order of core/webhook.ts (the JSON in the log is deterministic). */
function definition(
  head: Pick<WebhookDef, 'id' | 'tenant'>,
  fields: CheckedFields,
  state: Pick<WebhookDef, 'enabled' | 'disabled_reason' | 'created_at' | 'updated_at'>,
): WebhookDef {
  return {
    version: WEBHOOK_DEF_VERSION,
    id: head.id,
    tenant: head.tenant,
    url: fields.url,
    secret: fields.secret,
    tables: fields.tables,
    table_ids: fields.table_ids,
    operations: fields.operations,
    filter: fields.filter,
    transform: fields.transform,
    retry: fields.retry,
    circuit_breaker: fields.circuit_breaker,
    tls: fields.tls,
    enabled: state.enabled,
    disabled_reason: state.disabled_reason,
    created_at: state.created_at,
    updated_at: state.updated_at,
  };
}

const putOp = (def: WebhookDef): TxnOp => ({
  kind: 'put_object',
  objectKind: WEBHOOK_OBJECT,
  tenant: def.tenant,
  name: def.id,
  definition: encodeWebhookDef(def),
  snapshot: null,
});

export class WebhookService implements WebhookApi {
  private readonly allowed: AllowedAddresses;
  private readonly limits: WebhookServiceLimits;
  private readonly nowMs: () => number;

  constructor(private readonly deps: WebhookServiceDeps) {
    this.allowed = AllowedAddresses.parse(deps.allowedCidrs);
    this.limits = { webhooksPerTenantMax: WEBHOOK_LIMITS.webhooksPerTenantMax, ...deps.limits };
    this.nowMs = deps.nowMs ?? Date.now;
  }

  /** Registers a webhook: every field checked, then one log record; resolves once it is in the catalog. */
  async create(tenant: string, input: WebhookInput): Promise<WebhookView> {
    const body = checkInputObject(input);
    const fields = await checkRegistration(
      {
        url: body.url,
        secret: body.secret,
        tables: { names: body.tables },
        operations: body.operations ?? DEFAULT_WEBHOOK_OPERATIONS,
        filter: body.filter,
        transform: body.transform,
        retry: mergeSettings('retry', WEBHOOK_RETRY_DEFAULTS, body.retry),
        circuit_breaker: mergeSettings('circuit_breaker', WEBHOOK_BREAKER_DEFAULTS, body.circuit_breaker),
        tls: body.tls,
      },
      this.context(tenant),
    );
    const now = new Date(this.nowMs()).toISOString();
    const enabled = body.enabled !== false;
    const def = definition({ id: newUlid(), tenant }, fields, {
      enabled,
      disabled_reason: enabled ? null : DISABLED_BY_REQUEST,
      created_at: now,
      updated_at: now,
    });
    await this.write(tenant, (catalog) => {
      stillThere(catalog, tenant, def.table_ids);
      const count = catalog.objects(WEBHOOK_OBJECT).filter((o) => o.tenant === tenant).length;
      if (count >= this.limits.webhooksPerTenantMax) {
        throw new SvcError('LIMIT_EXCEEDED', `a tenant may register at most ${this.limits.webhooksPerTenantMax} webhooks`, {
          limit: 'webhooksPerTenantMax',
          webhooksPerTenantMax: this.limits.webhooksPerTenantMax,
        });
      }
      return putOp(def);
    });
    return this.view(def);
  }

  /** The tenant's webhooks, oldest first (ids are ULIDs). */
  list(tenant: string): WebhookView[] {
    return this.defs(tenant).map((def) => this.view(def));
  }

  get(tenant: string, id: string): WebhookView {
    return this.view(this.find(this.deps.projections.catalog, tenant, id).def);
  }

  /**
   * PATCH: the given fields over the current definition (retry and circuit_breaker merge key by
   * key; filter, transform and tls are replaced, null removes them), all checked again, put again.
   * `enabled: true` re-enables a webhook a 410 disabled and clears disabled_reason.
   */
  async update(tenant: string, id: string, patch: WebhookPatch): Promise<WebhookView> {
    const body = checkInputObject(patch);
    const current = this.find(this.deps.projections.catalog, tenant, id);
    const cur = current.def;
    const pick = (key: 'filter' | 'transform' | 'tls'): unknown => (body[key] !== undefined ? body[key] : cur[key]);
    const fields: RegistrationFields = {
      url: body.url ?? cur.url,
      secret: body.secret ?? cur.secret,
      tables: body.tables !== undefined ? { names: body.tables } : { ids: cur.table_ids },
      operations: body.operations ?? cur.operations,
      filter: pick('filter'),
      transform: pick('transform'),
      retry: mergeSettings('retry', cur.retry, body.retry),
      circuit_breaker: mergeSettings('circuit_breaker', cur.circuit_breaker, body.circuit_breaker),
      tls: pick('tls'),
    };
    const checked = await checkRegistration(fields, this.context(tenant));
    const enabled = body.enabled === undefined ? cur.enabled : (body.enabled as boolean);
    const reason = enabled ? null : body.enabled === false && cur.enabled ? DISABLED_BY_REQUEST : cur.disabled_reason;
    const def = definition(cur, checked, { enabled, disabled_reason: reason, created_at: cur.created_at, updated_at: new Date(this.nowMs()).toISOString() });
    await this.write(tenant, (catalog) => {
      const now = this.find(catalog, tenant, id);
      if (now.updatedLsn !== current.updatedLsn) {
        throw new SvcError('TRANSACTION_CONFLICT', `webhook ${id} changed while this update was checked; send it again`, { webhook_id: id });
      }
      stillThere(catalog, tenant, def.table_ids);
      return putOp(def);
    });
    return this.view(def);
  }

  async remove(tenant: string, id: string): Promise<void> {
    await this.write(tenant, (catalog) => {
      this.find(catalog, tenant, id);
      return { kind: 'drop_object', objectKind: WEBHOOK_OBJECT, tenant, name: id };
    });
  }

  async deliveries(tenant: string, id: string, query: DeliveryQuery): Promise<DeliveryRecord[]> {
    this.find(this.deps.projections.catalog, tenant, id);
    return this.deps.runtime.deliveries(id, query);
  }

  async redeliver(tenant: string, id: string, eventId: string): Promise<DeliveryRecord> {
    this.find(this.deps.projections.catalog, tenant, id);
    return this.deps.runtime.redeliver(id, eventId);
  }

  /**
   * Turns a webhook off (the dispatcher calls it when a receiver answers 410 Gone): its definition
   * put again with enabled false and the reason. True when this wrote; false when the webhook is
   * gone or already off (nothing written).
   */
  async disable(tenant: string, id: string, reason: string): Promise<boolean> {
    let wrote = false;
    await this.write(tenant, (catalog) => {
      const object = catalog.object(WEBHOOK_OBJECT, tenant, id);
      if (!object) return null;
      const def = decodeWebhookDef(object.definition);
      if (!def.enabled) return null;
      wrote = true;
      const disabled_reason = reason.slice(0, WEBHOOK_LIMITS.disabledReasonCharsMax);
      return putOp({ ...def, enabled: false, disabled_reason, updated_at: new Date(this.nowMs()).toISOString() });
    });
    return wrote;
  }

  private context(tenant: string) {
    const { catalog } = this.deps.projections;
    return { catalog, tenant, allowed: this.allowed, compileFilter: this.deps.compileFilter, ...(this.deps.resolve ? { resolve: this.deps.resolve } : {}) };
  }

  private defs(tenant: string): WebhookDef[] {
    return this.deps.projections.catalog
      .objects(WEBHOOK_OBJECT)
      .filter((o) => o.tenant === tenant)
      .map((o) => decodeWebhookDef(o.definition))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** The tenant's webhook `id` (NOT_FOUND otherwise: another tenant's id looks exactly like an unknown one). */
  private find(catalog: CatalogState, tenant: string, id: string): { def: WebhookDef; updatedLsn: number } {
    const object = catalog.object(WEBHOOK_OBJECT, tenant, id);
    if (!object) throw webhookNotFound(id);
    return { def: decodeWebhookDef(object.definition), updatedLsn: object.updatedLsn };
  }

  private view(def: WebhookDef): WebhookView {
    return webhookView(def, this.deps.runtime.status(def.id), this.deps.projections.catalog);
  }

  /** One record of the op `build` returns (null: nothing to write), built under the write lock. */
  private async write(tenant: string, build: (catalog: CatalogState) => TxnOp | null): Promise<void> {
    await this.deps.projections.sequencer.submit(async (view) => {
      const op = build(view.catalog);
      if (op === null) return null;
      const record = { type: 'txn' as const, txnId: randomUUID(), tenant, timestampMicros: BigInt(Date.now()) * 1000n, ops: [op] };
      return { record, result: null };
    });
  }
}

/** Under the write lock: every table the definition follows still exists (a DROP may have run since the check). */
function stillThere(catalog: CatalogState, tenant: string, ids: readonly TableId[]): void {
  for (const id of ids) {
    const entry = catalog.table(id);
    if (!entry || entry.def.tenant !== tenant) {
      throw new SvcError('TABLE_NOT_FOUND', `a table of this webhook (id ${id}) was dropped while the webhook was checked`, { table_id: id, field: 'tables' });
    }
  }
}
