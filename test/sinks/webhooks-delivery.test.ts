/**
 * Webhook deliveries end to end: a real server, registrations over REST, real node:http
 * receivers. Signatures (ours and Standard Webhooks'), retries against the schedule, dead letters
 * and redelivery, 410, the circuit breaker, per-key order under concurrent writers, transforms.
 */
import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { hasTool } from '../helpers/optional-tool.js';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

let server: TestServer;
const receivers: Receiver[] = [];

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.baseUrl}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${server.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

async function sql(text: string): Promise<any> {
  const reply = await call('POST', '/query', { sql: text });
  expect(reply.status, `${text}: ${JSON.stringify(reply.body)}`).toBe(200);
  return reply.body;
}

async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
}

async function register(spec: Record<string, unknown>): Promise<string> {
  const created = await call('POST', '/webhooks', spec);
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect(JSON.stringify(created.body)).not.toContain(String(spec['secret']));
  return created.body.id as string;
}

async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server?.close();
  await Promise.all(receivers.map((r) => r.close()));
});

describe('webhook deliveries', () => {
  it("posts each change with the spec's headers; both signatures verify over the exact body", async () => {
    const r = await receiver();
    await sql('CREATE TABLE orders (id INT PRIMARY KEY, status TEXT, total NUMERIC(10,2))');
    const secret = 'whsec_' + Buffer.from('a-test-secret-of-enough-bytes!!').toString('base64');
    await register({ url: r.url, secret, tables: ['orders'] });
    await sql("INSERT INTO orders VALUES (1, 'new', 9.50)");
    await sql("UPDATE orders SET status = 'paid' WHERE id = 1");
    await sql('DELETE FROM orders WHERE id = 1');
    await r.until((got) => got.length >= 3);
    const [insert, update, remove] = r.received;
    for (const got of r.received) {
      expect(got.headers['content-type']).toBe('application/json');
      expect(got.headers['x-svc-signature']).toBe(`sha256=${createHmac('sha256', secret).update(got.body).digest('hex')}`);
      const event = JSON.parse(got.body.toString('utf8'));
      expect(got.headers['x-svc-event-id']).toBe(event.event_id);
      expect(new Date(String(got.headers['x-svc-timestamp'])).toISOString()).toBe(got.headers['x-svc-timestamp']);
      const verified = new Webhook(secret).verify(got.body.toString('utf8'), {
        'webhook-id': String(got.headers['webhook-id']),
        'webhook-timestamp': String(got.headers['webhook-timestamp']),
        'webhook-signature': String(got.headers['webhook-signature']),
      });
      expect(verified).toEqual(event);
    }
    expect(JSON.parse(insert!.body.toString())).toMatchObject({
      operation: 'INSERT',
      table: 'orders',
      key: { id: 1 },
      value: { id: 1, status: 'new', total: '9.50' },
      old_value: null,
    });
    expect(JSON.parse(update!.body.toString())).toMatchObject({ operation: 'UPDATE', old_value: { status: 'new' }, value: { status: 'paid' } });
    expect(JSON.parse(remove!.body.toString())).toMatchObject({ operation: 'DELETE', value: null, old_value: { id: 1 } });
  });

  it('retries on the schedule (first at once, then about 100 and 200 ms) and records the attempts', async () => {
    const r = await receiver(({ index }) => ({ status: index < 2 ? 500 : 200 }));
    await sql('CREATE TABLE retried (id INT PRIMARY KEY)');
    const id = await register({ url: r.url, secret: 'retry-secret', tables: ['retried'] });
    await sql('INSERT INTO retried VALUES (1)');
    await r.until((got) => got.some((x) => x.status === 200));
    const times = r.received.map((x) => x.atMs);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(75);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(150);
    const records = await until(
      () => call('GET', `/webhooks/${id}/deliveries?status=delivered`),
      (x) => x.body?.deliveries?.length === 1,
    );
    expect(records.body.deliveries[0]).toMatchObject({ status: 'delivered', attempts: 3, last_status: 200 });
    expect(records.body.deliveries[0].errors.map((e: { status: number }) => e.status)).toEqual([500, 500]);
  });

  it('dead-letters after the last retry, and redelivers on request', async () => {
    const r = await receiver(() => ({ status: 503 }));
    await sql('CREATE TABLE dead (id INT PRIMARY KEY)');
    const id = await register({ url: r.url, secret: 'dead-secret', tables: ['dead'], retry: { max_retries: 1, initial_retry_delay_ms: 10 } });
    await sql('INSERT INTO dead VALUES (7)');
    const dead = await until(
      () => call('GET', `/webhooks/${id}/deliveries?status=dead_lettered`),
      (x) => x.body?.deliveries?.length === 1,
    );
    const record = dead.body.deliveries[0];
    expect(record).toMatchObject({ status: 'dead_lettered', attempts: 2 });
    r.respond = () => ({ status: 200 });
    const again = await call('POST', `/webhooks/${id}/deliveries/${record.event_id}/retry`);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ event_id: record.event_id, status: 'delivered' });
    expect(r.accepted().map((e) => e.key)).toEqual([{ id: 7 }]);
    expect((await call('POST', `/webhooks/${id}/deliveries/${record.event_id}/retry`)).status).toBe(404);
  });

  it('410 Gone disables the webhook, visible in GET', async () => {
    const r = await receiver(() => ({ status: 410 }));
    await sql('CREATE TABLE gone (id INT PRIMARY KEY)');
    const id = await register({ url: r.url, secret: 'gone-secret', tables: ['gone'] });
    await sql('INSERT INTO gone VALUES (1)');
    const shown = await until(
      () => call('GET', `/webhooks/${id}`),
      (x) => x.body?.enabled === false,
    );
    expect(shown.body).toMatchObject({ enabled: false, disabled_reason: expect.stringContaining('410') });
    await sql('INSERT INTO gone VALUES (2)');
    await new Promise((r2) => setTimeout(r2, 300));
    expect(r.received.length).toBe(1);
  });

  it('the circuit breaker opens, lets a trial through after its timeout, and closes', async () => {
    const r = await receiver(() => ({ status: 500 }));
    await sql('CREATE TABLE flaky (id INT PRIMARY KEY)');
    const id = await register({
      url: r.url,
      secret: 'breaker-secret',
      tables: ['flaky'],
      retry: { max_retries: 10, initial_retry_delay_ms: 10, max_retry_delay_ms: 20 },
      circuit_breaker: { failure_threshold: 3, success_threshold: 1, timeout_secs: 1, half_open_max_calls: 1 },
    });
    await sql('INSERT INTO flaky VALUES (1)');
    const open = await until(
      () => call('GET', `/webhooks/${id}`),
      (x) => x.body?.circuit_breaker?.status?.state === 'open',
    );
    expect(open.body.circuit_breaker.status).toMatchObject({ state: 'open', opened_at: expect.any(String) });
    const attemptsWhenOpened = r.received.length;
    await new Promise((r2) => setTimeout(r2, 500));
    expect(r.received.length).toBe(attemptsWhenOpened); // open: nothing is sent
    r.respond = () => ({ status: 200 });
    const closed = await until(
      () => call('GET', `/webhooks/${id}`),
      (x) => x.body?.circuit_breaker?.status?.state === 'closed',
    );
    expect(closed.body.circuit_breaker.status.state).toBe('closed');
    expect(r.accepted().length).toBe(1);
  });

  it('keeps per-key order under concurrent writers and a slow receiver, keys in parallel', async () => {
    const r = await receiver(() => ({ status: 200, delayMs: Math.floor(Math.random() * 15) }));
    await sql('CREATE TABLE counters (k INT PRIMARY KEY, n INT NOT NULL)');
    await register({ url: r.url, secret: 'order-secret', tables: ['counters'], operations: ['INSERT', 'UPDATE'] });
    const keys = 8;
    const rounds = 15;
    await sql(`INSERT INTO counters SELECT g, 0 FROM generate_series(1, ${keys}) g`);
    await Promise.all(
      Array.from({ length: keys }, async (_, i) => {
        for (let n = 1; n <= rounds; n++) await sql(`UPDATE counters SET n = ${n} WHERE k = ${i + 1}`);
      }),
    );
    await r.until((got) => got.length >= keys * (rounds + 1), 60_000);
    const byKey = new Map<number, number[]>();
    for (const e of r.accepted()) byKey.set(e.key.k, [...(byKey.get(e.key.k) ?? []), e.value.n]);
    for (let k = 1; k <= keys; k++) expect(byKey.get(k)).toEqual(Array.from({ length: rounds + 1 }, (_, n) => n));
  });

  it('filters: columns (an UPDATE passes when a listed column changed) and a predicate with OLD and NEW', async () => {
    const cols = await receiver();
    const pred = await receiver();
    await sql('CREATE TABLE payments (id INT PRIMARY KEY, status TEXT, amount INT, note TEXT)');
    const colsId = await register({
      url: cols.url,
      secret: 'cols-secret',
      tables: ['payments'],
      operations: ['UPDATE'],
      filter: { columns: { payments: ['status'] } },
    });
    await register({
      url: pred.url,
      secret: 'pred-secret',
      tables: ['payments'],
      operations: ['INSERT', 'UPDATE', 'DELETE'],
      filter: { predicate: "NEW.status = 'paid' AND OLD.status IS DISTINCT FROM 'paid' OR amount > 100" },
    });
    await sql("INSERT INTO payments VALUES (1, 'new', 10, NULL), (2, 'new', 500, NULL)");
    await sql("UPDATE payments SET note = 'x' WHERE id = 1");
    await sql("UPDATE payments SET status = 'paid' WHERE id = 1");
    await sql("UPDATE payments SET note = 'y' WHERE id = 1");
    await sql('DELETE FROM payments WHERE id = 2');
    await cols.until((got) => got.length >= 1);
    await pred.until((got) => got.length >= 3);
    await new Promise((r) => setTimeout(r, 300));
    expect(cols.accepted().map((e) => [e.operation, e.value.status])).toEqual([['UPDATE', 'paid']]);
    // INSERT of 2 (amount > 100), the UPDATE to paid, the DELETE of 2 (bare names are the old row).
    expect(pred.accepted().map((e) => [e.operation, e.key.id])).toEqual([
      ['INSERT', 2],
      ['UPDATE', 1],
      ['DELETE', 2],
    ]);
    const shown = await call('GET', `/webhooks/${colsId}`);
    expect(shown.body.stats.filtered).toBeGreaterThanOrEqual(2);
    const refused = await call('POST', '/webhooks', { url: pred.url, secret: 's', tables: ['payments'], filter: { predicate: 'nope > 1' } });
    expect(refused.status).toBe(422);
    expect((await call('GET', '/webhooks')).body.webhooks.some((w: { filter: { predicate?: string } | null }) => w.filter?.predicate === 'nope > 1')).toBe(
      false,
    );
  });

  it('a template that exhausts its memory dead-letters its event; the server and the next events go on', async () => {
    const r = await receiver();
    await sql('CREATE TABLE bomb (id INT PRIMARY KEY)');
    const blowUp =
      '{% set s = "xxxxxxxx" %}{% if key.id == 1 %}{% for i in range(30) %}{% set s = s ~ s %}{% endfor %}{% endif %}{{ s | replace("x", "yyyy") | length }}';
    const id = await register({ url: r.url, secret: 'bomb-secret', tables: ['bomb'], transform: { template: blowUp, content_type: 'text/plain' } });
    await sql('INSERT INTO bomb VALUES (1)');
    await sql('INSERT INTO bomb VALUES (2)');
    await r.until((got) => got.length >= 1, 30_000);
    expect(r.received[0]!.body.toString()).toBe('32');
    const dead = await until(
      () => call('GET', `/webhooks/${id}/deliveries?status=dead_lettered`),
      (x) => x.body?.deliveries?.length === 1,
      30_000,
    );
    expect(dead.body.deliveries[0].errors[0].error).toMatch(/template/);
    expect((await call('GET', '/health')).status).toBe(200);
  });

  it('/metrics has the webhook series', async () => {
    const response = await fetch(`${server.baseUrl}/api/v1/metrics`, { headers: { authorization: `Bearer ${server.apiKey}` } });
    const text = await response.text();
    expect(text).toMatch(/svc_webhook_delivery_total\{status="success",webhook="[0-9A-Z]{26}"\} \d+/);
    expect(text).toMatch(/svc_webhook_delivery_duration_seconds_bucket\{le="0.005",webhook=/);
    expect(text).toMatch(/svc_webhook_retry_total\{webhook=/);
    expect(text).toMatch(/svc_circuit_breaker_state\{webhook="[0-9A-Z]{26}",database="default"\} [012]/);
    expect(text).toMatch(/svc_event_queue_size\{queue_type="webhook",webhook=/);
    expect(text).toMatch(/svc_cdc_events_filtered_total\{webhook="[0-9A-Z]{26}",database="default"\} \d+/);
    // promtool is installed by .ci/run; the series above must pass its lint as the rest of /metrics does.
    if (hasTool('promtool')) {
      const lint = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
      expect(lint.status, lint.stdout + lint.stderr).toBe(0);
    }
  });

  it('template and JSONPath transforms; the signature covers the bytes sent', async () => {
    const t = await receiver();
    const j = await receiver();
    await sql('CREATE TABLE shaped (id INT PRIMARY KEY, name TEXT)');
    await register({
      url: t.url,
      secret: 'tpl-secret',
      tables: ['shaped'],
      transform: { template: 'op={{ operation }} id={{ key.id }} name={{ value.name }}', content_type: 'text/plain' },
    });
    await register({
      url: j.url,
      secret: 'jp-secret',
      tables: ['shaped'],
      transform: { jsonpath: { op: '$.operation', id: '$.key.id', name: '$.value.name' } },
    });
    await sql("INSERT INTO shaped VALUES (3, 'ann')");
    await t.until((got) => got.length >= 1);
    await j.until((got) => got.length >= 1);
    expect(t.received[0]!.body.toString()).toBe('op=INSERT id=3 name=ann');
    expect(t.received[0]!.headers['content-type']).toBe('text/plain');
    expect(t.received[0]!.headers['x-svc-signature']).toBe(`sha256=${createHmac('sha256', 'tpl-secret').update(t.received[0]!.body).digest('hex')}`);
    expect(JSON.parse(j.received[0]!.body.toString())).toEqual({ op: 'INSERT', id: 3, name: 'ann' });
  });
});
