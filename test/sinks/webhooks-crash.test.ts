/**
 * Webhooks across SIGKILL: 16 writers update their own keys through `svcdb serve` while a webhook
 * delivers to a receiver in this process; the server is SIGKILLed during delivery and restarted,
 * three times. Then: no committed change is lost, each key's changes arrived in order, and the
 * only repeats are events whose receiver answered 2xx just before a kill (the ledger had not
 * recorded them): at most the requests in flight per kill, each with the same id and the same bytes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, serve, type Serving } from '../helpers/cli.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

const KEY = 'webhook-crash-key';
const WRITERS = 16;
const ROUNDS = 3;
const IN_FLIGHT_MAX = 8;

async function call(base: string, method: string, route: string, body?: unknown): Promise<any> {
  const response = await fetch(`${base}/api/v1${route}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const parsed = await response.json();
  if (response.status >= 300) throw new Error(`${route}: ${response.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

const sql = (base: string, text: string, params: unknown[] = []) => call(base, 'POST', '/query', { sql: text, params });

function start(dataDir: string, port: number): Promise<Serving> {
  return serve(['--data', dataDir, '--port', String(port), '--ops-port', '0', '--api-key', KEY], {
    env: { SVC_WEBHOOK_REQUESTS_IN_FLIGHT_MAX: String(IN_FLIGHT_MAX) },
  });
}

describe('webhooks across SIGKILL', () => {
  let dataDir: string;
  let receiver: Receiver;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'svcdb-wh-crash-'));
    receiver = await startReceiver(() => ({ status: 200, delayMs: Math.floor(Math.random() * 4) }));
  });

  afterAll(async () => {
    await receiver?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('loses nothing, keeps per-key order, repeats only the documented window with the same bytes', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    for (let round = 0; round < ROUNDS; round++) {
      const server = await start(dataDir, port);
      if (round === 0) {
        await sql(base, 'CREATE TABLE kv (k INT PRIMARY KEY, v INT NOT NULL)');
        await call(base, 'POST', '/webhooks', { url: receiver.url, secret: 'crash-secret', tables: ['kv'], operations: ['INSERT', 'UPDATE'] });
        await sql(base, `INSERT INTO kv SELECT g, 0 FROM generate_series(0, ${WRITERS - 1}) g`);
      }
      let stop = false;
      const writing = Promise.all(
        Array.from({ length: WRITERS }, async (_, k) => {
          while (!stop) {
            try {
              await sql(base, 'UPDATE kv SET v = v + 1 WHERE k = $1', [k]);
            } catch {
              return;
            }
          }
        }),
      );
      await new Promise((r) => setTimeout(r, 1200 + Math.floor(Math.random() * 800)));
      server.child.kill('SIGKILL');
      await server.exited;
      stop = true;
      await writing;
    }
    const server = await start(dataDir, port);
    try {
      const final = new Map<number, number>((await sql(base, 'SELECT k, v FROM kv')).data.map((r: { k: number; v: number }) => [r.k, r.v]));
      const committed = [...final.values()].reduce((a, b) => a + b + 1, 0);
      const firstBodies = new Map<string, Buffer>();
      const distinct = (): number => {
        for (const r of receiver.received)
          if (!firstBodies.has(String(r.headers['x-svc-event-id']))) firstBodies.set(String(r.headers['x-svc-event-id']), r.body);
        return firstBodies.size;
      };
      await receiver.until(() => distinct() >= committed, 60_000);
      await new Promise((r) => setTimeout(r, 300));
      expect(distinct()).toBe(committed);
      // Repeats: the same id always carries the same bytes, and there are few of them.
      const repeats = receiver.received.length - firstBodies.size;
      for (const r of receiver.received) expect(r.body.equals(firstBodies.get(String(r.headers['x-svc-event-id']))!)).toBe(true);
      expect(repeats).toBeLessThanOrEqual(ROUNDS * IN_FLIGHT_MAX);
      // Per key: first arrivals in order, every value from 0 to the final one.
      const seen = new Set<string>();
      const byKey = new Map<number, number[]>();
      for (const r of receiver.received) {
        const id = String(r.headers['x-svc-event-id']);
        if (seen.has(id)) continue;
        seen.add(id);
        const event = JSON.parse(r.body.toString('utf8'));
        byKey.set(event.key.k, [...(byKey.get(event.key.k) ?? []), event.value.v]);
      }
      for (let k = 0; k < WRITERS; k++) expect(byKey.get(k), `key ${k}`).toEqual(Array.from({ length: final.get(k)! + 1 }, (_, i) => i));
      expect(committed).toBeGreaterThan(WRITERS * 2);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  }, 240_000);
});
