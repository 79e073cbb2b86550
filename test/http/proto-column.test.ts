import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, query } from '../helpers/auth.js';
import type { TableDef } from '../../core/catalog.js';
import { encodeRow } from '../../core/row-codec.js';
import { RowJson } from '../../sinks/events/change-event.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { column, itemsTable } from '../helpers/stack.js';

/**
 * PostgreSQL allows a column named "__proto__": its value must come back as a member of the row
 * like any other (a plain assignment of that name would set the row object's prototype instead:
 * the value vanished from the JSON, and a jsonb object became the row's prototype).
 */
describe('a column named "__proto__"', () => {
  let server: TestServer;
  let admin: Record<string, string>;
  const text = async (path: string, init: RequestInit = {}): Promise<{ status: number; text: string }> => {
    const response = await fetch(`${server.baseUrl}/api/v1${path}`, { ...init, headers: { ...admin, 'content-type': 'application/json' } });
    return { status: response.status, text: await response.text() };
  };

  beforeAll(async () => {
    server = await startTestServer();
    admin = bearer(server.apiKey);
    for (const sql of [
      'CREATE TABLE p (id BIGINT PRIMARY KEY, "__proto__" JSONB, "constructor" TEXT)',
      `INSERT INTO p VALUES (1, '{"polluted": true}', 'c'), (2, '3', NULL)`,
    ]) {
      const result = await query(server.baseUrl, admin, sql);
      expect(result.status, JSON.stringify(result.body)).toBe(200);
    }
  });
  afterAll(() => server?.close());

  it('is a member of every row POST /query answers, and sets no prototype', async () => {
    const reply = await text('/query', { method: 'POST', body: JSON.stringify({ sql: 'SELECT * FROM p ORDER BY id' }) });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.text).toContain('"data":[{"id":1,"__proto__":{"polluted":true},"constructor":"c"},{"id":2,"__proto__":3,"constructor":null}]');
    const named = await text('/query', { method: 'POST', body: JSON.stringify({ sql: 'SELECT 1 AS "__proto__", 2 AS b' }) });
    expect(named.text).toContain('"data":[{"__proto__":1,"b":2}]');
  });

  it('is a member of a row read by key and of the list of rows', async () => {
    const one = await text('/tables/p/rows/1');
    expect(one.status, one.text).toBe(200);
    expect(one.text).toContain('{"id":1,"__proto__":{"polluted":true},"constructor":"c"}');
    const list = await text('/tables/p/rows?limit=10');
    expect(list.status, list.text).toBe(200);
    expect(list.text).toContain('{"id":2,"__proto__":3,"constructor":null}');
  });

  it('is a member of a vector search result\'s metadata, as any column whose name starts with "__"', async () => {
    for (const sql of [
      'CREATE TABLE vp (id BIGINT PRIMARY KEY, "__proto__" JSONB, "__tag" TEXT, name TEXT, emb VECTOR(3))',
      'CREATE INDEX vp_emb ON vp USING hnsw (emb)',
      `INSERT INTO vp VALUES (1, '{"polluted": true}', 't', 'one', '[1,0,0]')`,
    ]) {
      const result = await query(server.baseUrl, admin, sql);
      expect(result.status, JSON.stringify(result.body)).toBe(200);
    }
    for (let round = 0; round < 2; round++) {
      const reply = await text('/vectors/search', {
        method: 'POST',
        body: JSON.stringify({ index: 'vp_emb', vector: [1, 0, 0], top_k: 1, include_metadata: true }),
      });
      expect(reply.status, reply.text).toBe(200);
      expect(JSON.parse(reply.text).results[0].metadata).toEqual(JSON.parse('{"__proto__":{"polluted":true},"__tag":"t","name":"one"}'));
      expect(reply.text).toContain('"metadata":{"__proto__":{"polluted":true},"__tag":"t","name":"one"}');
    }
  });

  it("is a member of a change event's row and key (CDC, webhooks)", () => {
    // A table whose primary key column is named "__proto__".
    const base = itemsTable(7);
    const table: TableDef = { ...base, columns: [column(1, '__proto__', { name: 'int8' }, false), ...base.columns.slice(1)] };
    const { row, key } = new RowJson(table).decode(encodeRow(table.columns, [5n, 'five', 1]));
    expect(JSON.stringify(row)).toBe('{"__proto__":5,"name":"five","score":1}');
    expect(JSON.stringify(key)).toBe('{"__proto__":5}');
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
  });
});
