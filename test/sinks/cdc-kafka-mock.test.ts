/**
 * CDC streams end to end against librdkafka's mock cluster: the statements over POST /query, the
 * event shape, per-key order, pause/resume/drop, restarts, and kcat as the independent reader.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockKafka, skipMockKafka, type MockKafka } from '../helpers/kafka-mock.js';
import { patchKafkajsForMockCluster } from '../helpers/kafkajs-mock-patch.js';
import { messageText, readTopicWithKcat } from '../helpers/kcat.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

interface Event {
  event_id: string;
  timestamp: string;
  sequence: number;
  operation: string;
  database: string;
  table: string;
  key: Record<string, unknown> | null;
  value: Record<string, unknown> | null;
  old_value: Record<string, unknown> | null;
  transaction_id: string;
}

async function query(server: TestServer, sql: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.baseUrl}/api/v1/query`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ sql }),
  });
  return { status: response.status, body: await response.json() };
}

async function ok(server: TestServer, sql: string): Promise<any> {
  const reply = await query(server, sql);
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body;
}

async function events(brokers: string, topic: string): Promise<{ event: Event; partition: number; headers: Record<string, string | null> }[]> {
  const messages = await readTopicWithKcat(brokers, topic);
  return messages.map((m) => {
    const text = messageText(m);
    return { event: JSON.parse(text.value!) as Event, partition: m.partition, headers: text.headers };
  });
}

/** Waits until the topic holds `count` events of the stream (or fails after the timeout). */
async function waitForEvents(brokers: string, topic: string, count: number, timeoutMs = 20_000): Promise<Event[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = (await events(brokers, topic).catch(() => [])).map((e) => e.event);
    if (found.length >= count || Date.now() > deadline) return found.sort((a, b) => a.sequence - b.sequence);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function status(server: TestServer, name: string): Promise<Record<string, unknown>> {
  return (await ok(server, `SHOW CDC STREAM STATUS ${name}`)).data[0];
}

async function waitForState(
  server: TestServer,
  name: string,
  wanted: (s: Record<string, unknown>) => boolean,
  timeoutMs = 20_000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await status(server, name);
    if (wanted(s) || Date.now() > deadline) return s;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(skipMockKafka())('CDC streams to Kafka (librdkafka mock cluster)', () => {
  let mock: MockKafka;
  let server: TestServer;
  let dataDir: string;

  beforeAll(async () => {
    patchKafkajsForMockCluster();
    mock = await startMockKafka();
    server = await startTestServer({ keepDataDir: true });
    dataDir = server.dataDir;
  });

  afterAll(async () => {
    await server?.close();
    await mock?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('streams INSERT, UPDATE, DELETE, TRUNCATE and schema changes with full before-images, in order', async () => {
    await ok(server, 'CREATE TABLE orders (id INT PRIMARY KEY, item TEXT NOT NULL, qty BIGINT, price NUMERIC(10,2), at TIMESTAMPTZ)');
    const created = await ok(server, `CREATE CHANGE DATA CAPTURE ON orders TO KAFKA '${mock.brokers}'`);
    expect(created.data[0]).toMatchObject({ name: 'orders_to_default_orders', table: 'orders', destination: 'kafka', topic: 'default.orders', format: 'json' });
    await ok(server, "INSERT INTO orders VALUES (1, 'apple', 9007199254740993, 1.50, '2026-01-02T03:04:05Z'), (2, 'pear', 2, 2.00, NULL)");
    await ok(server, "UPDATE orders SET qty = 3, item = 'big pear' WHERE id = 2");
    await ok(server, 'DELETE FROM orders WHERE id = 1');
    await ok(server, 'ALTER TABLE orders ADD COLUMN note TEXT');
    await ok(server, "INSERT INTO orders (id, item, note) VALUES (3, 'fig', 'n')");
    await ok(server, 'TRUNCATE orders');
    const got = await waitForEvents(mock.brokers, 'default.orders', 7);
    expect(got.map((e) => e.operation)).toEqual(['INSERT', 'INSERT', 'UPDATE', 'DELETE', 'SCHEMA_CHANGE', 'INSERT', 'TRUNCATE']);
    const [a, b, upd, del, schema, ins, trunc] = got as [Event, Event, Event, Event, Event, Event, Event];
    expect(a).toMatchObject({ database: 'default', table: 'orders', key: { id: 1 }, old_value: null });
    expect(a.value).toEqual({ id: 1, item: 'apple', qty: '9007199254740993', price: '1.50', at: '2026-01-02T03:04:05Z' });
    expect(a.transaction_id).toBe(b.transaction_id);
    expect(upd.old_value).toEqual({ id: 2, item: 'pear', qty: 2, price: '2.00', at: null });
    expect(upd.value).toEqual({ id: 2, item: 'big pear', qty: 3, price: '2.00', at: null });
    expect(del).toMatchObject({ key: { id: 1 }, value: null, old_value: { id: 1, item: 'apple' } });
    expect(schema.value).toMatchObject({ ddl: 'ALTER', primary_key: ['id'] });
    expect((schema.value!['columns'] as { name: string }[]).map((c) => c.name)).toEqual(['id', 'item', 'qty', 'price', 'at', 'note']);
    expect(ins.value).toMatchObject({ id: 3, note: 'n' });
    expect(trunc).toMatchObject({ key: null, value: null, old_value: null });
    for (let i = 1; i < got.length; i++) expect(got[i]!.sequence).toBeGreaterThan(got[i - 1]!.sequence);
    expect(new Set(got.map((e) => e.event_id)).size).toBe(got.length);
    for (const e of got) expect(e.event_id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    const s = await waitForState(server, 'orders_to_default_orders', (x) => x['events_delivered'] === 7);
    expect(s).toMatchObject({ state: 'running', events_delivered: 7, delivery_errors: 0, last_sequence: got[6]!.sequence });
  });

  it('keys land in one partition each, with headers naming the event', async () => {
    const all = await events(mock.brokers, 'default.orders');
    const byKey = new Map<string, Set<number>>();
    for (const { event, partition, headers } of all) {
      expect(headers['svc-event-id']).toBe(event.event_id);
      expect(headers['svc-operation']).toBe(event.operation);
      if (!event.key) continue;
      const key = JSON.stringify(event.key);
      byKey.set(key, (byKey.get(key) ?? new Set()).add(partition));
    }
    for (const partitions of byKey.values()) expect(partitions.size).toBe(1);
  });

  it('refuses bad statements with stable codes', async () => {
    const missing = await query(server, `CREATE CHANGE DATA CAPTURE ON nope TO KAFKA '${mock.brokers}'`);
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('TABLE_NOT_FOUND');
    const dup = await query(server, `CREATE CHANGE DATA CAPTURE ON orders TO KAFKA '${mock.brokers}' AS 'orders_to_default_orders'`);
    expect(dup.status).toBe(409);
    const bad = await query(server, `CREATE CHANGE DATA CAPTURE ON orders TO KAFKA '${mock.brokers}' FORMAT XML`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'INVALID_QUERY', details: { position: expect.any(Number) } });
    const unknown = await query(server, 'ALTER CDC STREAM ghost PAUSE');
    expect(unknown.status).toBe(404);
    const brokers = await query(server, "CREATE CHANGE DATA CAPTURE ON orders TO KAFKA 'not a broker list'");
    expect(brokers.body.error.code).toBe('INVALID_QUERY');
  });

  it('pause keeps the offset, resume continues with nothing lost and nothing repeated', async () => {
    await ok(server, 'CREATE TABLE p (id INT PRIMARY KEY, v INT)');
    await ok(server, `CREATE CHANGE DATA CAPTURE ON p TO KAFKA '${mock.brokers}' TOPIC 'p-events' AS ps`);
    await ok(server, 'INSERT INTO p VALUES (1, 1)');
    await waitForEvents(mock.brokers, 'p-events', 1);
    await ok(server, 'ALTER CDC STREAM ps PAUSE');
    expect((await waitForState(server, 'ps', (x) => x['state'] === 'paused'))['state']).toBe('paused');
    for (let i = 2; i <= 20; i++) await ok(server, `INSERT INTO p VALUES (${i}, ${i})`);
    await new Promise((r) => setTimeout(r, 500));
    expect((await events(mock.brokers, 'p-events')).length).toBe(1);
    const shown = await ok(server, 'SHOW CDC STREAMS');
    expect(shown.data.find((r: { name: string }) => r.name === 'ps')).toMatchObject({ state: 'paused', topic: 'p-events', address: mock.brokers });
    await ok(server, 'ALTER CDC STREAM ps RESUME');
    const got = await waitForEvents(mock.brokers, 'p-events', 20);
    await new Promise((r) => setTimeout(r, 300));
    expect((await events(mock.brokers, 'p-events')).map((e) => e.event.key!['id']).sort((x, y) => Number(x) - Number(y))).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    expect(got.length).toBe(20);
  });

  it('survives a restart: definitions, paused state and offsets come back, nothing is sent twice', async () => {
    await ok(server, 'ALTER CDC STREAM ps PAUSE');
    await waitForState(server, 'ps', (x) => x['state'] === 'paused');
    const before = (await events(mock.brokers, 'default.orders')).length;
    await server.close();
    server = await startTestServer({ dataDir });
    await ok(server, "INSERT INTO orders VALUES (10, 'kiwi', 1, 1, NULL)");
    const got = await waitForEvents(mock.brokers, 'default.orders', before + 1);
    expect(got.length).toBe(before + 1);
    expect(got[got.length - 1]).toMatchObject({ operation: 'INSERT', key: { id: 10 } });
    expect((await status(server, 'ps'))['state']).toBe('paused');
    await ok(server, 'INSERT INTO p VALUES (21, 21)');
    await ok(server, 'ALTER CDC STREAM ps RESUME');
    await waitForEvents(mock.brokers, 'p-events', 21);
    await new Promise((r) => setTimeout(r, 300));
    expect((await events(mock.brokers, 'p-events')).length).toBe(21);
  });

  it('a snapshot of a 20,000-row table emits every row, then changes with no gap and no overlap', async () => {
    const rows = 20_000;
    await ok(server, 'CREATE TABLE s (id INT PRIMARY KEY, v TEXT)');
    await ok(server, `INSERT INTO s SELECT g, 'v' || g FROM generate_series(1, ${rows}) g`);
    await ok(server, `CREATE CHANGE DATA CAPTURE ON s TO KAFKA '${mock.brokers}' TOPIC 's-events' AS snap WITH (snapshot = true)`);
    await ok(server, "UPDATE s SET v = 'changed' WHERE id = 5");
    // Wait on the stream's own count, then read the topic once (kcat reading 100k messages is not free).
    const done = await waitForState(server, 'snap', (x) => Number(x['events_delivered']) >= rows + 1, 150_000);
    expect(Number(done['events_delivered'])).toBe(rows + 1);
    const got = await waitForEvents(mock.brokers, 's-events', rows + 1, 30_000);
    expect(got.length).toBe(rows + 1);
    const snapshot = got.slice(0, rows);
    expect(snapshot.every((e) => e.operation === 'SNAPSHOT')).toBe(true);
    expect(snapshot.map((e) => e.key!['id'])).toEqual(Array.from({ length: rows }, (_, i) => i + 1));
    expect(snapshot[4]!.value).toEqual({ id: 5, v: 'v5' });
    expect(got[rows]).toMatchObject({ operation: 'UPDATE', old_value: { id: 5, v: 'v5' }, value: { id: 5, v: 'changed' } });
    for (let i = 1; i < got.length; i++) expect(got[i]!.sequence).toBeGreaterThan(got[i - 1]!.sequence);
  }, 180_000);

  it('GET /cdc/streams and /cdc/streams/{name} show the same fields; /metrics has the CDC series', async () => {
    const get = async (path: string): Promise<{ status: number; body: any }> => {
      const response = await fetch(`${server.baseUrl}/api/v1${path}`, { headers: { authorization: `Bearer ${server.apiKey}` } });
      return { status: response.status, body: response.headers.get('content-type')?.includes('json') ? await response.json() : await response.text() };
    };
    const list = await get('/cdc/streams');
    expect(list.status).toBe(200);
    const shown = (await ok(server, 'SHOW CDC STREAMS')).data;
    expect(list.body.streams).toEqual(shown);
    const one = await get('/cdc/streams/ps');
    expect(one.body).toMatchObject({ name: 'ps', table: 'p', destination: 'kafka', status: { events_delivered: expect.any(Number), delivery_errors: 0 } });
    expect((await get('/cdc/streams/ghost')).status).toBe(404);
    expect((await get('/cdc/streams/ps/schema')).status).toBe(404);
    const metrics = (await get('/metrics')).body as string;
    expect(metrics).toMatch(/# TYPE svc_cdc_events_processed_total counter/);
    expect(metrics).toMatch(/svc_cdc_events_processed_total\{stream="orders_to_default_orders",database="default"\} \d+/);
    expect(metrics).toMatch(/svc_event_queue_size\{queue_type="cdc",stream="ps",database="default"\} 0/);
    expect(metrics).toMatch(/svc_cdc_lag_records\{stream="ps"/);
  });

  it('FORMAT AVRO writes single-object messages whose fingerprint GET /cdc/streams/{name}/schema serves', async () => {
    await ok(server, 'CREATE TABLE av (id INT PRIMARY KEY, v TEXT)');
    await ok(server, `CREATE CHANGE DATA CAPTURE ON av TO KAFKA '${mock.brokers}' TOPIC 'av-events' FORMAT AVRO AS av_stream`);
    await ok(server, "INSERT INTO av VALUES (1, 'one')");
    const deadline = Date.now() + 20_000;
    let messages = await readTopicWithKcat(mock.brokers, 'av-events');
    while (messages.length < 1 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      messages = await readTopicWithKcat(mock.brokers, 'av-events');
    }
    const value = messages[0]!.value!;
    expect([value[0], value[1]]).toEqual([0xc3, 0x01]);
    const response = await fetch(`${server.baseUrl}/api/v1/cdc/streams/av_stream/schema`, { headers: { authorization: `Bearer ${server.apiKey}` } });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { fingerprint: string; schema: { type: string } };
    expect(body.schema.type).toBe('record');
    expect(body.fingerprint).toBe(value.subarray(2, 10).toString('hex'));
    expect(messageText(messages[0]!).headers['content-type']).toBe('avro/binary');
    await ok(server, 'DROP CHANGE DATA CAPTURE av_stream');
  });

  it('WITH (operations, columns, predicate) filters what a stream sends; filtered events are counted', async () => {
    await ok(server, 'CREATE TABLE fl (id INT PRIMARY KEY, status TEXT, amount INT)');
    await ok(server, "INSERT INTO fl VALUES (1, 'old', 5)");
    await ok(
      server,
      `CREATE CHANGE DATA CAPTURE ON fl TO KAFKA '${mock.brokers}' TOPIC 'fl-events' AS fl_stream WITH (snapshot = true, operations = 'INSERT,UPDATE', columns = 'status', predicate = 'amount > 1')`,
    );
    await ok(server, "INSERT INTO fl VALUES (2, 'new', 50), (3, 'new', 0)");
    await ok(server, 'UPDATE fl SET amount = 60 WHERE id = 2');
    await ok(server, "UPDATE fl SET status = 'paid' WHERE id = 2");
    await ok(server, 'DELETE FROM fl WHERE id = 1');
    const got = await waitForEvents(mock.brokers, 'fl-events', 3);
    await new Promise((r) => setTimeout(r, 300));
    expect((await events(mock.brokers, 'fl-events')).map((e) => [e.event.operation, e.event.key!['id']])).toEqual([
      ['SNAPSHOT', 1],
      ['INSERT', 2],
      ['UPDATE', 2],
    ]);
    expect(got[2]!.value).toMatchObject({ status: 'paid' });
    const s = await waitForState(server, 'fl_stream', (x) => Number(x['events_filtered']) >= 3);
    expect(Number(s['events_filtered'])).toBe(3);
    const shown = (await ok(server, 'SHOW CDC STREAMS')).data.find((r: { name: string }) => r.name === 'fl_stream');
    expect(shown.filter).toEqual({ operations: ['INSERT', 'UPDATE'], columns: ['status'], predicate: 'amount > 1' });
    const bad = await query(server, `CREATE CHANGE DATA CAPTURE ON fl TO KAFKA '${mock.brokers}' AS bad WITH (predicate = 'nope = 1')`);
    expect(bad.status).toBe(422);
    expect(bad.body.error.code).toBe('VALIDATION_ERROR');
    const badOp = await query(server, `CREATE CHANGE DATA CAPTURE ON fl TO KAFKA '${mock.brokers}' AS bad WITH (operations = 'UPSERT')`);
    expect(badOp.status).toBe(422);
    await ok(server, 'DROP CHANGE DATA CAPTURE fl_stream');
  });

  it('drop forgets the stream; an unreachable broker shows failing and never blocks writes', async () => {
    await ok(server, 'DROP CHANGE DATA CAPTURE snap');
    expect((await query(server, 'SHOW CDC STREAM STATUS snap')).status).toBe(404);
    await ok(server, 'DROP CHANGE DATA CAPTURE IF EXISTS snap');
    await ok(server, "CREATE CHANGE DATA CAPTURE ON s TO KAFKA '127.0.0.1:1' AS dead");
    await ok(server, "INSERT INTO s VALUES (200000, 'x')");
    const s = await waitForState(server, 'dead', (x) => x['state'] === 'failing');
    expect(s['state']).toBe('failing');
    expect(s['last_error']).toEqual(expect.any(String));
    expect(Number(s['delivery_errors'])).toBeGreaterThan(0);
    await ok(server, "INSERT INTO s VALUES (200001, 'y')");
    await ok(server, 'DROP CHANGE DATA CAPTURE dead');
  });
});
