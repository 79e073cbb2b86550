import { decode } from '@msgpack/msgpack';
import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TableDef } from '../../core/catalog.js';
import { JSON_NULL } from '../../core/json-exact.js';
import { encodeRow } from '../../core/row-codec.js';
import { RowJson } from '../../sinks/events/change-event.js';
import { gql } from '../graphql/client.js';
import { subscribe, WebSocket } from '../graphql/subscriptions/harness.js';
import { column } from '../helpers/stack.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { v1 } from './collections/client.js';

/**
 * A jsonb JSON null ('null'::jsonb) and SQL NULL: the engine's result keeps them apart (JSON_NULL
 * and null), every wire sends both as JSON null (docs/api.md). Each path below would fail if the
 * JSON_NULL object leaked as `{}` or broke its serializer.
 */
const VECTOR_KEY = 'vector-key';
const ROWS = [
  { id: 1, doc: null },
  { id: 2, doc: null },
  { id: 3, doc: { a: null } },
];
const SELECT = 'SELECT id, doc FROM jdocs ORDER BY id';

describe('the jsonb null and SQL NULL', () => {
  let server: TestServer;
  const clients: Client[] = [];
  const headers = (): Record<string, string> => ({ authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' });
  const post = async (path: string, body: unknown, extra: Record<string, string> = {}): Promise<Response> =>
    fetch(`${server.baseUrl}/api/v1${path}`, { method: 'POST', headers: { ...headers(), ...extra }, body: JSON.stringify(body) });
  const json = async (path: string, body?: unknown): Promise<any> => {
    const r = body === undefined ? await fetch(`${server.baseUrl}/api/v1${path}`, { headers: headers() }) : await post(path, body);
    const text = await r.text();
    expect(r.status, text).toBeLessThan(300);
    return JSON.parse(text);
  };
  const run = (text: string) => server.sql.execute(text, { params: [], timeoutMs: 10_000, maxRows: 1000, tenant: 'default' });

  beforeAll(async () => {
    server = await startTestServer({ env: { SVC_VECTOR_API_KEY: VECTOR_KEY } });
    await run('CREATE TABLE jdocs (id INTEGER PRIMARY KEY, doc JSONB)');
    await run(`INSERT INTO jdocs VALUES (1, 'null'), (2, NULL), (3, '{"a": null}')`);
  });
  afterAll(async () => {
    await Promise.all(clients.map(async (c) => c.dispose()));
    await server?.close();
  });

  it('the engine answers JSON_NULL for the JSON null and null for SQL NULL', async () => {
    const result = await run(`${SELECT}`);
    expect(result.rows.map((r) => r['doc'])).toEqual([JSON_NULL, null, { a: null }]);
    expect(result.rows[0]!['doc']).toBe(JSON_NULL);
    expect(result.rows[1]!['doc']).toBeNull();
    const arrow = await run(`SELECT '{"a": null}'::jsonb -> 'a' AS j, '{}'::jsonb -> 'a' AS missing`);
    expect(arrow.rows[0]).toEqual({ j: JSON_NULL, missing: null });
  });

  it('POST /query sends both as null, in JSON, MessagePack and NDJSON', async () => {
    expect((await json('/query', { sql: SELECT })).data).toEqual(ROWS);
    const packed = await post('/query', { sql: SELECT }, { accept: 'application/msgpack' });
    expect((decode(new Uint8Array(await packed.arrayBuffer())) as { data: unknown }).data).toEqual(ROWS);
    const lines = await post('/query', { sql: SELECT }, { accept: 'application/x-ndjson' });
    expect(
      (await lines.text())
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(ROWS);
  });

  it('POST /query/stream sends both as null', async () => {
    const r = await post('/query/stream', { sql: SELECT }, { accept: 'application/x-ndjson' });
    const text = await r.text();
    expect(r.status, text).toBe(200);
    expect(text).toContain('{"id":1,"doc":null}');
    expect(text).toContain('{"id":2,"doc":null}');
  });

  it('a transaction query sends both as null', async () => {
    const txn = await json('/transactions', {});
    expect((await json(`/transactions/${txn.transaction_id}/query`, { sql: SELECT })).data).toEqual(ROWS);
    await json(`/transactions/${txn.transaction_id}/rollback`, {});
  });

  it('an async query sends both as null', async () => {
    const created = await json('/query/async', { sql: SELECT });
    const deadline = Date.now() + 10_000;
    let record = await json(`/query/${created.query_id}`);
    while (record.status !== 'completed' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      record = await json(`/query/${created.query_id}`);
    }
    expect(record.status).toBe('completed');
    expect(record.data).toEqual(ROWS);
  });

  it('GraphQL over HTTP and a live query over WebSocket send both as null', async () => {
    const reply = await gql(server, '{ jdocs(order_by: {id: asc}) { id doc } }');
    expect(reply.body).toEqual({ data: { jdocs: ROWS } });
    const client = createClient({
      url: `${server.baseUrl.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { Authorization: `Bearer ${server.apiKey}` },
      retryAttempts: 0,
      lazy: true,
    });
    clients.push(client);
    const sub = subscribe(client, 'subscription { jdocs(order_by: {id: asc}) { id doc } }');
    await sub.until((s) => s.results.length === 1);
    expect(sub.results[0]).toEqual({ data: { jdocs: ROWS } });
    sub.stop();
  });

  it('a collection resource with a JSON null in a JSONB column, and as its extra column, reads as null / no extra fields', async () => {
    const created = await v1(server.baseUrl, '/api/jthings', { key: server.apiKey, body: { name: 'n' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await run(`ALTER TABLE jthings ADD COLUMN doc JSONB`);
    await run(`UPDATE jthings SET doc = 'null'::jsonb, extra = 'null'::jsonb`);
    const read = await v1(server.baseUrl, `/api/jthings/${created.body.id}`, { key: server.apiKey });
    expect(read.status, JSON.stringify(read.body)).toBe(200);
    expect(read.body.doc).toBeNull();
    expect(Object.keys(read.body).sort()).toEqual(['created_at', 'doc', 'id', 'name', 'updated_at']);
  });

  it('POST /vectors/search answers a JSON null metadata as {} (as SQL NULL)', async () => {
    await run('CREATE TABLE vdocs (id TEXT PRIMARY KEY, embedding VECTOR(2), metadata JSONB)');
    await run(`INSERT INTO vdocs VALUES ('a', '[1,0]', 'null'), ('b', '[0,1]', NULL)`);
    const found = await json('/vectors/search', { index: 'vdocs', vector: [1, 0], top_k: 2, include_metadata: true });
    expect(found.results.map((r: { id: string; metadata: unknown }) => [r.id, r.metadata])).toEqual([
      ['a', {}],
      ['b', {}],
    ]);
  });

  it('the Pinecone protocol leaves a JSON null metadata out, as SQL NULL', async () => {
    const pinecone = async (path: string, body?: unknown): Promise<any> => {
      const r = await fetch(`${server.baseUrl}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { 'api-key': VECTOR_KEY, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await r.text();
      expect(r.status, text).toBeLessThan(300);
      return JSON.parse(text);
    };
    await pinecone('/indexes', { name: 'jn', dimension: 2, metric: 'cosine' });
    await pinecone('/indexes/jn/vectors/upsert', { vectors: [{ id: 'x', values: [1, 0], metadata: { k: 'v' } }] });
    await run(`UPDATE pinecone_jn SET metadata = 'null'::jsonb, sparse_values = 'null'::jsonb`);
    const fetched = await pinecone('/indexes/jn/vectors/fetch?ids=x');
    expect(fetched.vectors.x).toEqual({ id: 'x', values: [1, 0] });
  });

  it('a change event (CDC, webhooks) carries both as plain null', () => {
    const table: TableDef = {
      id: 7,
      tenant: 'default',
      schema: 'public',
      name: 'j',
      kind: 'table',
      columns: [column(1, 'id', { name: 'int4' }, false), column(2, 'doc', { name: 'jsonb' })],
      primaryKey: [1],
      indexes: [],
      constraints: [],
      viewSql: null,
      createdAtMicros: 0n,
      updatedAtMicros: 0n,
    };
    const rowJson = new RowJson(table);
    const jsonNull = rowJson.decode(encodeRow(table.columns, [1, JSON_NULL])).row;
    const sqlNull = rowJson.decode(encodeRow(table.columns, [2, null])).row;
    expect(jsonNull['doc']).toBeNull();
    expect(sqlNull['doc']).toBeNull();
    // Events are cloned to the template worker: a class instance there would arrive as {}.
    expect(structuredClone(jsonNull)).toEqual({ id: 1, doc: null });
  });
});
