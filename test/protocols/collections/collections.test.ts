import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, bearer, query } from '../../helpers/auth.js';
import { startTestServer, type TestServer } from '../../helpers/sql-server.js';
import { UUID, expectError, v1 } from './client.js';

/** The collection interface against the real server: CRUD, paging, auto-create, the extra column, bad input. */
describe('collections: /v1/api/{collection}', () => {
  let server: TestServer;
  let key = '';
  const sql = (text: string, params: unknown[] = []) => query(server.baseUrl, bearer(server.apiKey), text, params);
  beforeAll(async () => {
    server = await startTestServer({ env: { SVC_BODY_LIMIT_BYTES: '65536' } });
    key = server.apiKey;
  });
  afterAll(() => server?.close());

  it('round-trips create, read, list, replace, merge and delete', async () => {
    const created = await v1(server.baseUrl, '/api/widgets', { key, body: { name: 'first', colour: 'red' } });
    expect(created.status).toBe(201);
    const widget = created.body;
    expect(widget).toMatchObject({ name: 'first', colour: 'red' });
    expect(widget.id).toMatch(UUID);
    expect(Date.parse(widget.created_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(widget.updated_at).toBe(widget.created_at);
    expect(created.headers.get('location')).toBe(`/v1/api/widgets/${widget.id}`);

    expect((await v1(server.baseUrl, `/api/widgets/${widget.id}`, { key })).body).toEqual(widget);
    expect((await v1(server.baseUrl, '/api/widgets', { key })).body).toEqual([widget]);

    const replaced = await v1(server.baseUrl, `/api/widgets/${widget.id}`, {
      key,
      method: 'PUT',
      body: { ...widget, name: 'renamed', colour: undefined, size: 3 },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ id: widget.id, name: 'renamed', size: 3, created_at: widget.created_at });
    expect(replaced.body).not.toHaveProperty('colour');
    expect(Date.parse(replaced.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(widget.updated_at));

    const merged = await v1(server.baseUrl, `/api/widgets/${widget.id}`, { key, method: 'PATCH', body: { colour: 'blue', size: null } });
    expect(merged.status).toBe(200);
    expect(merged.body).toMatchObject({ id: widget.id, name: 'renamed', colour: 'blue' });
    expect(merged.body).not.toHaveProperty('size');

    const deleted = await v1(server.baseUrl, `/api/widgets/${widget.id}`, { key, method: 'DELETE' });
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeUndefined();
    expectError(await v1(server.baseUrl, `/api/widgets/${widget.id}`, { key }), 404, 'NOT_FOUND');
    expectError(await v1(server.baseUrl, `/api/widgets/${widget.id}`, { key, method: 'DELETE' }), 404, 'NOT_FOUND');
    expectError(await v1(server.baseUrl, `/api/widgets/${widget.id}`, { key, method: 'PATCH', body: { name: 'x' } }), 404, 'NOT_FOUND');
  });

  it('PUT to an unknown id creates the resource there (201)', async () => {
    const id = '3f0e7a52-1c84-4f5a-9d0b-6a2f1e9c4b11';
    const put = await v1(server.baseUrl, `/api/gadgets/${id}`, { key, method: 'PUT', body: { name: 'made by put' } });
    expect(put.status).toBe(201);
    expect(put.body).toMatchObject({ id, name: 'made by put' });
    expect(put.headers.get('location')).toBe(`/v1/api/gadgets/${id}`);
    expect((await v1(server.baseUrl, `/api/gadgets/${id}`, { key, method: 'PUT', body: { name: 'again' } })).status).toBe(200);
    expectError(
      await v1(server.baseUrl, `/api/gadgets/${id}`, { key, method: 'PUT', body: { id: '11111111-1111-4111-8111-111111111111', name: 'x' } }),
      422,
      'VALIDATION_ERROR',
    );
    expectError(await v1(server.baseUrl, '/api/gadgets', { key, body: { id, name: 'taken' } }), 409, 'CONSTRAINT_VIOLATION');
  });

  it('lists in creation order with limit and offset', async () => {
    for (let i = 0; i < 7; i++) expect((await v1(server.baseUrl, '/api/pages', { key, body: { name: `n${i}`, i } })).status).toBe(201);
    const names = async (q: string) => ((await v1(server.baseUrl, `/api/pages${q}`, { key })).body as { name: string }[]).map((r) => r.name);
    expect(await names('')).toEqual(['n0', 'n1', 'n2', 'n3', 'n4', 'n5', 'n6']);
    expect(await names('?limit=3')).toEqual(['n0', 'n1', 'n2']);
    expect(await names('?limit=3&offset=3')).toEqual(['n3', 'n4', 'n5']);
    expect(await names('?limit=3&offset=6')).toEqual(['n6']);
    expect(await names('?offset=10')).toEqual([]);
    expectError(await v1(server.baseUrl, '/api/pages?limit=0', { key }), 400, 'INVALID_QUERY');
    expectError(await v1(server.baseUrl, '/api/pages?limit=10001', { key }), 400, 'INVALID_QUERY');
    expectError(await v1(server.baseUrl, '/api/pages?offset=-1', { key }), 400, 'INVALID_QUERY');
    expectError(await v1(server.baseUrl, '/api/pages?name=n1', { key }), 400, 'INVALID_QUERY');
    // A collection nobody wrote to yet is empty (it is created by its first write).
    expect((await v1(server.baseUrl, '/api/nothing_yet', { key })).body).toEqual([]);
  });

  it('auto-creates the table on the first POST, and SQL sees the same rows', async () => {
    const created = (await v1(server.baseUrl, '/api/books', { key, body: { name: 'Dune', author: 'Herbert', tags: ['sf'] } })).body;
    const table = await api(server.baseUrl, '/tables/books', { headers: bearer(key) });
    expect(table.status).toBe(200);
    expect(table.body.columns.map((c: { name: string; type: string }) => `${c.name} ${c.type}`)).toEqual([
      'id UUID',
      'name TEXT',
      'created_at TIMESTAMP WITH TIME ZONE',
      'updated_at TIMESTAMP WITH TIME ZONE',
      'extra JSONB',
    ]);
    const rows = await sql(`SELECT id, name, extra->>'author' AS author, extra->'tags' AS tags FROM books`);
    expect(rows.body.data).toEqual([{ id: created.id, name: 'Dune', author: 'Herbert', tags: ['sf'] }]);
    // Written by SQL, read as a resource: the extra column is spread into the resource.
    await sql(`INSERT INTO books (name, extra) VALUES ('Emma', '{"author": "Austen", "year": 1815}')`);
    const list = (await v1(server.baseUrl, '/api/books', { key })).body as Record<string, unknown>[];
    expect(list.find((b) => b.name === 'Emma')).toMatchObject({ author: 'Austen', year: 1815 });
    expect(list.every((b) => !('extra' in b))).toBe(true);
  });

  it('first writes racing to a new collection all succeed (one creates the table)', async () => {
    const writes = await Promise.all(Array.from({ length: 6 }, (_v, i) => v1(server.baseUrl, '/api/raced', { key, body: { name: `r${i}` } })));
    expect(writes.map((w) => w.status)).toEqual([201, 201, 201, 201, 201, 201]);
    expect((await v1(server.baseUrl, '/api/raced', { key })).body).toHaveLength(6);
  });

  it('extra fields of every JSON type round-trip through the JSONB column', async () => {
    const fields = { n: 1.5, big: 12345678901, flag: false, nothing: null, nested: { a: [1, { b: 'c' }] }, list: [1, 'two', null], 'odd key': 'x' };
    const created = (await v1(server.baseUrl, '/api/things', { key, body: { name: 'all', ...fields } })).body;
    expect(created).toMatchObject(fields);
    expect((await v1(server.baseUrl, `/api/things/${created.id}`, { key })).body).toEqual(created);
    expect((await sql(`SELECT extra FROM things WHERE id = $1`, [created.id])).body.data[0].extra).toEqual(fields);
  });

  it('an existing table: known fields go to its columns, others to extra, or 422 without one', async () => {
    await sql(`CREATE TABLE orders (id UUID PRIMARY KEY, name TEXT NOT NULL, qty INTEGER NOT NULL DEFAULT 1, price NUMERIC(10,2))`);
    const created = await v1(server.baseUrl, '/api/orders', { key, body: { name: 'o1', qty: 3, price: 9.5 } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'o1', qty: 3, price: '9.50' });
    expect(created.body).not.toHaveProperty('created_at');
    const unknown = await v1(server.baseUrl, '/api/orders', { key, body: { name: 'o2', colour: 'red', shape: 'square' } });
    expectError(unknown, 422, 'VALIDATION_ERROR');
    expect(unknown.body.details.fields).toEqual(['colour', 'shape']);
    expectError(await v1(server.baseUrl, '/api/orders', { key, body: { name: 'o3', qty: 'many' } }), 422, 'TYPE_MISMATCH');
    expect((await sql('SELECT count(*) AS n FROM orders')).body.data[0].n).toBe(1);

    await sql(`CREATE TABLE counters (id BIGSERIAL PRIMARY KEY, name TEXT)`);
    const counter = await v1(server.baseUrl, '/api/counters', { key, body: { name: 'c' } });
    expect(counter.status).toBe(201);
    expect(counter.body).toEqual({ id: 1, name: 'c' });
    expect((await v1(server.baseUrl, '/api/counters/1', { key })).body).toEqual({ id: 1, name: 'c' });

    await sql(`CREATE TABLE plain (k INTEGER PRIMARY KEY, name TEXT)`);
    expectError(await v1(server.baseUrl, '/api/plain', { key }), 409, 'INVALID_STATE');
  });

  it('refuses bad input with the collection error body and writes nothing', async () => {
    await v1(server.baseUrl, '/api/strict', { key, body: { name: 'seed' } });
    const before = (await sql('SELECT count(*) AS n FROM strict')).body.data[0].n;
    const invalidId = await v1(server.baseUrl, '/api/strict/not-a-uuid', { key });
    expectError(invalidId, 400, 'INVALID_QUERY');
    expect(invalidId.body.details).toMatchObject({ field: 'id' });
    expect(typeof invalidId.body.request_id).toBe('string');
    expect(invalidId.body).not.toHaveProperty('error');
    expectError(await v1(server.baseUrl, '/api/strict/not-a-uuid', { key, method: 'DELETE' }), 400, 'INVALID_QUERY');
    expectError(await v1(server.baseUrl, '/api/strict/123e4567-e89b-42d3-a456-426614174000', { key }), 404, 'NOT_FOUND');
    const missingName = await v1(server.baseUrl, '/api/strict', { key, body: { colour: 'red' } });
    expectError(missingName, 422, 'VALIDATION_ERROR');
    expect(missingName.body.details.field).toBe('name');
    expectError(await v1(server.baseUrl, '/api/strict', { key, body: { name: 42 } }), 422, 'VALIDATION_ERROR');
    expectError(await v1(server.baseUrl, '/api/strict', { key, body: { name: '' } }), 422, 'VALIDATION_ERROR');
    expectError(await v1(server.baseUrl, '/api/strict', { key, body: { name: 'x', id: 'nope' } }), 422, 'VALIDATION_ERROR');
    expectError(await v1(server.baseUrl, '/api/strict', { key, body: { name: 'x', extra: { a: 1 } } }), 422, 'VALIDATION_ERROR');
    expectError(await v1(server.baseUrl, '/api/strict', { key, body: [{ name: 'x' }] }), 422, 'VALIDATION_ERROR');
    expectError(await v1(server.baseUrl, '/api/strict', { key, body: 'null' }), 422, 'VALIDATION_ERROR');
    expectError(await v1(server.baseUrl, '/api/strict', { key, body: '{"name": "x",' }), 400, 'INVALID_QUERY');
    const big = await v1(server.baseUrl, '/api/strict', { key, body: { name: 'big', blob: 'x'.repeat(70_000) } });
    expectError(big, 413, 'PAYLOAD_TOO_LARGE');
    expectError(await v1(server.baseUrl, '/api/bad-name!', { key }), 400, 'INVALID_QUERY');
    expectError(await v1(server.baseUrl, '/api/strict/a/b', { key }), 404, 'NOT_FOUND');
    expect((await sql('SELECT count(*) AS n FROM strict')).body.data[0].n).toBe(before);
  });
});
