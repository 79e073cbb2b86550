/**
 * A stream created WITH (snapshot = true) on a table of 100,000 rows, against a real Apache Kafka
 * broker: every row arrives once as a SNAPSHOT event in key order, then the changes after the
 * CREATE, with no gap and no overlap. (The librdkafka mock cluster keeps too few messages for this.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skipRealKafka, startRealKafka, type RealKafka } from '../helpers/kafka-real.js';
import { messageText, readTopicWithKcat } from '../helpers/kcat.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

const ROWS = 100_000;

describe.skipIf(skipRealKafka())('CDC snapshot of a 100,000-row table (Apache Kafka)', () => {
  let kafka: RealKafka;
  let server: TestServer;

  const sql = async (text: string): Promise<any> => {
    const response = await fetch(`${server.baseUrl}/api/v1/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sql: text }),
    });
    const body = await response.json();
    expect(response.status, JSON.stringify(body)).toBe(200);
    return body;
  };

  beforeAll(async () => {
    kafka = await startRealKafka();
    server = await startTestServer();
  }, 180_000);

  afterAll(async () => {
    await server?.close();
    await kafka?.stop();
  });

  it('sends every row once, in key order, then the changes', async () => {
    await sql('CREATE TABLE big (id INT PRIMARY KEY, v TEXT)');
    await sql(`INSERT INTO big SELECT g, 'v' || g FROM generate_series(1, ${ROWS}) g`);
    await sql(`CREATE CHANGE DATA CAPTURE ON big TO KAFKA '${kafka.brokers}' TOPIC 'big-events' AS big_snap WITH (snapshot = true)`);
    await sql("UPDATE big SET v = 'changed' WHERE id = 99999");
    await sql("INSERT INTO big VALUES (100001, 'new')");
    const deadline = Date.now() + 240_000;
    let status: any;
    do {
      await new Promise((r) => setTimeout(r, 500));
      status = (await sql('SHOW CDC STREAM STATUS big_snap')).data[0];
    } while (Number(status.events_delivered) < ROWS + 2 && Date.now() < deadline);
    expect(Number(status.events_delivered)).toBe(ROWS + 2);
    const messages = await readTopicWithKcat(kafka.brokers, 'big-events', { timeoutMs: 120_000 });
    const events = messages.map((m) => JSON.parse(messageText(m).value!)).sort((a, b) => a.sequence - b.sequence);
    expect(events.length).toBe(ROWS + 2);
    expect(new Set(events.map((e) => e.event_id)).size).toBe(ROWS + 2);
    const snapshot = events.slice(0, ROWS);
    expect(snapshot.every((e) => e.operation === 'SNAPSHOT')).toBe(true);
    snapshot.forEach((e, i) => expect(e.key.id).toBe(i + 1));
    expect(events[ROWS]).toMatchObject({ operation: 'UPDATE', old_value: { v: 'v99999' }, value: { v: 'changed' } });
    expect(events[ROWS + 1]).toMatchObject({ operation: 'INSERT', key: { id: 100001 } });
  }, 400_000);
});
