/**
 * GraphQL subscriptions end to end on the real server (bin/app.ts's wiring): the per-tenant
 * schema's Subscription root over graphql-ws and the legacy protocol, live queries through
 * nested relations, `_events` resumes, roles, tenants, and a schema rebuilt after DDL seen by a
 * new operation on the same connection.
 */
import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newKey } from '../helpers/auth.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { gql, sql } from './client.js';
import { eventually, subscribe, WebSocket } from './subscriptions/harness.js';

describe('GraphQL subscriptions on the server', () => {
  let server: TestServer;
  let wsUrl: string;
  const clients: Client[] = [];
  const client = (params: Record<string, unknown> = { Authorization: `Bearer ${server.apiKey}` }): Client => {
    const created = createClient({ url: wsUrl, webSocketImpl: WebSocket, connectionParams: params, retryAttempts: 0, lazy: true });
    clients.push(created);
    return created;
  };

  beforeAll(async () => {
    server = await startTestServer();
    wsUrl = `${server.baseUrl.replace(/^http/, 'ws')}/graphql`;
    await sql(server, 'CREATE TABLE authors (id INT PRIMARY KEY, name TEXT)');
    await sql(server, 'CREATE TABLE books (id INT PRIMARY KEY, author_id INT REFERENCES authors(id), title TEXT)');
    await sql(server, "INSERT INTO authors VALUES (1, 'Ann')");
    await sql(server, "INSERT INTO books VALUES (1, 1, 'A1')");
  });
  afterAll(async () => {
    await Promise.all(clients.map(async (c) => c.dispose()));
    await server?.close();
  });

  it("a live query sends the current result, then the result of each commit, a child table's through a nested relation", async () => {
    const sub = subscribe(client(), 'subscription { authors(order_by: {id: asc}) { id name books(order_by: {id: asc}) { title } } }');
    await sub.until((s) => s.results.length === 1);
    expect(sub.results[0]).toEqual({ data: { authors: [{ id: 1, name: 'Ann', books: [{ title: 'A1' }] }] } });
    await sql(server, "INSERT INTO authors VALUES (2, 'Bob')");
    // Within one commit: the next result is there before the next commit is made.
    await sub.until((s) => s.results.length === 2);
    expect(sub.results[1].data.authors.map((a: { name: string }) => a.name)).toEqual(['Ann', 'Bob']);
    await sql(server, "INSERT INTO books VALUES (2, 2, 'B1')");
    await sub.until((s) => s.results.length === 3);
    expect(sub.results[2].data.authors[1].books).toEqual([{ title: 'B1' }]);
    await sql(server, "UPDATE books SET title = 'A1, revised' WHERE id = 1");
    await sub.until((s) => s.results.length === 4);
    expect(sub.results[3].data.authors[0].books).toEqual([{ title: 'A1, revised' }]);
    // A commit to a table the query does not read sends nothing.
    await sql(server, 'CREATE TABLE unrelated (id INT PRIMARY KEY)');
    await sql(server, 'INSERT INTO unrelated VALUES (1)');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sub.results).toHaveLength(4);
    sub.stop();
  });

  it('a live query re-runs when a table its where reaches through a relation changes', async () => {
    const sub = subscribe(client(), 'subscription { authors(where: {books: {title: {_eq: "wanted"}}}) { name } }');
    await sub.until((s) => s.results.length === 1);
    expect(sub.results[0].data.authors).toEqual([]);
    await sql(server, "INSERT INTO books VALUES (3, 1, 'wanted')");
    await sub.until((s) => s.results.length === 2);
    expect(sub.results[1].data.authors).toEqual([{ name: 'Ann' }]);
    sub.stop();
  });

  it('a live query with an alias, variables and a fragment; a dropped table ends it with TABLE_NOT_FOUND', async () => {
    await sql(server, 'CREATE TABLE shelf (id INT PRIMARY KEY, label TEXT)');
    await sql(server, "INSERT INTO shelf VALUES (1, 'x'), (2, 'y')");
    const query =
      'subscription($min: Int!) { top: shelf(where: {id: {_gte: $min}}, order_by: {id: desc}) { ...cell } } fragment cell on shelf { key: id label }';
    const sub = subscribe(client(), query, { min: 2 });
    await sub.until((s) => s.results.length === 1);
    expect(sub.results[0].data).toEqual({ top: [{ key: 2, label: 'y' }] });
    await sql(server, "INSERT INTO shelf VALUES (3, 'z')");
    await sub.until((s) => s.results.length === 2);
    expect(sub.results[1].data.top.map((r: { key: number }) => r.key)).toEqual([3, 2]);
    await sql(server, 'DROP TABLE shelf');
    await sub.until((s) => s.completed);
    expect(sub.results.at(-1).errors[0].extensions.code).toBe('TABLE_NOT_FOUND');
  });

  it('holds the depth limit and builds the Subscription root of hostile table names', async () => {
    const deep = subscribe(client(), `subscription { authors { ${'books { authors { '.repeat(10)}id${' } }'.repeat(10)} } }`);
    await deep.until((s) => s.completed);
    expect(deep.results[0].errors[0].extensions.code).toBe('LIMIT_EXCEEDED');
    await sql(server, 'CREATE TABLE "svcdb_change" ("1st" INT PRIMARY KEY, "my-col" TEXT)');
    await sql(server, 'CREATE TABLE "my-table" (id INT PRIMARY KEY)');
    await sql(server, 'INSERT INTO "svcdb_change" VALUES (1, \'a\')');
    const fields = await gql(server, '{ __schema { subscriptionType { fields { name } } } }');
    const names = fields.body.data.__schema.subscriptionType.fields.map((f: { name: string }) => f.name);
    expect(names).toEqual(expect.arrayContaining(['svcdb_change_2', 'svcdb_change_2_events', 'my_table', 'my_table_events']));
    const sub = subscribe(client(), 'subscription { svcdb_change_2 { x1st my_col } }');
    await sub.until((s) => s.results.length === 1);
    expect(sub.results[0].data.svcdb_change_2).toEqual([{ x1st: 1, my_col: 'a' }]);
    sub.stop();
  });

  it('<table>_events with from_sequence resumes exactly after the last sequence seen', async () => {
    await sql(server, 'CREATE TABLE ledger (id INT PRIMARY KEY, amount INT)');
    const first = subscribe(client(), 'subscription { ledger_events(from_sequence: "0", operations: [INSERT]) { sequence operation key value } }');
    for (let i = 1; i <= 5; i++) await sql(server, `INSERT INTO ledger VALUES (${i}, ${i * 10})`);
    await first.until((s) => s.results.length === 5);
    first.stop();
    const seen = first.results.map((r) => r.data.ledger_events);
    expect(seen.map((e) => e.key.id)).toEqual([1, 2, 3, 4, 5]);
    for (let i = 6; i <= 8; i++) await sql(server, `INSERT INTO ledger VALUES (${i}, ${i * 10})`);
    const resumed = subscribe(client(), 'subscription($from: bigint) { ledger_events(from_sequence: $from, operations: [INSERT]) { sequence key } }', {
      from: seen[2].sequence,
    });
    await resumed.until((s) => s.results.length === 5);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(resumed.results.map((r) => r.data.ledger_events.key.id)).toEqual([4, 5, 6, 7, 8]);
    resumed.stop();
  });

  it('sends every change of concurrent writers once: 0 missed, 0 repeated', async () => {
    await sql(server, 'CREATE TABLE busy (id INT PRIMARY KEY)');
    // From the table's creation on: every insert, whether before or after the feed opened.
    const sub = subscribe(client(), 'subscription { busy_events(from_sequence: "0", operations: [INSERT]) { sequence key } }');
    const writers = 4;
    const each = 50;
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let i = 0; i < each; i++) await sql(server, `INSERT INTO busy VALUES (${w * 1000 + i})`);
      }),
    );
    await sub.until((s) => s.results.length === writers * each);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const events = sub.results.map((r) => r.data.busy_events);
    expect(events).toHaveLength(writers * each);
    expect(new Set(events.map((e) => e.key.id)).size).toBe(writers * each);
    for (let i = 1; i < events.length; i++) expect(Number(events[i].sequence)).toBeGreaterThan(Number(events[i - 1].sequence));
    sub.stop();
  });

  it('speaks the legacy subscriptions-transport-ws protocol with the tenant schema', async () => {
    const socket = new WebSocket(wsUrl, 'graphql-ws');
    const messages: any[] = [];
    socket.on('message', (data) => messages.push(JSON.parse(String(data))));
    socket.on('error', () => undefined);
    await eventually(() => socket.readyState === WebSocket.OPEN);
    socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${server.apiKey}` } }));
    await eventually(() => messages.some((m) => m.type === 'connection_ack'));
    socket.send(JSON.stringify({ id: '1', type: 'start', payload: { query: 'subscription { authors(where: {id: {_eq: 1}}) { name } }' } }));
    await eventually(() => messages.some((m) => m.type === 'data' && m.id === '1'));
    await sql(server, "UPDATE authors SET name = 'Ann B.' WHERE id = 1");
    await eventually(() => messages.filter((m) => m.type === 'data' && m.id === '1').length === 2);
    const results = messages.filter((m) => m.type === 'data' && m.id === '1').map((m) => m.payload.data.authors);
    expect(results).toEqual([[{ name: 'Ann' }], [{ name: 'Ann B.' }]]);
    socket.send(JSON.stringify({ id: '1', type: 'stop' }));
    await eventually(() => messages.some((m) => m.type === 'complete' && m.id === '1'));
    socket.close();
  });

  it('runs a mutation over the WebSocket in a transaction; a read_only key may subscribe, not mutate', async () => {
    await sql(server, 'CREATE TABLE notes (id INT PRIMARY KEY, body TEXT)');
    const admin = subscribe(client(), 'mutation { insert_notes(objects: [{id: 1, body: "a"}, {id: 2, body: "b"}]) { affected_rows } }');
    await admin.until((s) => s.completed);
    expect(admin.results[0]).toEqual({ data: { insert_notes: { affected_rows: 2 } } });
    const rows = (await server.sql.execute('SELECT count(*) AS n FROM notes', { params: [], timeoutMs: 10_000, maxRows: 10, tenant: 'default' })).rows;
    expect(Number(rows[0]!['n'])).toBe(2);
    // One failing field rolls the whole mutation back (Hasura's rule), as over HTTP.
    const failing = subscribe(
      client(),
      'mutation { a: insert_notes_one(object: {id: 3, body: "c"}) { id } b: insert_notes_one(object: {id: 1, body: "dup"}) { id } }',
    );
    await failing.until((s) => s.completed);
    expect(failing.results[0].data).toBeNull();
    expect(failing.results[0].errors[0].extensions.code).toBeDefined();
    const after = (await server.sql.execute('SELECT count(*) AS n FROM notes', { params: [], timeoutMs: 10_000, maxRows: 10, tenant: 'default' })).rows;
    expect(Number(after[0]!['n'])).toBe(2);

    const { key } = await newKey(server.dataDir, { role: 'read_only' });
    const reader = { Authorization: `Bearer ${key}` };
    // The server re-reads its key file about once a second.
    let live = subscribe(client(reader), 'subscription { notes(order_by: {id: asc}) { id } }');
    await eventually(async () => {
      if (live.results[0]?.data) return true;
      if (live.completed) live = subscribe(client(reader), 'subscription { notes(order_by: {id: asc}) { id } }');
      await new Promise((resolve) => setTimeout(resolve, 100));
      return false;
    }, 10_000);
    expect(live.results[0].data.notes).toEqual([{ id: 1 }, { id: 2 }]);
    live.stop();
    const refused = subscribe(client(reader), 'mutation { delete_notes(where: {}) { affected_rows } }');
    await refused.until((s) => s.completed);
    expect(refused.results[0].errors[0].extensions.code).toBe('AUTHORIZATION_DENIED');
  });

  it('keeps tenants apart over the WebSocket', async () => {
    await sql(server, 'CREATE TABLE vault (id INT PRIMARY KEY, secret TEXT)', 'tenant_a');
    await sql(server, "INSERT INTO vault VALUES (1, 'a only')", 'tenant_a');
    const b = await newKey(server.dataDir, { role: 'read_write', tenant: 'tenant_b' });
    const a = await newKey(server.dataDir, { role: 'read_write', tenant: 'tenant_a' });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // Tenant A's key sees its table.
    const own = subscribe(client({ Authorization: `Bearer ${a.key}` }), 'subscription { vault { secret } }');
    await own.until((s) => s.results.length === 1);
    expect(own.results[0].data.vault).toEqual([{ secret: 'a only' }]);
    own.stop();
    // Tenant B's key has no such field in its schema, nor events of it.
    for (const query of ['subscription { vault { secret } }', 'subscription { vault_events(from_sequence: "0") { value } }']) {
      const other = subscribe(client({ Authorization: `Bearer ${b.key}` }), query);
      await other.until((s) => s.completed);
      expect(other.results[0]?.data ?? null).toBeNull();
      expect(other.results[0].errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    }
    // Nor may it pick tenant A with X-Tenant-ID: the connection is refused (4403).
    const closed = await new Promise<{ code: number }>((resolve) => {
      const refused = client({ Authorization: `Bearer ${b.key}`, 'X-Tenant-ID': 'tenant_a' });
      refused.on('closed', (event) => resolve(event as { code: number }));
      refused.subscribe({ query: 'subscription { vault { secret } }' }, { next: () => undefined, error: () => undefined, complete: () => undefined });
    });
    expect(closed.code).toBe(4403);
  });

  it('a table created after the connection opened is a new subscription field of its next operation', async () => {
    const shared = client();
    const before = subscribe(shared, 'subscription { fresh { id } }');
    await before.until((s) => s.completed);
    expect(before.results[0].errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    await sql(server, 'CREATE TABLE fresh (id INT PRIMARY KEY)');
    await sql(server, 'INSERT INTO fresh VALUES (7)');
    const after = subscribe(shared, 'subscription { fresh { id } }');
    await after.until((s) => s.results.length === 1);
    expect(after.results[0].data.fresh).toEqual([{ id: 7 }]);
    after.stop();
  });

  it('lists the Subscription root in introspection; a subscription over HTTP is refused', async () => {
    const fields = await gql(server, '{ __schema { subscriptionType { fields { name } } } }');
    const names = fields.body.data.__schema.subscriptionType.fields.map((f: { name: string }) => f.name);
    expect(names).toEqual(expect.arrayContaining(['authors', 'authors_events', 'books', 'books_events']));
    const overHttp = await gql(server, 'subscription { authors { id } }');
    expect(overHttp.body.errors[0].extensions.code).toBe('INVALID_QUERY');
    expect(overHttp.body.data).toBeUndefined();
  });
});
