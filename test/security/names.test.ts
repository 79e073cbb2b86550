/**
 * Threat: a table or index name used as a path (`../`), as SQL (quotes), or as a weapon (NUL
 * bytes, megabyte names). Names never become file paths (the catalog is keyed by ids in LevelDB,
 * vector checkpoints by index id), REST builds SQL with every identifier quoted and checked, NUL
 * is refused in any name (PostgreSQL refuses NUL in query text), and names are bounded.
 */
import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, bearer } from '../helpers/auth.js';
import { startTestServer, TEST_API_KEY, type TestServer } from '../helpers/sql-server.js';
import { modesUnder } from './helpers.js';

let server: TestServer;
const admin = bearer(TEST_API_KEY);
const sql = (text: string) => api(server.baseUrl, '/query', { headers: admin, body: { sql: text } });
const get = (path: string) => api(server.baseUrl, path, { headers: admin });
const post = (path: string, body: unknown) => api(server.baseUrl, path, { headers: admin, body });

async function victimIntact(): Promise<void> {
  expect((await sql('SELECT id, note FROM victim')).body.data).toEqual([{ id: 1, note: 'still here' }]);
}

beforeAll(async () => {
  server = await startTestServer();
  expect((await sql("CREATE TABLE victim (id INT PRIMARY KEY, note TEXT); INSERT INTO victim VALUES (1, 'still here')")).status).toBe(200);
});
afterAll(() => server?.close());

describe('path tricks', () => {
  const tricky = ['../../etc/passwd', '..\\..\\windows', 'a/b', '%2e%2e%2fx', '.', '..', 'svcdb.json', 'log'];

  it('a name that looks like a path is only a name: no file is made from it, inside the data directory or out', async () => {
    const before = new Set(await readdir(server.dataDir));
    for (const name of tricky) {
      expect((await sql(`CREATE TABLE "${name}" (id INT PRIMARY KEY, v VECTOR(2))`)).status, name).toBe(200);
      expect((await sql(`CREATE INDEX "${name}_idx" ON "${name}" USING hnsw (v vector_l2_ops)`)).status, name).toBe(200);
      expect((await sql(`INSERT INTO "${name}" VALUES (1, '[1,2]')`)).status, name).toBe(200);
    }
    const files = [...(await modesUnder(server.dataDir)).keys()];
    expect(files.filter((f) => ['passwd', 'windows', 'a/b', '%2e', '_idx'].some((marker) => f.includes(marker)))).toEqual([]);
    expect(new Set(await readdir(server.dataDir))).toEqual(before);
    // Over REST, an encoded slash names the table, never a file.
    const page = await get(`/tables/${encodeURIComponent('../../etc/passwd')}/rows`);
    expect(page.status).toBe(200);
    expect(page.body.data).toEqual([{ id: 1, v: [1, 2] }]);
    expect((await get('/tables/..%2f..%2fsvcdb.json%2fx')).status).toBe(404);
    expect((await get('/tables/..%2F..%2F..%2F..%2Fetc%2Fpasswd%2Fx/rows')).body.error.code).toBe('TABLE_NOT_FOUND');
  });
});

describe('quotes', () => {
  it('REST never splices a name into SQL: quotes in a path, select, order_by, column or table name do nothing', async () => {
    const injected = encodeURIComponent('victim"; DROP TABLE victim; --');
    expect((await get(`/tables/${injected}`)).status).toBe(404);
    expect((await get(`/tables/${injected}/rows`)).status).toBe(404);
    expect((await get(`/tables/victim/rows?select=${encodeURIComponent('id" FROM victim; DROP TABLE victim; --')}`)).body.error.code).toBe('COLUMN_NOT_FOUND');
    expect((await get(`/tables/victim/rows?order_by=${encodeURIComponent('id"; DROP TABLE victim; --')}`)).body.error.code).toBe('COLUMN_NOT_FOUND');
    expect((await post('/tables/victim/rows', { row: { 'id") VALUES (2); DROP TABLE victim; --': 1 } })).body.error.code).toBe('COLUMN_NOT_FOUND');
    const table = await post('/tables', { name: 'x"; DROP TABLE victim; --', columns: [{ name: 'id', type: 'INT', primary_key: true }] });
    expect(table.status).toBe(422);
    const column = await post('/tables', { name: 'y', columns: [{ name: 'id" INT); DROP TABLE victim; --', type: 'INT', primary_key: true }] });
    expect(column.status).toBe(422);
    expect((await get(`/tables/victim/rows?filter=${encodeURIComponent('1=1; DROP TABLE victim')}`)).status).toBe(400);
    await victimIntact();
  });
});

describe('NUL bytes', () => {
  it('are refused in every name a catalog change would store', async () => {
    for (const text of [
      'CREATE TABLE "nul\u0000table" (id INT PRIMARY KEY)',
      'CREATE TABLE nul_column (id INT PRIMARY KEY, "a\u0000b" TEXT)',
      'CREATE INDEX "nul\u0000index" ON victim (note)',
      'ALTER TABLE victim ADD COLUMN "c\u0000d" INT',
      'ALTER TABLE victim RENAME COLUMN note TO "n\u0000ote"',
      'CREATE VIEW "nul\u0000view" AS SELECT 1 AS one',
    ]) {
      const answer = await sql(text);
      expect(answer.status, text).toBe(400);
      expect(answer.body.error.details, text).toMatchObject({ reason: 'invalid_name' });
    }
    const rest = await post('/tables', { name: 'nul\u0000rest', columns: [{ name: 'id', type: 'INT', primary_key: true }] });
    expect(rest.status).toBe(422);
    expect((await get('/tables/nul%00table')).status).toBe(404);
    expect((await get('/tables')).body.tables.map((t: { name: string }) => t.name).filter((n: string) => n.includes('\u0000'))).toEqual([]);
    await victimIntact();
  });
});

describe('very long names', () => {
  it('are bounded (128 characters; 1024 for index and constraint names, often derived), and never echoed', async () => {
    const at = 'n'.repeat(128);
    expect((await sql(`CREATE TABLE ${at} (${'c'.repeat(128)} INT PRIMARY KEY, other INT UNIQUE)`)).status).toBe(200);
    for (const text of [
      `CREATE TABLE ${'t'.repeat(129)} (id INT PRIMARY KEY)`,
      `CREATE TABLE "${'m'.repeat(500_000)}" (id INT PRIMARY KEY)`,
      `CREATE TABLE long_column (${'c'.repeat(129)} INT)`,
      `CREATE INDEX ${'i'.repeat(1025)} ON victim (note)`,
    ]) {
      const answer = await sql(text);
      expect(answer.status).toBe(400);
      expect(answer.body.error.details.reason).toBe('name_too_long');
      expect(JSON.stringify(answer.body).length).toBeLessThan(1000);
    }
    expect((await post('/tables', { name: 'r'.repeat(129), columns: [{ name: 'id', type: 'INT', primary_key: true }] })).status).toBe(422);
    const path = await get(`/tables/${'p'.repeat(5000)}/rows`);
    expect(path.status).toBe(400);
    expect(path.body.error.details.reason).toBe('bad_url');
    await victimIntact();
  });
});
