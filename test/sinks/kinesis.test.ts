/**
 * The Kinesis destination against kinesalite (in memory, on 127.0.0.1): batching within the
 * service limits, per-key order when PutRecords refuses records, and CDC streams end to end
 * through the real server (statements over POST /query, event shape, status, a missing stream).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TableDef } from '../../core/catalog.js';
import { silentLogger } from '../../core/logger.js';
import { jsonEncoder } from '../../sinks/cdc/destination.js';
import { KinesisDestination, type KinesisClientSettings } from '../../sinks/cdc/kinesis-destination.js';
import { KINESIS_LIMITS, partitionKey, PutPlan, toRecord } from '../../sinks/cdc/kinesis-records.js';
import { eventId, type ChangeEvent, type SourcedEvent } from '../../sinks/events/change-event.js';
import { startKinesalite, startKinesisProxy, useFakeAwsCredentials, type KinesisProxy, type KinesisServer, type ReadRecord } from '../helpers/kinesis.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

useFakeAwsCredentials();

const TABLE: TableDef = {
  id: 1 as TableDef['id'],
  tenant: 'default',
  schema: 'public',
  name: 't',
  kind: 'table' as TableDef['kind'],
  columns: [],
  primaryKey: [],
  indexes: [],
  constraints: [],
  viewSql: null,
  createdAtMicros: 0n,
  updatedAtMicros: 0n,
};

/** Event `sequence` of key `{ id }` (UPDATE after the first of a key, so old_value is there too). */
function sourced(sequence: number, id: number | string | null, extra: Record<string, unknown> = {}): SourcedEvent {
  const seq = BigInt(sequence);
  const event: ChangeEvent = {
    event_id: eventId('default', seq, 1_700_000_000_000_000n + seq),
    timestamp: new Date(1_700_000_000_000 + sequence).toISOString(),
    sequence,
    operation: 'INSERT',
    database: 'default',
    table: 't',
    key: id === null ? null : { id },
    value: { id, v: `v${sequence}`, ...extra },
    old_value: null,
    transaction_id: `tx${sequence}`,
  };
  return { event, lsn: sequence, sequence: seq, table: TABLE };
}

const SETTINGS = (endpoint: string, over: Partial<KinesisClientSettings> = {}): KinesisClientSettings => ({
  endpoint,
  connectionTimeoutMs: 5000,
  requestTimeoutMs: 30_000,
  callAttemptsMax: 2,
  recordAttemptsMax: 8,
  retryDelayMsMin: 1,
  retryDelayMsMax: 5,
  ...over,
});

function destination(stream: string, endpoint: string, over: Partial<KinesisClientSettings> = {}): KinesisDestination {
  return new KinesisDestination(
    { id: `id-${stream}`, name: `cdc-${stream}`, stream, region: 'us-east-1' },
    jsonEncoder,
    SETTINGS(endpoint, over),
    silentLogger,
  );
}

const decoded = (records: readonly ReadRecord[]): ChangeEvent[] => records.map((r) => JSON.parse(r.data.toString()) as ChangeEvent);

/** Every key's events in the order the shards hold them: sequences must increase. */
function expectPerKeyOrder(records: readonly ReadRecord[]): void {
  const last = new Map<string, number>();
  for (const r of records) {
    const e = JSON.parse(r.data.toString()) as ChangeEvent;
    expect(r.partitionKey).toBe(e.key === null ? e.table : JSON.stringify(e.key));
    const before = last.get(r.partitionKey) ?? 0;
    expect(e.sequence, `key ${r.partitionKey}`).toBeGreaterThan(before);
    last.set(r.partitionKey, e.sequence);
  }
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);

describe('Kinesis records (no service)', () => {
  it('partition keys: the key as JSON, the table without a key, a SHA-256 past 256 characters', () => {
    expect(partitionKey(sourced(1, 7))).toBe('{"id":7}');
    expect(partitionKey(sourced(2, null))).toBe('t');
    const long = 'x'.repeat(300);
    const hashed = partitionKey(sourced(3, long));
    expect(hashed).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(partitionKey(sourced(4, long))).toBe(hashed);
    expect(partitionKey(sourced(5, 'y'.repeat(300)))).not.toBe(hashed);
    expect(partitionKey(sourced(6, 'z'.repeat(240)))).toBe(JSON.stringify({ id: 'z'.repeat(240) }));
  });

  it('a call holds at most 500 records, 5 MiB and one record per key; an event over 1 MiB fails clearly', () => {
    const big = 'b'.repeat(900 * 1024);
    const plan = new PutPlan(range(12).map((i) => toRecord(sourced(i, i, { big }), jsonEncoder)));
    const sizes: number[] = [];
    while (plan.remaining > 0) {
      const call = plan.nextCall();
      expect(call.reduce((n, r) => n + r.bytes, 0)).toBeLessThanOrEqual(KINESIS_LIMITS.bytesPerCallMax);
      sizes.push(call.length);
      plan.settle(call, new Set());
    }
    expect(sizes).toEqual([5, 5, 2]);

    const many = new PutPlan(range(1200).map((i) => toRecord(sourced(i, i % 700), jsonEncoder)));
    const first = many.nextCall();
    expect(first).toHaveLength(500);
    expect(new Set(first.map((r) => r.partitionKey)).size).toBe(500);

    const huge = sourced(99, 1, { big: 'h'.repeat(KINESIS_LIMITS.recordBytesMax) });
    expect(() => toRecord(huge, jsonEncoder)).toThrow(
      expect.objectContaining({ code: 'LIMIT_EXCEEDED', message: expect.stringMatching(/change event 99 .* at most 1048576 bytes/) }),
    );
  });
});

describe('KinesisDestination against kinesalite', () => {
  let kinesis: KinesisServer;
  let proxy: KinesisProxy;

  beforeAll(async () => {
    kinesis = await startKinesalite();
    proxy = await startKinesisProxy(kinesis.url);
  });

  afterAll(async () => {
    await proxy?.stop();
    await kinesis?.stop();
  });

  it('delivers 1,200 events in several PutRecords calls; a reader of every shard sees each once, in per-key order', async () => {
    await kinesis.createStream('unit-a', 4);
    const events = range(1200).map((i) => sourced(i, i % 700));
    const dest = destination('unit-a', proxy.url);
    const before = proxy.calls.length;
    expect(await dest.open(AbortSignal.timeout(10_000))).toBeNull();
    await dest.deliver(events, new AbortController().signal);
    await dest.close();
    const calls = proxy.calls.slice(before);
    expect(calls.map((c) => c.keys.length)).toEqual([500, 500, 200]);
    for (const c of calls) expect(new Set(c.keys).size).toBe(c.keys.length);
    const read = await kinesis.readAll('unit-a');
    expect(new Set(read.map((r) => r.shardId)).size).toBe(4);
    expect(
      decoded(read)
        .map((e) => e.sequence)
        .sort((a, b) => a - b),
    ).toEqual(range(1200));
    expectPerKeyOrder(read);
    expect(decoded(read).find((e) => e.sequence === 1)).toEqual(events[0]!.event);
  });

  it('puts refused records again before the later events of their keys: nothing lost, nothing twice, per-key order kept', async () => {
    await kinesis.createStream('unit-b', 3);
    // Few keys, so each has many events in flight; in the first 30 calls, refuse a third of the
    // records, by event (an event is refused every third call at most, never twice in a row).
    const events = range(1200).map((i) => sourced(i, i % 40));
    const start = proxy.calls.length;
    proxy.refuse = (call, _index, _key, data) => call - start <= 30 && (call + (JSON.parse(data.toString()) as ChangeEvent).sequence) % 3 === 0;
    const dest = destination('unit-b', proxy.url);
    await dest.open(AbortSignal.timeout(10_000));
    await dest.deliver(events, new AbortController().signal);
    await dest.close();
    proxy.refuse = () => false;
    const calls = proxy.calls.slice(start);
    expect(calls.reduce((n, c) => n + c.refused, 0)).toBeGreaterThan(100);
    for (const c of calls) expect(new Set(c.keys).size).toBe(c.keys.length);
    const read = await kinesis.readAll('unit-b');
    expect(read).toHaveLength(1200);
    expect(
      decoded(read)
        .map((e) => e.sequence)
        .sort((a, b) => a - b),
    ).toEqual(range(1200));
    expectPerKeyOrder(read);
  });

  it('gives up after recordAttemptsMax refusals of a record, with an error naming the stream', async () => {
    await kinesis.createStream('unit-c', 1);
    proxy.refuse = (_call, _index, key) => key === '{"id":2}';
    const dest = destination('unit-c', proxy.url, { recordAttemptsMax: 3 });
    await dest.open(AbortSignal.timeout(10_000));
    const start = proxy.calls.length;
    await expect(dest.deliver([sourced(1, 1), sourced(2, 2), sourced(3, 2)], new AbortController().signal)).rejects.toThrow(
      /Kinesis stream 'unit-c' refused change event 2 3 times \(last: ProvisionedThroughputExceededException/,
    );
    await dest.close();
    proxy.refuse = () => false;
    expect(proxy.calls.length - start).toBe(3);
    // Event 3 (same key as the refused 2) was never put: its key's order holds.
    expect(decoded(await kinesis.readAll('unit-c')).map((e) => e.sequence)).toEqual([1]);
  });

  it('a missing stream fails open() clearly; records of long keys and events without a key arrive', async () => {
    const missing = destination('no-such-stream', kinesis.url);
    await expect(missing.open(AbortSignal.timeout(10_000))).rejects.toThrow(
      expect.objectContaining({ code: 'NOT_FOUND', message: expect.stringContaining("Kinesis stream 'no-such-stream' in us-east-1 does not exist") }),
    );
    await kinesis.createStream('unit-d', 2);
    const dest = destination('unit-d', kinesis.url);
    await dest.open(AbortSignal.timeout(10_000));
    await dest.deliver([sourced(1, 'k'.repeat(400)), sourced(2, null), sourced(3, null), sourced(4, 'k'.repeat(400))], new AbortController().signal);
    const aborted = new AbortController();
    aborted.abort();
    await expect(dest.deliver([sourced(5, 1)], aborted.signal)).rejects.toThrow();
    await dest.close();
    const read = await kinesis.readAll('unit-d');
    expect(read.map((r) => r.partitionKey).sort()).toEqual(
      [partitionKey(sourced(1, 'k'.repeat(400))), partitionKey(sourced(1, 'k'.repeat(400))), 't', 't'].sort(),
    );
    expect(
      decoded(read)
        .map((e) => e.sequence)
        .sort(),
    ).toEqual([1, 2, 3, 4]);
  });
});

interface Status {
  state: string;
  events_delivered: number;
  delivery_errors: number;
  last_error: string | null;
  last_sequence: number | null;
}

describe('CDC streams to Kinesis end to end (real server, kinesalite)', () => {
  let kinesis: KinesisServer;
  let server: TestServer;

  async function query(sql: string): Promise<{ status: number; body: any }> {
    const response = await fetch(`${server.baseUrl}/api/v1/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sql }),
    });
    return { status: response.status, body: await response.json() };
  }

  async function ok(sql: string): Promise<any> {
    const reply = await query(sql);
    expect(reply.status, `${sql}: ${JSON.stringify(reply.body)}`).toBe(200);
    return reply.body;
  }

  async function waitForStatus(name: string, wanted: (s: Status) => boolean, timeoutMs = 20_000): Promise<Status> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const s = (await ok(`SHOW CDC STREAM STATUS ${name}`)).data[0] as Status;
      if (wanted(s) || Date.now() > deadline) return s;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function waitForEvents(stream: string, count: number, timeoutMs = 20_000): Promise<ChangeEvent[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const events = decoded(await kinesis.readAll(stream)).sort((a, b) => a.sequence - b.sequence);
      if (events.length >= count || Date.now() > deadline) return events;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  beforeAll(async () => {
    kinesis = await startKinesalite();
    server = await startTestServer({ env: { SVC_KINESIS_ENDPOINT: kinesis.url, SVC_CDC_RETRY_DELAY_MS_MAX: '500' } });
  });

  afterAll(async () => {
    await server?.close();
    await kinesis?.stop();
  });

  it('streams INSERT, UPDATE and DELETE events in order, and the status shows them delivered', async () => {
    await kinesis.createStream('svc-test', 2);
    await ok('CREATE TABLE t (id int primary key, v text)');
    const created = await ok("CREATE CHANGE DATA CAPTURE ON t TO KINESIS 'svc-test' REGION 'us-east-1' AS 's1'");
    expect(created.data[0]).toMatchObject({ name: 's1', destination: 'kinesis', address: 'svc-test', region: 'us-east-1' });
    await ok("INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')");
    await ok("UPDATE t SET v = 'bb' WHERE id = 2");
    await ok('DELETE FROM t WHERE id = 1');
    const got = await waitForEvents('svc-test', 5);
    expect(got.map((e) => e.operation)).toEqual(['INSERT', 'INSERT', 'INSERT', 'UPDATE', 'DELETE']);
    const [a, , , upd, del] = got as [ChangeEvent, ChangeEvent, ChangeEvent, ChangeEvent, ChangeEvent];
    expect(a).toMatchObject({ database: 'default', table: 't', key: { id: 1 }, value: { id: 1, v: 'a' }, old_value: null });
    expect(upd).toMatchObject({ key: { id: 2 }, value: { id: 2, v: 'bb' }, old_value: { id: 2, v: 'b' } });
    expect(del).toMatchObject({ key: { id: 1 }, value: null, old_value: { id: 1, v: 'a' } });
    for (let i = 1; i < got.length; i++) expect(got[i]!.sequence).toBeGreaterThan(got[i - 1]!.sequence);
    for (const e of got) expect(e.event_id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(new Set(got.map((e) => e.event_id)).size).toBe(5);
    expectPerKeyOrder(await kinesis.readAll('svc-test'));
    const s = await waitForStatus('s1', (x) => x.events_delivered === 5);
    expect(s).toMatchObject({ state: 'running', events_delivered: 5, delivery_errors: 0, last_error: null, last_sequence: got[4]!.sequence });
  });

  it('a paused stream sends nothing; resumed, it sends what was written meanwhile, once', async () => {
    await ok('ALTER CDC STREAM s1 PAUSE');
    expect((await waitForStatus('s1', (x) => x.state === 'paused')).state).toBe('paused');
    await ok("INSERT INTO t VALUES (4, 'd'), (5, 'e')");
    await new Promise((r) => setTimeout(r, 300));
    expect(await kinesis.readAll('svc-test')).toHaveLength(5);
    await ok('ALTER CDC STREAM s1 RESUME');
    const got = await waitForEvents('svc-test', 7);
    expect(got.map((e) => e.key)).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }, { id: 2 }, { id: 1 }, { id: 4 }, { id: 5 }]);
    expect(new Set(got.map((e) => e.event_id)).size).toBe(7);
    expect(await waitForStatus('s1', (x) => x.events_delivered === 7)).toMatchObject({ state: 'running', events_delivered: 7 });
  });

  it('a stream to a missing Kinesis stream shows failing with the error; writes still succeed; it recovers once the stream exists', async () => {
    await ok('CREATE TABLE u (id int primary key, v text)');
    await ok("CREATE CHANGE DATA CAPTURE ON u TO KINESIS 'svc-missing' REGION 'us-east-1' AS 's2'");
    const failing = await waitForStatus('s2', (x) => x.state === 'failing' && x.last_error !== null);
    expect(failing.state).toBe('failing');
    expect(failing.last_error).toMatch(/Kinesis stream 'svc-missing' in us-east-1 does not exist/);
    expect(failing.delivery_errors).toBeGreaterThan(0);
    await ok("INSERT INTO u VALUES (1, 'x'), (2, 'y')");
    expect((await ok('SELECT count(*) AS n FROM u')).data[0].n).toBe(2);
    await kinesis.createStream('svc-missing', 1);
    const running = await waitForStatus('s2', (x) => x.state === 'running' && x.events_delivered === 2);
    expect(running).toMatchObject({ state: 'running', events_delivered: 2 });
    expect((await waitForEvents('svc-missing', 2)).map((e) => e.value)).toEqual([
      { id: 1, v: 'x' },
      { id: 2, v: 'y' },
    ]);
  });
});
