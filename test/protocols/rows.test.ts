import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { qs, restClient, type RestReply } from './rest-client.js';

/** /tables/{t}/rows and /tables/{t}/rows/{id} over a real server. */
describe('REST rows', () => {
  let server: TestServer;
  let call: (method: string, path: string, body?: unknown) => Promise<RestReply>;
  const sql = async (text: string, params: unknown[] = []) => {
    const r = await call('POST', '/query', { sql: text, params });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.data as Record<string, unknown>[];
  };
  const count = async (table: string): Promise<number> => Number((await sql(`SELECT count(*) AS c FROM ${table}`))[0]!.c);

  beforeAll(async () => {
    server = await startTestServer();
    call = restClient(server);
    await sql(`CREATE TABLE items (
      id BIGSERIAL PRIMARY KEY, name TEXT NOT NULL, price NUMERIC(10,2) DEFAULT 1.50, qty INTEGER CHECK (qty >= 0),
      tags JSONB, seen TIMESTAMPTZ, sku VARCHAR(8) UNIQUE)`);
  });
  afterAll(() => server?.close());

  describe('POST /tables/{t}/rows', () => {
    it('inserts the three body forms: {row}, {rows}, a bare row, and an array', async () => {
      const one = await call('POST', '/tables/items/rows', { row: { name: 'apple', qty: 3, sku: 'A1' }, returning: ['*'] });
      expect(one.status).toBe(201);
      expect(one.body).toEqual({
        success: true,
        inserted_count: 1,
        data: [{ id: 1, name: 'apple', price: '1.50', qty: 3, tags: null, seen: null, sku: 'A1' }],
      });
      const many = await call('POST', '/tables/items/rows', {
        rows: [
          { name: 'pear', tags: { c: ['x'] } },
          { name: 'plum', seen: '2024-01-02T03:04:05.123456Z' },
        ],
        returning: ['id', 'name', 'seen'],
      });
      expect(many.body).toEqual({
        success: true,
        inserted_count: 2,
        data: [
          { id: 2, name: 'pear', seen: null },
          { id: 3, name: 'plum', seen: '2024-01-02T03:04:05.123456Z' },
        ],
      });
      const bare = await call('POST', '/tables/items/rows', { name: 'kiwi', price: 2 });
      expect(bare.body).toEqual({ success: true, inserted_count: 1, data: [] });
      const array = await call('POST', '/tables/items/rows', [{ name: 'fig' }, { name: 'lime' }]);
      expect(array.body).toMatchObject({ inserted_count: 2 });
      expect(await count('items')).toBe(6);
    });

    it('a bulk insert is atomic: one bad row and nothing is inserted', async () => {
      const before = await count('items');
      const rows = Array.from({ length: 100 }, (_v, i) => ({ name: `bulk ${i}`, qty: i === 57 ? -1 : i }));
      const r = await call('POST', '/tables/items/rows', { rows });
      expect(r.status).toBe(409);
      expect(r.body.error.code).toBe('CONSTRAINT_VIOLATION');
      const typed = await call('POST', '/tables/items/rows', { rows: [{ name: 'ok' }, { name: 'bad', qty: 'many' }] });
      expect(typed.status).toBe(422);
      expect(typed.body.error).toMatchObject({ code: 'TYPE_MISMATCH', details: { column: 'qty', row: 1 } });
      expect(await count('items')).toBe(before);
    });

    it('answers each error with its code', async () => {
      const dup = await call('POST', '/tables/items/rows', { row: { name: 'again', sku: 'A1' } });
      expect(dup.status).toBe(409);
      expect(dup.body.error).toMatchObject({ code: 'CONSTRAINT_VIOLATION', details: { constraint: 'items_sku_key' } });
      expect((await call('POST', '/tables/items/rows', { name: 'x', colour: 'red' })).body.error).toMatchObject({
        code: 'COLUMN_NOT_FOUND',
        details: { column: 'colour' },
      });
      expect((await call('POST', '/tables/items/rows', { name: 'x', sku: 'much too long' })).status).toBe(422);
      expect((await call('POST', '/tables/items/rows', { qty: 1 })).status).toBe(409);
      expect((await call('POST', '/tables/nope/rows', { a: 1 })).body.error.code).toBe('TABLE_NOT_FOUND');
      expect((await call('POST', '/tables/items/rows', { row: 5 })).status).toBe(422);
      expect((await call('POST', '/tables/items/rows', { rows: [] })).status).toBe(422);
      expect((await call('POST', '/tables/items/rows', { row: { name: 'a' }, rows: [{ name: 'b' }] })).status).toBe(422);
      expect((await call('POST', '/tables/items/rows', { row: { name: 'a' }, extra: true })).status).toBe(422);
      expect((await call('POST', '/tables/items/rows', { row: { name: 'a' }, returning: ['nope'] })).body.error.code).toBe('COLUMN_NOT_FOUND');
    });

    it('on_conflict update (all given columns, or update_columns) and nothing', async () => {
      const up = await call('POST', '/tables/items/rows', {
        row: { name: 'APPLE', qty: 9, sku: 'A1' },
        on_conflict: { columns: ['sku'], action: 'update', update_columns: ['qty'] },
        returning: ['id', 'name', 'qty'],
      });
      expect(up.status).toBe(201);
      expect(up.body).toEqual({ success: true, inserted_count: 1, data: [{ id: 1, name: 'apple', qty: 9 }] });
      const merge = await call('POST', '/tables/items/rows', {
        rows: [
          { id: 1, name: 'Apple' },
          { id: 1000, name: 'new' },
        ],
        on_conflict: { columns: ['id'] },
        returning: ['id', 'name', 'qty'],
      });
      expect(merge.body.data).toEqual([
        { id: 1, name: 'Apple', qty: 9 },
        { id: 1000, name: 'new', qty: null },
      ]);
      const nothing = await call('POST', '/tables/items/rows', {
        row: { id: 1, name: 'ignored' },
        on_conflict: { columns: ['id'], action: 'nothing' },
        returning: ['*'],
      });
      expect(nothing.body).toEqual({ success: true, inserted_count: 0, data: [] });
      expect((await sql('SELECT name FROM items WHERE id = 1'))[0]!.name).toBe('Apple');
      expect((await call('POST', '/tables/items/rows', { row: { id: 1, name: 'x' }, on_conflict: { columns: ['name'] } })).status).toBe(400);
      expect((await call('POST', '/tables/items/rows', { row: { id: 1, name: 'x' }, on_conflict: { columns: ['id'], action: 'merge' } })).status).toBe(422);
      await sql('DELETE FROM items WHERE id = 1000');
    });

    it('a table with a column named row takes it in the envelope', async () => {
      await sql('CREATE TABLE grid ("row" INT, col INT)');
      expect((await call('POST', '/tables/grid/rows', { row: { row: 1, col: 2 } })).status).toBe(201);
      expect((await call('POST', '/tables/grid/rows', { row: 1, col: 2 })).status).toBe(422);
      expect(await sql('SELECT * FROM grid')).toEqual([{ row: 1, col: 2 }]);
    });

    it('takes 10,000 rows in one request as one log record', async () => {
      await sql('CREATE TABLE bulk (id BIGINT PRIMARY KEY, name TEXT, score DOUBLE PRECISION, ok BOOLEAN, at TIMESTAMPTZ)');
      const rows = Array.from({ length: 10_000 }, (_v, i) => ({
        id: i,
        name: `name ${i}`,
        score: i / 7,
        ok: i % 2 === 0,
        at: new Date(1_700_000_000_000 + i).toISOString(),
      }));
      const started = performance.now();
      const r = await call('POST', '/tables/bulk/rows', { rows });
      const ms = performance.now() - started;
      expect(r.status).toBe(201);
      expect(r.body.inserted_count).toBe(10_000);
      expect(await count('bulk')).toBe(10_000);
      console.info(`POST 10,000 rows: ${ms.toFixed(0)} ms (${Math.round(10_000 / (ms / 1000))} rows/s)`);
    });
  });

  describe('GET /tables/{t}/rows', () => {
    it('pages by offset with the pagination object; limit default 100, at most 10000', async () => {
      const all = await call('GET', '/tables/bulk/rows');
      expect(all.body.data).toHaveLength(100);
      expect(all.body.pagination).toMatchObject({ limit: 100, offset: 0, total_count: 10_000, has_more: true, prev_cursor: null });
      expect(typeof all.body.pagination.next_cursor).toBe('string');
      const page = await call('GET', '/tables/bulk/rows?limit=3&offset=9998&select=id');
      expect(page.body).toMatchObject({
        data: [{ id: 9998 }, { id: 9999 }],
        pagination: { limit: 3, offset: 9998, total_count: 10_000, has_more: false, next_cursor: null },
      });
      const over = await call('GET', '/tables/bulk/rows?limit=10001');
      expect(over.status).toBe(400);
      expect(over.body.error).toMatchObject({ code: 'LIMIT_EXCEEDED', details: { limit_max: 10_000 } });
      expect((await call('GET', '/tables/bulk/rows?limit=10000&select=id')).body.data).toHaveLength(10_000);
      expect((await call('GET', '/tables/bulk/rows?limit=0')).status).toBe(400);
      expect((await call('GET', '/tables/bulk/rows?offset=-1')).status).toBe(400);
    });

    it('filters, selects and orders (several keys, - for descending), with an exact total_count', async () => {
      const r = await call('GET', `/tables/bulk/rows${qs({ filter: "id < 10 AND name <> 'name 3'", select: 'id,ok', order_by: '-ok,-id', limit: 4 })}`);
      expect(r.status).toBe(200);
      expect(r.body.data).toEqual([
        { id: 8, ok: true },
        { id: 6, ok: true },
        { id: 4, ok: true },
        { id: 2, ok: true },
      ]);
      expect(r.body.pagination).toMatchObject({ total_count: 9, has_more: true });
      const nulls = await call('GET', `/tables/items/rows${qs({ select: 'name,qty', order_by: 'qty,name' })}`);
      expect(nulls.body.data.map((row: { qty: number | null }) => row.qty)).toEqual([9, null, null, null, null, null]);
    });

    it('refuses what is not one filter expression, unknown columns and injection in select and order_by', async () => {
      const refused = [
        '1=1; DROP TABLE bulk',
        '1=1) OR (1=1',
        '1=1 UNION SELECT 1, 2, 3, 4, 5',
        'id = 1 -- comment',
        '/* x */ true',
        'id IN (SELECT id FROM items)',
        'id = $1',
        'true ORDER BY id',
        'true LIMIT 1',
      ];
      for (const filter of refused) {
        const r = await call('GET', `/tables/bulk/rows${qs({ filter })}`);
        expect(r.status, filter).toBe(400);
        expect(r.body.error.code, filter).toBe('INVALID_QUERY');
      }
      expect((await call('GET', `/tables/bulk/rows${qs({ filter: 'nope = 1' })}`)).body.error.code).toBe('COLUMN_NOT_FOUND');
      expect((await call('GET', `/tables/bulk/rows${qs({ filter: "id = 'abc'" })}`)).status).toBe(422);
      for (const select of ['id, name FROM bulk; DROP TABLE bulk', '"id"', 'id,', 'nope', 'count(*)']) {
        const r = await call('GET', `/tables/bulk/rows${qs({ select })}`);
        expect(r.status, select).toBe(400);
      }
      for (const order of ['id; DROP TABLE bulk', 'id DESC', 'nope', 'id,id', '(id)']) {
        const r = await call('GET', `/tables/bulk/rows${qs({ order_by: order })}`);
        expect(r.status, order).toBe(400);
      }
      expect((await call('GET', `/tables/${encodeURIComponent('bulk; DROP TABLE bulk')}/rows`)).status).toBe(404);
      expect((await call('GET', `/tables/${encodeURIComponent('bulk" --')}/rows`)).status).toBe(404);
      expect(await count('bulk')).toBe(10_000);
    });

    it('reads views, and tables without a primary key by offset', async () => {
      await sql('CREATE VIEW cheap AS SELECT id, name FROM items WHERE price < 2');
      const view = await call('GET', '/tables/cheap/rows?order_by=id');
      expect(view.status).toBe(200);
      expect(view.body.pagination).toMatchObject({ total_count: view.body.data.length, next_cursor: null });
      const grid = await call('GET', '/tables/grid/rows?limit=1');
      expect(grid.body).toMatchObject({ data: [{ row: 1, col: 2 }], pagination: { total_count: 1, has_more: false, next_cursor: null } });
      expect((await call('POST', '/tables/cheap/rows', { id: 5 })).status).toBe(400);
    });
  });

  describe('PUT and DELETE /tables/{t}/rows', () => {
    it('updates the rows of a filter, returning what was asked', async () => {
      const r = await call('PUT', '/tables/bulk/rows', { filter: 'id >= 9990', updates: { name: 'late', ok: null }, returning: ['id', 'name', 'ok'] });
      expect(r.status).toBe(200);
      expect(r.body.affected_rows).toBe(10);
      expect(r.body.data[0]).toEqual({ id: 9990, name: 'late', ok: null });
      const quiet = await call('PUT', '/tables/bulk/rows', { filter: 'id = 1', updates: { score: 1.5 } });
      expect(quiet.body).toEqual({ success: true, affected_rows: 1, data: [] });
      expect((await call('PUT', '/tables/bulk/rows', { filter: 'id = -1', updates: { score: 1 } })).body.affected_rows).toBe(0);
    });

    it('requires a filter (true means every row) and refuses bad updates', async () => {
      const none = await call('PUT', '/tables/items/rows', { updates: { qty: 1 } });
      expect(none.status).toBe(400);
      expect(none.body.error.details.reason).toBe('filter_required');
      expect((await call('PUT', '/tables/items/rows', { filter: '  ', updates: { qty: 1 } })).status).toBe(400);
      expect((await call('PUT', '/tables/items/rows', { filter: 'true', updates: {} })).status).toBe(422);
      expect((await call('PUT', '/tables/items/rows', { filter: 'true', updates: { qty: 'lots' } })).status).toBe(422);
      expect((await call('PUT', '/tables/items/rows', { filter: 'true', updates: { nope: 1 } })).body.error.code).toBe('COLUMN_NOT_FOUND');
      expect((await call('PUT', '/tables/items/rows', { filter: 'true; DELETE FROM items', updates: { qty: 1 } })).status).toBe(400);
      expect((await call('PUT', '/tables/items/rows', { filter: 'true', updates: { qty: -5 } })).status).toBe(409);
      const all = await call('PUT', '/tables/items/rows', { filter: 'true', updates: { qty: 7 } });
      expect(all.body.affected_rows).toBe(await count('items'));
    });

    it('deletes the rows of a filter; none without one', async () => {
      const none = await call('DELETE', '/tables/bulk/rows');
      expect(none.status).toBe(400);
      expect(none.body.error.details.reason).toBe('filter_required');
      expect((await call('DELETE', '/tables/bulk/rows', {})).status).toBe(400);
      const r = await call('DELETE', '/tables/bulk/rows', { filter: "name = 'late'", returning: ['id'] });
      expect(r.body).toMatchObject({ success: true, deleted_count: 10 });
      expect(r.body.data).toHaveLength(10);
      expect((await call('DELETE', '/tables/bulk/rows', { filter: 'id < 0' })).body).toEqual({ success: true, deleted_count: 0, data: [] });
      expect((await call('DELETE', '/tables/bulk/rows', { filter: '1=1) OR (1=1' })).status).toBe(400);
      expect(await count('bulk')).toBe(9990);
    });
  });

  describe('/tables/{t}/rows/{id}', () => {
    it('GET, PATCH and DELETE one row by its primary key', async () => {
      const got = await call('GET', '/tables/items/rows/2');
      expect(got.status).toBe(200);
      expect(got.body.data).toMatchObject({ id: 2, name: 'pear', tags: { c: ['x'] } });
      expect((await call('GET', '/tables/items/rows/2?select=name')).body).toEqual({ data: { name: 'pear' } });
      const patched = await call('PATCH', '/tables/items/rows/2', { updates: { name: 'Pear', tags: null }, returning: ['name', 'tags'] });
      expect(patched.body).toEqual({ success: true, data: { name: 'Pear', tags: null } });
      expect((await call('PATCH', '/tables/items/rows/2', { updates: { qty: 1 } })).body).toEqual({ success: true, data: {} });
      expect((await call('DELETE', '/tables/items/rows/2')).body).toEqual({ success: true, deleted: true });
      for (const method of ['GET', 'DELETE']) {
        const gone = await call(method, '/tables/items/rows/2');
        expect(gone.status).toBe(404);
        expect(gone.body.error.code).toBe('NOT_FOUND');
      }
      expect((await call('PATCH', '/tables/items/rows/2', { updates: { qty: 1 } })).status).toBe(404);
    });

    it('converts the id to the key type and refuses what does not fit', async () => {
      expect((await call('GET', '/tables/items/rows/abc')).status).toBe(422);
      expect((await call('GET', '/tables/items/rows/3,4')).body.error.details.reason).toBe('id_parts');
      expect((await call('GET', '/tables/grid/rows/1')).body.error.details.reason).toBe('no_primary_key');
      expect((await call('GET', '/tables/nope/rows/1')).status).toBe(404);
      expect((await call('PATCH', '/tables/items/rows/3', { updates: { qty: 'x' } })).status).toBe(422);
      expect((await call('PATCH', '/tables/items/rows/3', {})).status).toBe(422);
    });

    it('composite keys: values in key order, separated by commas, a comma inside a value as %2C', async () => {
      await sql('CREATE TABLE stock (store TEXT, sku TEXT, day DATE, n INT, PRIMARY KEY (store, sku, day))');
      const rows = [
        { store: 'north', sku: 'a,b', day: '2024-05-01', n: 1 },
        { store: 'north', sku: 'a', day: '2024-05-01', n: 2 },
        { store: 'south side/2', sku: 'a', day: '2024-05-02', n: 3 },
      ];
      expect((await call('POST', '/tables/stock/rows', { rows })).status).toBe(201);
      const id = (row: { store: string; sku: string; day: string }) => [row.store, row.sku, row.day].map(encodeURIComponent).join(',');
      for (const row of rows) expect((await call('GET', `/tables/stock/rows/${id(row)}`)).body.data).toEqual(row);
      expect((await call('PATCH', `/tables/stock/rows/${id(rows[0]!)}`, { updates: { n: 10 }, returning: ['n'] })).body.data).toEqual({ n: 10 });
      expect((await call('DELETE', `/tables/stock/rows/${id(rows[2]!)}`)).body.deleted).toBe(true);
      expect((await call('GET', '/tables/stock/rows/north,a,b,2024-05-01')).body.error.details).toMatchObject({
        reason: 'id_parts',
        primary_key: ['store', 'sku', 'day'],
      });
      expect((await call('GET', '/tables/stock/rows/north,a')).status).toBe(400);
      expect((await call('GET', '/tables/stock/rows/north,a,2024-13-01')).status).toBe(422);
      expect(await count('stock')).toBe(2);
    });
  });
});
