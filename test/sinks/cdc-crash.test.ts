/**
 * Exactly once across SIGKILLs: 32 writers update their own keys through `svcdb serve` while a
 * CDC stream delivers to Kafka; the server is SIGKILLed during delivery, restarted, and killed
 * again. Afterwards the topic (read by kcat, read_committed) holds every committed change exactly
 * once, in per-key order, with unique ids and each before-image equal to the previous value.
 * Run against librdkafka's mock cluster (it shows aborted transactions) and a real Kafka broker.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, serve, type Serving } from '../helpers/cli.js';
import { startMockKafka, skipMockKafka } from '../helpers/kafka-mock.js';
import { skipRealKafka, startRealKafka } from '../helpers/kafka-real.js';
import { kafkajsMockPreloadEnv } from '../helpers/kafkajs-mock-patch.js';
import { messageText, readTopicWithKcat } from '../helpers/kcat.js';

const KEY = 'crash-test-key';
const WRITERS = 32;
const ROUNDS = 3;

interface Event {
  event_id: string;
  sequence: number;
  operation: string;
  key: { k: number };
  value: { k: number; v: number } | null;
  old_value: { k: number; v: number } | null;
}

async function sql(base: string, text: string, params: unknown[] = []): Promise<any> {
  const response = await fetch(`${base}/api/v1/query`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ sql: text, params }),
  });
  const body = await response.json();
  if (response.status !== 200) throw new Error(`${response.status} ${JSON.stringify(body)}`);
  return body;
}

async function start(dataDir: string, port: number, env: Record<string, string>): Promise<Serving> {
  return serve(['--data', dataDir, '--port', String(port), '--ops-port', '0', '--api-key', KEY], { env: { SVC_CDC_BATCH_EVENTS_MAX: '40', ...env } });
}

/** Writers bump their own key until the server dies; returns nothing (the table is the truth). */
async function write(base: string, stop: { now: boolean }): Promise<void> {
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, k) => {
      while (!stop.now) {
        try {
          await sql(base, 'UPDATE kv SET v = v + 1 WHERE k = $1', [k]);
        } catch {
          return; // the server was killed: a write in flight may or may not have committed
        }
      }
    }),
  );
}

async function waitCaughtUp(base: string, timeoutMs: number): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = (await sql(base, 'SHOW CDC STREAM STATUS crash')).data[0];
    if ((status.state === 'running' && status.lag_records === 0) || Date.now() > deadline) return status;
    await new Promise((r) => setTimeout(r, 200));
  }
}

function crashSuite(name: string, skip: boolean, startKafka: () => Promise<{ brokers: string; stop(): Promise<void> }>, env: () => Record<string, string>) {
  describe.skipIf(skip)(`CDC exactly once across SIGKILL (${name})`, () => {
    let kafka: { brokers: string; stop(): Promise<void> };
    let dataDir: string;

    beforeAll(async () => {
      kafka = await startKafka();
      dataDir = await mkdtemp(path.join(os.tmpdir(), 'svcdb-cdc-crash-'));
    }, 180_000);

    afterAll(async () => {
      await kafka?.stop();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    });

    it('every committed change is in the topic exactly once, in per-key order, with its before-image', async () => {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      for (let round = 0; round < ROUNDS; round++) {
        const server = await start(dataDir, port, env());
        if (round === 0) {
          await sql(base, 'CREATE TABLE kv (k INT PRIMARY KEY, v INT NOT NULL)');
          await sql(base, `CREATE CHANGE DATA CAPTURE ON kv TO KAFKA '${kafka.brokers}' TOPIC 'crash' AS crash`);
          await sql(base, `INSERT INTO kv SELECT g, 0 FROM generate_series(0, ${WRITERS - 1}) g`);
        }
        const stop = { now: false };
        const writing = write(base, stop);
        await new Promise((r) => setTimeout(r, 1500 + Math.floor(Math.random() * 1000)));
        server.child.kill('SIGKILL');
        await server.exited;
        stop.now = true;
        await writing;
      }
      const server = await start(dataDir, port, env());
      try {
        const status = await waitCaughtUp(base, 60_000);
        expect(status).toMatchObject({ state: 'running', lag_records: 0 });
        const final = new Map<number, number>((await sql(base, 'SELECT k, v FROM kv')).data.map((r: { k: number; v: number }) => [r.k, r.v]));
        const messages = await readTopicWithKcat(kafka.brokers, 'crash');
        const events = messages.map((m) => ({ partition: m.partition, event: JSON.parse(messageText(m).value!) as Event }));
        expect(new Set(events.map((e) => e.event.event_id)).size).toBe(events.length);
        const byKey = new Map<number, { partition: number; event: Event }[]>();
        for (const e of events) byKey.set(e.event.key.k, [...(byKey.get(e.event.key.k) ?? []), e]);
        let updates = 0;
        for (let k = 0; k < WRITERS; k++) {
          const list = byKey.get(k) ?? [];
          expect(new Set(list.map((e) => e.partition)).size, `key ${k} in one partition`).toBe(1);
          // kcat lists a partition in offset order: per-key order means increasing sequences.
          const sequences = list.map((e) => e.event.sequence);
          expect(sequences, `key ${k} in order`).toEqual([...sequences].sort((a, b) => a - b));
          expect(list[0]?.event).toMatchObject({ operation: 'INSERT', value: { k, v: 0 }, old_value: null });
          const rest = list.slice(1).map((e) => e.event);
          rest.forEach((e, i) => {
            expect(e.operation).toBe('UPDATE');
            expect(e.old_value, `key ${k} update ${i}`).toEqual({ k, v: i });
            expect(e.value).toEqual({ k, v: i + 1 });
          });
          expect(rest.length, `key ${k}: one event per committed change`).toBe(final.get(k));
          updates += rest.length;
        }
        expect(updates).toBeGreaterThan(WRITERS);
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
      }
    }, 300_000);
  });
}

crashSuite(
  'librdkafka mock cluster',
  skipMockKafka(),
  () => startMockKafka(),
  () => kafkajsMockPreloadEnv(process.env),
);
crashSuite(
  'Apache Kafka',
  skipRealKafka(),
  () => startRealKafka(),
  () => ({}),
);
