/**
 * Identical live queries share one evaluation per commit (Hasura's multiplexing), and sharing
 * never costs a subscriber its change or its stream: a different variable is its own evaluation,
 * and one subscriber leaving does not end the others'.
 */
import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { countStatements, sql } from './client.js';
import { subscribe, WebSocket, type Subscription } from './subscriptions/harness.js';

describe('live queries share evaluations', () => {
  let server: TestServer;
  const clients: Client[] = [];
  const client = (): Client => {
    const url = `${server.baseUrl.replace(/^http/, 'ws')}/graphql`;
    const created = createClient({
      url,
      webSocketImpl: WebSocket,
      connectionParams: { Authorization: `Bearer ${server.apiKey}` },
      retryAttempts: 0,
      lazy: true,
    });
    clients.push(created);
    return created;
  };

  beforeAll(async () => {
    server = await startTestServer();
    await sql(server, 'CREATE TABLE items (id INT PRIMARY KEY, note TEXT)');
    await sql(server, "INSERT INTO items VALUES (1, 'a')");
  });
  afterAll(async () => {
    await Promise.all(clients.map(async (c) => c.dispose()));
    await server?.close();
  });

  it('20 identical live queries cost one evaluation per commit, each still gets every change; another variable is its own', async () => {
    const query = 'subscription($min: Int!) { items(where: {id: {_gte: $min}}, order_by: {id: desc}, limit: 5) { id note } }';
    const same: Subscription[] = [];
    for (let i = 0; i < 20; i++) same.push(subscribe(client(), query, { min: 1 }));
    const other = subscribe(client(), query, { min: 3 });
    for (const sub of [...same, other]) await sub.until((s) => s.results.length === 1);

    const { statements } = await countStatements(server, async () => {
      await sql(server, "INSERT INTO items VALUES (2, 'b')");
      for (const sub of same) await sub.until((s) => s.results.length === 2);
    });
    for (const sub of same) expect(sub.results[1].data.items.map((r: { id: number }) => r.id)).toEqual([2, 1]);
    const evaluations = statements.filter((text) => /\bFROM\b[^;]*"items"/i.test(text) && !/^\s*INSERT/i.test(text));
    // One for the 20 (two if a wake-up straddled the commit's apply), one for the other variable's.
    expect(evaluations.length).toBeGreaterThanOrEqual(1);
    expect(evaluations.length).toBeLessThanOrEqual(3);

    await sql(server, "INSERT INTO items VALUES (3, 'c')");
    await other.until((s) => s.results.length === 2);
    expect(other.results[1].data.items).toEqual([{ id: 3, note: 'c' }]);
    for (const sub of same) await sub.until((s) => s.results.length === 3);
  });

  it('a subscriber that leaves mid-way does not end the evaluation of those that stay', async () => {
    const query = 'subscription { items(order_by: {id: asc}) { id } }';
    const staying = subscribe(client(), query);
    const leaving = subscribe(client(), query);
    await staying.until((s) => s.results.length === 1);
    await leaving.until((s) => s.results.length === 1);
    leaving.stop();
    for (let i = 10; i < 15; i++) await sql(server, `INSERT INTO items VALUES (${i}, 'x')`);
    await staying.until((s) => s.results.at(-1)?.data.items.some((r: { id: number }) => r.id === 14));
    expect(staying.errors).toEqual([]);
    expect(staying.completed).toBe(false);
    staying.stop();
  });
});
