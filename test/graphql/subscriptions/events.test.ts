/**
 * `_events` over graphql-transport-ws (graphql-ws's client): every change after from_sequence,
 * in order, exactly once, under concurrent writers; a resume from the last sequence seen; the
 * end of a dropped table; an unknown table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, subscribe, type Harness } from './harness.js';

const EVENT_FIELDS = 'event_id sequence operation timestamp key value old_value transaction_id';

describe('GraphQL _events subscriptions', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('sends every change of concurrent writers in order, none missed or repeated', async () => {
    await h.sql('CREATE TABLE items (id BIGINT PRIMARY KEY, name TEXT, score INTEGER)');
    const client = h.client();
    const sub = subscribe(client, `subscription { items_events(from_sequence: "0", operations: [INSERT, UPDATE, DELETE]) { ${EVENT_FIELDS} } }`);
    const writers = 4;
    const rowsPerWriter = 100;
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let i = 0; i < rowsPerWriter; i++) {
          const id = w * 1000 + i;
          await h.sql('INSERT INTO items (id, name, score) VALUES ($1, $2, $3)', [id, `w${w}-${i}`, i]);
          if (i % 10 === 0) await h.sql('UPDATE items SET score = score + 1 WHERE id = $1', [id]);
          if (i % 25 === 0) await h.sql('DELETE FROM items WHERE id = $1', [id]);
        }
      }),
    );
    const expected = writers * (rowsPerWriter + rowsPerWriter / 10 + rowsPerWriter / 25);
    await sub.until((s) => s.results.length >= expected);
    // A moment more: nothing extra arrives.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sub.errors).toEqual([]);
    const events = sub.results.map((r) => r.data.items_events);
    expect(events).toHaveLength(expected);
    const sequences = events.map((e) => BigInt(e.sequence));
    for (let i = 1; i < sequences.length; i++) expect(sequences[i]! > sequences[i - 1]!).toBe(true);
    expect(new Set(events.map((e) => e.event_id)).size).toBe(expected);
    const inserts = events.filter((e) => e.operation === 'INSERT');
    expect(inserts).toHaveLength(writers * rowsPerWriter);
    expect(inserts[0]).toMatchObject({ key: { id: expect.any(Number) }, old_value: null });
    const update = events.find((e) => e.operation === 'UPDATE')!;
    expect(update.value.score).toBe(update.old_value.score + 1);
    const deleted = events.filter((e) => e.operation === 'DELETE');
    expect(deleted.every((e) => e.value === null && e.old_value !== null)).toBe(true);
    // Per key, the order of its changes is the order they were made in.
    const byKey = new Map<number, string[]>();
    for (const e of events) byKey.set(e.key.id, [...(byKey.get(e.key.id) ?? []), e.operation]);
    expect(byKey.get(0)).toEqual(['INSERT', 'UPDATE', 'DELETE']);
    sub.stop();
  });

  it('resumes exactly after the last sequence a client saw', async () => {
    await h.sql('CREATE TABLE resumed (id BIGINT PRIMARY KEY, v TEXT)');
    for (let i = 0; i < 50; i++) await h.sql('INSERT INTO resumed VALUES ($1, $2)', [i, `a${i}`]);
    const first = subscribe(h.client(), `subscription { resumed_events(from_sequence: "0", operations: [INSERT]) { sequence key } }`);
    await first.until((s) => s.results.length >= 20);
    first.stop();
    const seen = first.results.map((r) => r.data.resumed_events);
    const last = seen[seen.length - 1].sequence;
    // Writes while no one listens.
    for (let i = 50; i < 80; i++) await h.sql('INSERT INTO resumed VALUES ($1, $2)', [i, `b${i}`]);
    const second = subscribe(h.client(), `subscription($from: BigInt) { resumed_events(from_sequence: $from, operations: [INSERT]) { sequence key } }`, {
      from: last,
    });
    const rest = 80 - seen.length;
    await second.until((s) => s.results.length >= rest);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const resumed = second.results.map((r) => r.data.resumed_events);
    expect(resumed).toHaveLength(rest);
    const ids = [...seen, ...resumed].map((e) => e.key.id);
    expect(ids).toEqual(Array.from({ length: 80 }, (_, i) => i));
    expect(BigInt(resumed[0].sequence) > BigInt(last)).toBe(true);
    second.stop();
  });

  it('without from_sequence sends the commits after the subscription started', async () => {
    await h.sql('CREATE TABLE live_only (id BIGINT PRIMARY KEY)');
    await h.sql('INSERT INTO live_only VALUES (1)');
    const sub = subscribe(h.client(), 'subscription { live_only_events { operation key } }');
    // The feed opens asynchronously: write until the first event arrives, then check the order.
    let next = 2;
    while (sub.results.length === 0) {
      await h.sql('INSERT INTO live_only VALUES ($1)', [next++]);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const firstId = sub.results[0].data.live_only_events.key.id;
    expect(firstId).toBeGreaterThan(1);
    await sub.until((s) => s.results.length >= next - firstId);
    expect(sub.results.map((r) => r.data.live_only_events.key.id)).toEqual(Array.from({ length: next - firstId }, (_, i) => firstId + i));
    sub.stop();
  });

  it('a dropped table ends the stream: its SCHEMA_CHANGE, then TABLE_NOT_FOUND, then complete', async () => {
    await h.sql('CREATE TABLE doomed (id BIGINT PRIMARY KEY)');
    await h.sql('INSERT INTO doomed VALUES (1)');
    const sub = subscribe(h.client(), `subscription { doomed_events(from_sequence: "0") { operation value } }`);
    await sub.until((s) => s.results.length >= 2);
    await h.sql('DROP TABLE doomed');
    await sub.until((s) => s.completed);
    expect(sub.errors).toEqual([]);
    const ops = sub.results.filter((r) => r.data).map((r) => r.data.doomed_events.operation);
    expect(ops).toEqual(['SCHEMA_CHANGE', 'INSERT', 'SCHEMA_CHANGE']);
    const last = sub.results[sub.results.length - 1];
    expect(last.data).toBeNull();
    expect(last.errors[0].extensions.code).toBe('TABLE_NOT_FOUND');
    expect(h.feed.openFeeds).toBe(0);
  });

  it('an unknown table is an error with a code (not in the schema; the feed says TABLE_NOT_FOUND)', async () => {
    const sub = subscribe(h.client(), 'subscription { nope_events { sequence } }');
    await sub.until((s) => s.completed);
    expect(sub.results[0].errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    await expect(h.feed.events('default', 'nope', { operations: ['INSERT'], fromSequence: null, signal: new AbortController().signal })).rejects.toMatchObject({
      code: 'TABLE_NOT_FOUND',
    });
  });

  it('a table dropped and created again under the same name: a resume never sees the old table', async () => {
    await h.sql('CREATE TABLE again (id BIGINT PRIMARY KEY)');
    await h.sql('INSERT INTO again VALUES (1)');
    await h.sql('DROP TABLE again');
    await h.sql('CREATE TABLE again (id BIGINT PRIMARY KEY)');
    await h.sql('INSERT INTO again VALUES (2)');
    const sub = subscribe(h.client(), `subscription { again_events(from_sequence: "0", operations: [INSERT]) { key } }`);
    await sub.until((s) => s.results.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sub.results.map((r) => r.data.again_events.key.id)).toEqual([2]);
    sub.stop();
  });
});

describe('GraphQL _events and log retention', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ stack: { segmentSizeBytesMax: 64 * 1024, retentionEnabled: true } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('refuses a resume whose events were retained away (LIMIT_EXCEEDED); a recent one resumes exactly', async () => {
    await h.sql('CREATE TABLE kept (id BIGINT PRIMARY KEY, pad TEXT)');
    for (let i = 0; i < 300; i++) await h.sql('INSERT INTO kept VALUES ($1, $2)', [i, 'y'.repeat(400)]);
    await expect.poll(() => h.stack.log.firstLsn, { timeout: 10_000 }).toBeGreaterThan(1);
    const gone = subscribe(h.client(), 'subscription { kept_events(from_sequence: "0") { sequence } }');
    await gone.until((s) => s.completed);
    expect(gone.results[0].errors[0].extensions).toMatchObject({ code: 'LIMIT_EXCEEDED', details: { oldest_sequence: expect.any(String) } });
    // A sequence of now: the first event of a feed that starts now.
    const controller = new AbortController();
    const now = (await h.feed.events('default', 'kept', { operations: ['INSERT'], fromSequence: null, signal: controller.signal }))[Symbol.asyncIterator]();
    await h.sql("INSERT INTO kept VALUES (1000, 'a')");
    const first = await now.next();
    controller.abort();
    const sequence = (first.value as { events: { sequence: number }[] }).events[0]!.sequence;
    for (let i = 1001; i < 1004; i++) await h.sql("INSERT INTO kept VALUES ($1, 'b')", [i]);
    const resumed = subscribe(h.client(), 'subscription($from: BigInt) { kept_events(from_sequence: $from) { key } }', { from: String(sequence - 1) });
    await resumed.until((s) => s.results.length >= 4);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(resumed.results.map((r) => r.data.kept_events.key.id)).toEqual([1000, 1001, 1002, 1003]);
    resumed.stop();
  });
});
