/**
 * The webhook registration API (/api/v1/webhooks) against a real server: create, list, get,
 * patch, delete; bad registrations refused with the envelope and nothing stored; admin role and
 * tenant scope; the secret never shown; webhooks survive a restart and `svcdb replay` (they are
 * catalog facts in the log). Deliveries themselves are tested by the webhook registry's suites.
 */
import { rm } from 'node:fs/promises';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, bearer, newKey, untilStatus } from '../helpers/auth.js';
import { runCli } from '../helpers/cli.js';
import { startTestServer, TEST_API_KEY, type TestServer } from '../helpers/sql-server.js';
import { hasOpenssl, makeTestCert } from '../helpers/tls-cert.js';

const SECRET = 'whsec_c2VjcmV0LW5ldmVyLXNob3duLWFueXdoZXJl';
const ROTATED = 'rotated-secret-also-never-shown';
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

let server: TestServer;
let dataDir = '';
const who: Record<string, Record<string, string>> = {};
/** Every answer of the suite, as text: the secrets must appear in none. */
const answers: string[] = [];

async function call(as: string, method: string, path: string, body?: unknown): Promise<{ status: number; headers: Headers; body: any }> {
  const answer = await api(server.baseUrl, path, { method, headers: who[as]!, ...(body === undefined ? {} : { body }) });
  answers.push(JSON.stringify(answer.body ?? null));
  return answer;
}

const registration = (extra: Record<string, unknown> = {}) => ({ url: 'https://receiver.example.com/hooks', secret: SECRET, tables: ['orders'], ...extra });

async function sql(text: string, as = 'admin'): Promise<void> {
  const r = await call(as, 'POST', '/query', { sql: text });
  expect(r.status, `${text}: ${JSON.stringify(r.body)}`).toBe(200);
}

beforeAll(async () => {
  server = await startTestServer({ keepDataDir: true });
  dataDir = server.dataDir;
  who.admin = bearer(TEST_API_KEY);
  who.writer = bearer((await newKey(dataDir, { role: 'read_write', name: 'writer' })).key);
  who.reader = bearer((await newKey(dataDir, { role: 'read_only', name: 'reader' })).key);
  who.acmeAdmin = bearer((await newKey(dataDir, { role: 'admin', tenant: 'acme' })).key);
  await untilStatus(server.baseUrl, who.acmeAdmin.authorization!.slice(7), 200);
  await sql('CREATE TABLE orders (id INT PRIMARY KEY, status TEXT, total INT)');
  await sql('CREATE TABLE items (id INT PRIMARY KEY, name TEXT)');
  await sql('CREATE TABLE sales.refunds (id INT PRIMARY KEY, amount INT)');
  await sql('CREATE VIEW big_orders AS SELECT * FROM orders WHERE total > 100');
}, 60_000);

afterAll(async () => {
  await server?.close();
  if (dataDir !== '') await rm(dataDir, { recursive: true, force: true });
});

describe('POST /webhooks', () => {
  it('registers: 201 with the webhook, its id and the defaults, without the secret', async () => {
    const r = await call('admin', 'POST', '/webhooks', registration());
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.id).toMatch(ULID);
    expect(r.headers.get('location')).toBe(`/api/v1/webhooks/${r.body.id}`);
    expect(r.body).toMatchObject({
      url: 'https://receiver.example.com/hooks',
      tables: ['orders'],
      operations: ['INSERT', 'UPDATE', 'DELETE'],
      filter: null,
      transform: null,
      retry: { max_retries: 3, initial_retry_delay_ms: 100, max_retry_delay_ms: 30_000, multiplier: 2, jitter: true, timeout_secs: 30 },
      circuit_breaker: {
        failure_threshold: 5,
        success_threshold: 2,
        timeout_secs: 60,
        half_open_max_calls: 3,
        status: { state: 'closed', failure_count: 0, opened_at: null },
      },
      tls: null,
      enabled: true,
      disabled_reason: null,
      stats: { delivered: 0, failed_attempts: 0, dead_lettered: 0, filtered: 0, pending: 0, last_sequence: null },
    });
    expect(r.body.created_at).toBe(r.body.updated_at);
    expect(Object.keys(r.body)).not.toContain('secret');
  });

  it('takes every field: tables in other schemas, operations, filter, transform, retry, breaker, TLS', async () => {
    const tls = hasOpenssl() ? await makeTestCert() : null;
    try {
      const body = registration({
        tables: ['orders', 'sales.refunds', 'orders'],
        operations: ['INSERT', 'UPDATE', 'TRUNCATE', 'SCHEMA_CHANGE'],
        // The predicate must compile against every table of the webhook (both have an id).
        filter: { columns: { orders: ['status'] }, predicate: 'NEW.id > OLD.id' },
        transform: { template: 'order {{ key.id }} is {{ value.status }}', content_type: 'text/plain; charset=utf-8' },
        retry: { max_retries: 5, jitter: false },
        circuit_breaker: { failure_threshold: 2 },
        enabled: false,
        ...(tls ? { tls: { ca: tls.cert, cert: tls.cert, key: tls.key } } : {}),
      });
      const r = await call('admin', 'POST', '/webhooks', body);
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(r.body).toMatchObject({
        tables: ['orders', 'sales.refunds'],
        operations: ['INSERT', 'UPDATE', 'TRUNCATE', 'SCHEMA_CHANGE'],
        // The predicate must compile against every table of the webhook (both have an id).
        filter: { columns: { orders: ['status'] }, predicate: 'NEW.id > OLD.id' },
        transform: { template: 'order {{ key.id }} is {{ value.status }}', content_type: 'text/plain; charset=utf-8' },
        retry: { max_retries: 5, jitter: false, initial_retry_delay_ms: 100, timeout_secs: 30 },
        circuit_breaker: { failure_threshold: 2, success_threshold: 2 },
        enabled: false,
        disabled_reason: 'disabled by PATCH',
        tls: tls ? { ca: true, cert: true, key: true } : null,
      });
      // The PEM key is never shown either.
      if (tls) expect(JSON.stringify(r.body)).not.toContain('PRIVATE KEY');
      expect((await call('admin', 'DELETE', `/webhooks/${r.body.id}`)).status).toBe(200);
    } finally {
      await tls?.remove();
    }
  });

  it('the in-process call takes the same definition and shows in the REST API', async () => {
    const view = await server.webhooks.create('default', { url: 'http://10.0.0.7:9000/in-process', secret: 'in-process-secret', tables: ['items'] });
    const r = await call('admin', 'GET', `/webhooks/${view.id}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual(view);
    expect((await call('admin', 'DELETE', `/webhooks/${view.id}`)).status).toBe(200);
  });
});

describe('bad registrations are refused with the envelope, and nothing is stored', () => {
  const cases: [string, Record<string, unknown>, number, string, string | null][] = [
    ['a URL that does not parse', registration({ url: 'not a url' }), 422, 'VALIDATION_ERROR', 'url'],
    ['an ftp:// URL', registration({ url: 'ftp://receiver.example.com/x' }), 422, 'VALIDATION_ERROR', 'url'],
    ['a URL with credentials', registration({ url: 'https://user:pw@receiver.example.com/' }), 422, 'VALIDATION_ERROR', 'url'],
    ['a URL that is not a string', registration({ url: 42 }), 422, 'VALIDATION_ERROR', null],
    ['an unknown table', registration({ tables: ['orders', 'nope'] }), 404, 'TABLE_NOT_FOUND', 'tables'],
    ['a view', registration({ tables: ['big_orders'] }), 404, 'TABLE_NOT_FOUND', 'tables'],
    ['no tables', registration({ tables: [] }), 422, 'VALIDATION_ERROR', 'tables'],
    ['an unknown operation', registration({ operations: ['INSERT', 'UPSERT'] }), 422, 'VALIDATION_ERROR', 'operations.1'],
    ["SNAPSHOT (a CDC stream's, not a webhook's)", registration({ operations: ['SNAPSHOT'] }), 422, 'VALIDATION_ERROR', 'operations.0'],
    ['a template that does not parse', registration({ transform: { template: '{% if %}' } }), 422, 'VALIDATION_ERROR', 'transform.template'],
    [
      'a template whose content type is not one',
      registration({ transform: { template: 'x', content_type: 'nope' } }),
      422,
      'VALIDATION_ERROR',
      'transform.content_type',
    ],
    [
      'a JSONPath that does not compile',
      registration({ transform: { jsonpath: { id: '$.value[?(@.a ===== 1)]' } } }),
      422,
      'VALIDATION_ERROR',
      'transform.jsonpath',
    ],
    ['a JSONPath without $', registration({ transform: { jsonpath: { id: 'key.id' } } }), 422, 'VALIDATION_ERROR', 'transform.jsonpath'],
    ['both template and jsonpath', registration({ transform: { template: 'x', jsonpath: { a: '$.table' } } }), 422, 'VALIDATION_ERROR', 'transform'],
    ['negative retries', registration({ retry: { max_retries: -1 } }), 422, 'VALIDATION_ERROR', 'retry.max_retries'],
    [
      'a cap below the first delay',
      registration({ retry: { initial_retry_delay_ms: 500, max_retry_delay_ms: 100 } }),
      422,
      'VALIDATION_ERROR',
      'retry.max_retry_delay_ms',
    ],
    ['retries as text', registration({ retry: { max_retries: 'three' } }), 422, 'VALIDATION_ERROR', null],
    ['a breaker threshold of 0', registration({ circuit_breaker: { failure_threshold: 0 } }), 422, 'VALIDATION_ERROR', 'circuit_breaker.failure_threshold'],
    ['an unknown field', registration({ colour: 'red' }), 422, 'VALIDATION_ERROR', null],
    ['an unknown retry field', registration({ retry: { tries: 3 } }), 422, 'VALIDATION_ERROR', null],
    ['an unknown filter field', registration({ filter: { where: 'true' } }), 422, 'VALIDATION_ERROR', null],
    ['an empty secret', registration({ secret: '' }), 422, 'VALIDATION_ERROR', 'secret'],
    ['a whsec_ secret that is not base64', registration({ secret: 'whsec_not base64!' }), 422, 'VALIDATION_ERROR', 'secret'],
    ['a secret past 1024 characters', registration({ secret: 'x'.repeat(1025) }), 422, 'VALIDATION_ERROR', 'secret'],
    ['no secret', { url: 'https://receiver.example.com/', tables: ['orders'] }, 422, 'VALIDATION_ERROR', null],
    ['a CA that is not PEM', registration({ tls: { ca: 'not a certificate' } }), 422, 'VALIDATION_ERROR', 'tls.ca'],
    ['a client certificate without its key', registration({ tls: { cert: 'x' } }), 422, 'VALIDATION_ERROR', 'tls.key'],
    ['TLS settings for an http URL', registration({ url: 'http://receiver.example.com/', tls: { cert: 'x', key: 'y' } }), 422, 'VALIDATION_ERROR', 'tls'],
    ['an empty predicate', registration({ filter: { predicate: ' ' } }), 422, 'VALIDATION_ERROR', 'filter.predicate'],
  ];

  it.each(cases)('%s', async (_name, body, status, code, field) => {
    const before = (await call('admin', 'GET', '/webhooks')).body.total_count as number;
    const r = await call('admin', 'POST', '/webhooks', body);
    expect(r.status, JSON.stringify(r.body)).toBe(status);
    expect(r.body.error).toMatchObject({ code, message: expect.any(String), details: expect.any(Object), request_id: expect.any(String) });
    if (field !== null) expect(r.body.error.details.field).toBe(field);
    if (code === 'TABLE_NOT_FOUND') expect(r.body.error.details.table).toBe((body.tables as string[]).at(-1));
    expect((await call('admin', 'GET', '/webhooks')).body.total_count).toBe(before);
  });

  it('any near-valid body gets a 2xx or a 4xx envelope, never a 5xx (fuzz)', async () => {
    const field = fc.constantFrom(
      'url',
      'secret',
      'tables',
      'operations',
      'filter',
      'transform',
      'retry',
      'circuit_breaker',
      'tls',
      'enabled',
      '__proto__',
      'constructor',
    );
    const value = fc.oneof(
      fc.jsonValue(),
      fc.record({ template: fc.string(), content_type: fc.string() }, { requiredKeys: [] }),
      fc.record({ jsonpath: fc.dictionary(fc.string(), fc.string()) }),
      fc.record({ columns: fc.dictionary(fc.string(), fc.array(fc.string())), predicate: fc.string() }, { requiredKeys: [] }),
      fc.record({ max_retries: fc.integer(), multiplier: fc.double(), timeout_secs: fc.double() }, { requiredKeys: [] }),
      fc.webUrl(),
    );
    await fc.assert(
      fc.asyncProperty(fc.dictionary(field, value, { maxKeys: 4 }), fc.boolean(), async (changes, patch) => {
        const body = patch ? changes : { ...registration(), ...changes };
        const r = await call('admin', patch ? 'PATCH' : 'POST', patch ? '/webhooks/01ARZ3NDEKTSV4RRFFQ69G5FAV' : '/webhooks', body);
        expect(r.status, JSON.stringify(body)).toBeLessThan(500);
        if (r.status >= 400) expect(r.body.error.code).toEqual(expect.any(String));
        if (r.status === 201) expect((await call('admin', 'DELETE', `/webhooks/${r.body.id}`)).status).toBe(200);
      }),
      { numRuns: 150, seed: 12 },
    );
  }, 60_000);

  it('a body that is not JSON is 400', async () => {
    const response = await fetch(`${server.baseUrl}/api/v1/webhooks`, {
      method: 'POST',
      headers: { ...who.admin, 'content-type': 'application/json' },
      body: '{"url":',
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('INVALID_QUERY');
  });
});

describe('GET, PATCH, DELETE /webhooks/{id}', () => {
  let id = '';
  beforeAll(async () => {
    const r = await call('admin', 'POST', '/webhooks', registration({ tables: ['orders', 'items'] }));
    expect(r.status).toBe(201);
    id = r.body.id;
  });

  it("GET /webhooks lists the tenant's webhooks with total_count, oldest first; GET /webhooks/{id} shows one", async () => {
    const list = await call('admin', 'GET', '/webhooks');
    expect(list.status).toBe(200);
    expect(list.body.total_count).toBe(list.body.webhooks.length);
    const ids = list.body.webhooks.map((w: { id: string }) => w.id);
    expect(ids).toContain(id);
    expect([...ids].sort()).toEqual(ids);
    const one = await call('admin', 'GET', `/webhooks/${id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(list.body.webhooks.find((w: { id: string }) => w.id === id));
    expect(one.body.tables).toEqual(['orders', 'items']);
  });

  it('PATCH merges: retry and circuit_breaker key by key, other fields replaced; the secret can be rotated', async () => {
    const before = (await call('admin', 'GET', `/webhooks/${id}`)).body;
    const r = await call('admin', 'PATCH', `/webhooks/${id}`, {
      url: 'https://receiver.example.com/v2',
      retry: { max_retries: 0 },
      operations: ['DELETE'],
      secret: ROTATED,
      transform: { jsonpath: { id: '$.key.id', op: '$.operation' } },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({
      id,
      url: 'https://receiver.example.com/v2',
      operations: ['DELETE'],
      tables: ['orders', 'items'],
      retry: { ...before.retry, max_retries: 0 },
      circuit_breaker: before.circuit_breaker,
      transform: { jsonpath: { id: '$.key.id', op: '$.operation' } },
      created_at: before.created_at,
    });
    expect(r.body.updated_at >= before.updated_at).toBe(true);
    expect((await call('admin', 'GET', `/webhooks/${id}`)).body).toEqual(r.body);
    const cleared = await call('admin', 'PATCH', `/webhooks/${id}`, { transform: null });
    expect(cleared.body.transform).toBeNull();
  });

  it('PATCH enabled false, then true: disabled_reason set, then cleared (as after a 410)', async () => {
    const off = await call('admin', 'PATCH', `/webhooks/${id}`, { enabled: false });
    expect(off.body).toMatchObject({ enabled: false, disabled_reason: 'disabled by PATCH' });
    const on = await call('admin', 'PATCH', `/webhooks/${id}`, { enabled: true });
    expect(on.body).toMatchObject({ enabled: true, disabled_reason: null });
  });

  it('a bad PATCH is refused and changes nothing', async () => {
    const before = (await call('admin', 'GET', `/webhooks/${id}`)).body;
    for (const [patch, status] of [
      [{ url: 'ftp://x.example.com/' }, 422],
      [{ tables: ['nope'] }, 404],
      [{ operations: ['MERGE'] }, 422],
      [{ retry: { multiplier: 0.5 } }, 422],
      [{ secret: '' }, 422],
      [{ colour: 'red' }, 422],
      [{}, 422],
    ] as const) {
      const r = await call('admin', 'PATCH', `/webhooks/${id}`, patch);
      expect(r.status, JSON.stringify(patch)).toBe(status);
    }
    expect((await call('admin', 'GET', `/webhooks/${id}`)).body).toEqual(before);
  });

  it('GET /webhooks/{id}/deliveries lists delivery records; a retry of an event that is not dead-lettered is 404', async () => {
    const r = await call('admin', 'GET', `/webhooks/${id}/deliveries?status=dead_lettered&limit=10`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ webhook_id: id, deliveries: [] });
    expect((await call('admin', 'GET', `/webhooks/${id}/deliveries?status=lost`)).status).toBe(400);
    expect((await call('admin', 'GET', `/webhooks/${id}/deliveries?limit=0`)).status).toBe(400);
    const retry = await call('admin', 'POST', `/webhooks/${id}/deliveries/01KB0ZQ9W1C6M3V5J7D2A8X4RT/retry`);
    expect(retry.status).toBe(404);
    expect(retry.body.error.code).toBe('NOT_FOUND');
  });

  it('an unknown id is 404 NOT_FOUND everywhere', async () => {
    const unknown = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
    for (const [method, path, body] of [
      ['GET', `/webhooks/${unknown}`],
      ['PATCH', `/webhooks/${unknown}`, { enabled: false }],
      ['DELETE', `/webhooks/${unknown}`],
      ['GET', `/webhooks/${unknown}/deliveries`],
      ['POST', `/webhooks/${unknown}/deliveries/01KB0ZQ9W1C6M3V5J7D2A8X4RT/retry`],
    ] as const) {
      const r = await call('admin', method, path, body);
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body.error.code).toBe('NOT_FOUND');
    }
  });

  it('DELETE answers 200 {success, id, deleted_at}; then the webhook is gone', async () => {
    const r = await call('admin', 'DELETE', `/webhooks/${id}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, id, deleted_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    expect((await call('admin', 'GET', `/webhooks/${id}`)).status).toBe(404);
    expect((await call('admin', 'DELETE', `/webhooks/${id}`)).status).toBe(404);
    expect((await call('admin', 'GET', '/webhooks')).body.webhooks.map((w: { id: string }) => w.id)).not.toContain(id);
  });
});

describe('roles and tenants', () => {
  let id = '';
  beforeAll(async () => {
    id = (await call('admin', 'POST', '/webhooks', registration())).body.id;
  });

  it('a read_write or read_only credential gets 403 on every route', async () => {
    for (const as of ['writer', 'reader']) {
      for (const [method, path, body] of [
        ['POST', '/webhooks', registration()],
        ['GET', '/webhooks'],
        ['GET', `/webhooks/${id}`],
        ['PATCH', `/webhooks/${id}`, { enabled: false }],
        ['DELETE', `/webhooks/${id}`],
        ['GET', `/webhooks/${id}/deliveries`],
        ['POST', `/webhooks/${id}/deliveries/01KB0ZQ9W1C6M3V5J7D2A8X4RT/retry`],
      ] as const) {
        const r = await call(as, method, path, body);
        expect(r.status, `${as} ${method} ${path}`).toBe(403);
        expect(r.body.error.code).toBe('AUTHORIZATION_DENIED');
      }
    }
    expect((await call('admin', 'GET', `/webhooks/${id}`)).body.enabled).toBe(true);
  });

  it("another tenant's admin gets 404 for the webhook (as for an unknown id) and does not list it", async () => {
    for (const [method, path, body] of [
      ['GET', `/webhooks/${id}`],
      ['PATCH', `/webhooks/${id}`, { enabled: false }],
      ['DELETE', `/webhooks/${id}`],
      ['GET', `/webhooks/${id}/deliveries`],
      ['POST', `/webhooks/${id}/deliveries/01KB0ZQ9W1C6M3V5J7D2A8X4RT/retry`],
    ] as const) {
      const r = await call('acmeAdmin', method, path, body);
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body.error.code).toBe('NOT_FOUND');
    }
    expect((await call('acmeAdmin', 'GET', '/webhooks')).body).toEqual({ webhooks: [], total_count: 0 });
    expect((await call('admin', 'GET', `/webhooks/${id}`)).body.enabled).toBe(true);
  });

  it('a tenant registers on its own tables only', async () => {
    const r = await call('acmeAdmin', 'POST', '/webhooks', registration());
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('TABLE_NOT_FOUND');
    await sql('CREATE TABLE orders (id INT PRIMARY KEY)', 'acmeAdmin');
    const mine = await call('acmeAdmin', 'POST', '/webhooks', registration());
    expect(mine.status).toBe(201);
    expect((await call('acmeAdmin', 'GET', '/webhooks')).body.total_count).toBe(1);
    expect((await call('admin', 'GET', `/webhooks/${mine.body.id}`)).status).toBe(404);
  });
});

describe('webhooks are facts in the log', () => {
  it('survive a restart and svcdb replay, identical', async () => {
    const before = (await call('admin', 'GET', '/webhooks')).body;
    const acme = (await call('acmeAdmin', 'GET', '/webhooks')).body;
    expect(before.total_count).toBeGreaterThan(0);
    await server.close();
    server = await startTestServer({ dataDir });
    expect((await call('admin', 'GET', '/webhooks')).body).toEqual(before);
    await server.close();
    const replayed = await runCli(['replay', '--data', dataDir]);
    expect(replayed.code, replayed.stderr).toBe(0);
    server = await startTestServer({ dataDir });
    expect((await call('admin', 'GET', '/webhooks')).body).toEqual(before);
    expect((await call('acmeAdmin', 'GET', '/webhooks')).body).toEqual(acme);
  }, 60_000);

  it('the secrets appeared in no answer', () => {
    expect(answers.length).toBeGreaterThan(50);
    for (const text of answers) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(ROTATED);
      expect(text).not.toContain('in-process-secret');
    }
  });
});

describe('SVC_WEBHOOK_ALLOWED_CIDRS', () => {
  let limited: TestServer;
  beforeAll(async () => {
    limited = await startTestServer({ env: { SVC_WEBHOOK_ALLOWED_CIDRS: '10.0.0.0/8, fd00::/8' } });
    const r = await api(limited.baseUrl, '/query', { headers: bearer(TEST_API_KEY), body: { sql: 'CREATE TABLE orders (id INT PRIMARY KEY)' } });
    expect(r.status).toBe(200);
  });
  afterAll(() => limited?.close());

  const post = (url: string) => api(limited.baseUrl, '/webhooks', { headers: bearer(TEST_API_KEY), body: { url, secret: SECRET, tables: ['orders'] } });

  it('refuses a receiver outside the ranges (an address, or a name resolving outside) and takes one inside', async () => {
    for (const url of ['http://127.0.0.1:9000/', 'http://localhost:9000/', 'http://[::1]:9000/', 'http://192.168.1.10/']) {
      const r = await post(url);
      expect(r.status, url).toBe(422);
      expect(r.body.error.details).toMatchObject({ field: 'url', reason: 'host is outside the allowed address ranges' });
    }
    expect((await post('http://10.1.2.3:8080/hooks')).status).toBe(201);
    expect((await post('https://[fd00::5]/hooks')).status).toBe(201);
  });

  it('a malformed range stops the start', async () => {
    await expect(startTestServer({ env: { SVC_WEBHOOK_ALLOWED_CIDRS: '10.0.0.0/33' } })).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
  });
});
