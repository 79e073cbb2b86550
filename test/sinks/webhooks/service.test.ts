/**
 * WebhookService over a real log, LevelDB and projections (no HTTP): what the REST suite
 * (test/protocols/webhooks.test.ts) cannot reach — disable() for a 410, live state from the
 * runtime, the filter compiler's verdict, DNS against the allowed ranges, the tenant limit, table
 * ids followed through a rename, and a change that races another.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TableDef } from '../../../core/catalog.js';
import { SvcError } from '../../../core/errors.js';
import { silentLogger } from '../../../core/logger.js';
import { WEBHOOK_OBJECT, decodeWebhookDef, type WebhookFilter } from '../../../core/webhook.js';
import { SqlEngine, typeSystem } from '../../../query/index.js';
import { WebhookService, type WebhookInput, type WebhookRuntime } from '../../../sinks/index.js';
import { openStack, tempDir, type Stack } from '../../helpers/stack.js';

let dir: { dir: string; remove: () => Promise<void> };
let stack: Stack;
let engine: SqlEngine;

/** What the registry would report: set per test. */
let live: ReturnType<WebhookRuntime['status']> = null;
/** A stand-in for the webhook registry (not merged yet): live state as set above, no deliveries. */
const stubRuntime: WebhookRuntime = {
  status: () => live,
  deliveries: async () => [],
  redeliver: async (id, eventId) => {
    throw new SvcError('NOT_FOUND', `no dead letter ${eventId} for ${id}`, {});
  },
};

/** A stand-in for query/'s filter compiler: refuses a predicate containing "bogus", records what it was given. */
const compiled: { tenant: string; tables: string[]; operations: readonly string[]; filter: WebhookFilter | null }[] = [];
async function fakeCompileFilter(tenant: string, tables: TableDef[], operations: readonly string[], filter: WebhookFilter | null): Promise<unknown> {
  compiled.push({ tenant, tables: tables.map((t) => t.name), operations, filter });
  if (filter?.predicate?.includes('bogus')) throw new SvcError('VALIDATION_ERROR', 'filter.predicate: does not compile', { field: 'filter.predicate' });
  return null;
}

function service(extra: Partial<ConstructorParameters<typeof WebhookService>[0]> = {}): WebhookService {
  return new WebhookService({ projections: stack.projections, runtime: stubRuntime, compileFilter: fakeCompileFilter, allowedCidrs: [], ...extra });
}

const input = (extra: Partial<WebhookInput> = {}): WebhookInput => ({ url: 'https://hooks.example.com/in', secret: 's3cret', tables: ['orders'], ...extra });

async function sql(text: string, tenant = 'default'): Promise<void> {
  await engine.execute(text, { tenant, timeoutMs: 10_000, maxRows: 100 });
}

async function refused(promise: Promise<unknown>): Promise<SvcError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SvcError);
  return error as SvcError;
}

beforeAll(async () => {
  dir = await tempDir('svcdb-webhook-service-');
  stack = await openStack(dir.dir);
  engine = new SqlEngine({ projections: stack.projections, types: typeSystem, logger: silentLogger });
  await sql('CREATE TABLE orders (id INT PRIMARY KEY, status TEXT)');
  await sql('CREATE TABLE items (id INT PRIMARY KEY)');
});

afterAll(async () => {
  await stack?.close();
  await dir?.remove();
});

describe('WebhookService', () => {
  it('writes one put_object record whose definition holds the secret; the view never does', async () => {
    const webhooks = service();
    const view = await webhooks.create('default', input());
    const object = stack.projections.catalog.object(WEBHOOK_OBJECT, 'default', view.id)!;
    const def = decodeWebhookDef(object.definition);
    expect(def).toMatchObject({ id: view.id, tenant: 'default', secret: 's3cret', tables: ['orders'], enabled: true });
    expect(def.table_ids).toEqual([stack.projections.catalog.tableByName('default', 'public', 'orders')!.def.id]);
    expect(JSON.stringify(view)).not.toContain('s3cret');
    expect(JSON.stringify(webhooks.list('default'))).not.toContain('s3cret');
    await webhooks.remove('default', view.id);
  });

  it('passes tables, operations and filter to the filter compiler, and refuses what it refuses, writing nothing', async () => {
    const webhooks = service();
    compiled.length = 0;
    const filter = { columns: { orders: ['status'] }, predicate: 'NEW.status <> OLD.status' };
    const view = await webhooks.create('default', input({ tables: ['orders', 'items'], operations: ['UPDATE'], filter }));
    expect(compiled).toEqual([{ tenant: 'default', tables: ['orders', 'items'], operations: ['UPDATE'], filter }]);
    const error = await refused(webhooks.create('default', input({ filter: { predicate: 'bogus(' } })));
    expect(error.details.field).toBe('filter.predicate');
    expect(webhooks.list('default').map((w) => w.id)).toEqual([view.id]);
    await webhooks.remove('default', view.id);
  });

  it("shows the runtime's live state when the runner reports it", async () => {
    const webhooks = service();
    const view = await webhooks.create('default', input());
    live = {
      breaker: { state: 'open', failure_count: 5, opened_at: '2026-01-01T00:00:00.000Z' },
      stats: { delivered: 7, failed_attempts: 5, dead_lettered: 1, filtered: 2, pending: 3, last_sequence: 42, last_error: null },
    };
    try {
      expect(webhooks.get('default', view.id)).toMatchObject({
        circuit_breaker: { failure_threshold: 5, status: { state: 'open', failure_count: 5, opened_at: '2026-01-01T00:00:00.000Z' } },
        stats: { delivered: 7, pending: 3, last_sequence: 42 },
      });
    } finally {
      live = null;
    }
    await webhooks.remove('default', view.id);
  });

  it('disable() turns a webhook off with the reason once; PATCH enabled: true turns it on and clears the reason', async () => {
    const webhooks = service();
    const view = await webhooks.create('default', input());
    expect(await webhooks.disable('default', view.id, 'the receiver answered 410 Gone')).toBe(true);
    expect(webhooks.get('default', view.id)).toMatchObject({ enabled: false, disabled_reason: 'the receiver answered 410 Gone' });
    expect(await webhooks.disable('default', view.id, 'again')).toBe(false);
    expect(webhooks.get('default', view.id).disabled_reason).toBe('the receiver answered 410 Gone');
    // A PATCH of something else keeps it off, with its reason.
    expect(await webhooks.update('default', view.id, { retry: { max_retries: 1 } })).toMatchObject({
      enabled: false,
      disabled_reason: 'the receiver answered 410 Gone',
    });
    expect(await webhooks.update('default', view.id, { enabled: true })).toMatchObject({ enabled: true, disabled_reason: null });
    expect(await webhooks.disable('default', 'no-such-webhook', 'gone')).toBe(false);
    await webhooks.remove('default', view.id);
  });

  it('follows table ids: a table dropped after registration makes a PATCH say so until tables are given', async () => {
    const webhooks = service();
    await sql('CREATE TABLE temp_t (id INT PRIMARY KEY)');
    const view = await webhooks.create('default', input({ tables: ['temp_t'] }));
    await sql('DROP TABLE temp_t');
    expect(webhooks.get('default', view.id).tables).toEqual(['temp_t']);
    const error = await refused(webhooks.update('default', view.id, { enabled: false }));
    expect(error.code).toBe('TABLE_NOT_FOUND');
    expect((await webhooks.update('default', view.id, { tables: ['items'] })).tables).toEqual(['items']);
    await webhooks.remove('default', view.id);
  });

  it('checks a host name against the allowed ranges with the addresses it resolves to', async () => {
    const resolve = async (host: string) => (host === 'inside.test' ? [{ address: '10.9.8.7', family: 4 }] : [{ address: '8.8.8.8', family: 4 }]);
    const webhooks = service({ allowedCidrs: ['10.0.0.0/8'], resolve });
    const ok = await webhooks.create('default', input({ url: 'https://inside.test/hook' }));
    const error = await refused(webhooks.create('default', input({ url: 'https://outside.test/hook' })));
    expect(error.details).toMatchObject({ field: 'url', addresses: ['8.8.8.8'] });
    await webhooks.remove('default', ok.id);
  });

  it('refuses a webhook past the tenant limit with LIMIT_EXCEEDED; other tenants are counted apart', async () => {
    const webhooks = service({ limits: { webhooksPerTenantMax: 2 } });
    await sql('CREATE TABLE orders (id INT PRIMARY KEY)', 'acme');
    const made = [await webhooks.create('default', input()), await webhooks.create('default', input())];
    expect((await refused(webhooks.create('default', input()))).code).toBe('LIMIT_EXCEEDED');
    const acme = await webhooks.create('acme', input());
    expect(webhooks.list('acme').map((w) => w.id)).toEqual([acme.id]);
    expect(() => webhooks.get('acme', made[0]!.id)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
    for (const w of made) await webhooks.remove('default', w.id);
    await webhooks.remove('acme', acme.id);
  });

  it('an update that raced another change is refused (409) instead of undoing it', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = service({
      compileFilter: async (...args) => {
        await gate;
        return fakeCompileFilter(...args);
      },
    });
    const fast = service();
    const view = await fast.create('default', input());
    const racing = slow.update('default', view.id, { url: 'https://hooks.example.com/slow' });
    await fast.disable('default', view.id, 'the receiver answered 410 Gone');
    release();
    expect((await refused(racing)).code).toBe('TRANSACTION_CONFLICT');
    expect(fast.get('default', view.id)).toMatchObject({ enabled: false, url: 'https://hooks.example.com/in' });
    await fast.remove('default', view.id);
  });

  it("deliveries and redeliver ask the runtime only for the tenant's own webhook", async () => {
    const webhooks = service();
    const view = await webhooks.create('default', input());
    expect(await webhooks.deliveries('default', view.id, { limit: 10 })).toEqual([]);
    expect((await refused(webhooks.deliveries('acme', view.id, { limit: 10 }))).code).toBe('NOT_FOUND');
    expect((await refused(webhooks.redeliver('acme', view.id, 'e1'))).code).toBe('NOT_FOUND');
    await webhooks.remove('default', view.id);
    expect((await refused(webhooks.remove('default', view.id))).code).toBe('NOT_FOUND');
  });
});
