import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, bearer, eventually, newKey, query } from '../helpers/auth.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

/**
 * GET /tables/{t}/rows/{id} reads the row directly (query/point-read.ts: one store read, no SQL):
 * its answers must be the SQL path's, byte for byte, for every column type, and follow the same
 * visibility, tenancy and role rules.
 */
describe('GET one row by primary key: the direct read', () => {
  let server: TestServer;
  let admin: Record<string, string>;
  const raw = async (path: string, headers: Record<string, string>): Promise<{ status: number; text: string }> => {
    const response = await fetch(`${server.baseUrl}/api/v1${path}`, { headers });
    return { status: response.status, text: await response.text() };
  };
  /** The row object of POST /query as the bytes it was sent as. */
  const sqlRowText = async (sql: string, params: unknown[]): Promise<string> => {
    const response = await fetch(`${server.baseUrl}/api/v1/query`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ sql, params }),
    });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    expect(text.startsWith('{"success":true,"data":[{')).toBe(true);
    return text.slice('{"success":true,"data":['.length, -']}'.length);
  };
  const exec = async (sql: string): Promise<void> => {
    const result = await query(server.baseUrl, admin, sql);
    expect(result.status, JSON.stringify(result.body)).toBe(200);
  };

  beforeAll(async () => {
    server = await startTestServer();
    admin = bearer(server.apiKey);
    await exec(`CREATE TABLE every (id BIGINT PRIMARY KEY, b BOOLEAN, i2 SMALLINT, i4 INTEGER, big BIGINT, n NUMERIC(12,3), f4 REAL, f8 DOUBLE PRECISION,
      t TEXT, vc VARCHAR(8), c CHAR(4), u UUID, j JSONB, ts TIMESTAMP, tz TIMESTAMPTZ, d DATE, v VECTOR(3))`);
    await exec(`INSERT INTO every VALUES
      (1, true, -7, 2147483647, 9007199254740993, 12345.678, 1.1, 0.1, 'text "quoted" é ✓', 'short', 'ab', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11',
       '{"z": 1, "a": [1, 2.50, {"k": null}], "s": "\\u00e9"}', '2024-02-29 13:14:15.123456', '2024-02-29 13:14:15+02', '2024-02-29', '[1.5, -2, 3.25]'),
      (2, NULL, NULL, NULL, NULL, NULL, 'NaN', '-Infinity', NULL, NULL, NULL, NULL, 'null', NULL, NULL, NULL, NULL),
      (3, false, 0, 0, -9007199254740993, -0.5, -0.0, 1e300, '', '', '', '00000000-0000-0000-0000-000000000000', '[]', '1970-01-01', '1970-01-01', '1970-01-01', '[0,0,0]')`);
  });
  afterAll(() => server?.close());

  it('answers every column type exactly as POST /query does, byte for byte', async () => {
    for (const id of [1, 2, 3]) {
      const direct = await raw(`/tables/every/rows/${id}`, admin);
      expect(direct.status, direct.text).toBe(200);
      expect(direct.text).toBe(`{"data":${await sqlRowText('SELECT * FROM every WHERE id = $1', [id])}}`);
    }
  });

  it('select= picks and orders columns as the SQL select list does', async () => {
    const direct = await raw('/tables/every/rows/1?select=tz,id,j,n,tz', admin);
    expect(direct.status).toBe(200);
    expect(direct.text).toBe(`{"data":${await sqlRowText('SELECT tz, id, j, n FROM every WHERE id = $1', [1])}}`);
    const unknown = await api(server.baseUrl, '/tables/every/rows/1?select=nope', { headers: admin });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('COLUMN_NOT_FOUND');
  });

  it('a missing row is 404, a malformed id the SQL path error', async () => {
    const missing = await api(server.baseUrl, '/tables/every/rows/99', { headers: admin });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('NOT_FOUND');
    const bad = await api(server.baseUrl, '/tables/every/rows/abc', { headers: admin });
    const viaSql = await query(server.baseUrl, admin, 'SELECT * FROM every WHERE id = $1', ['abc']);
    expect(bad.status).toBe(viaSql.status);
    expect(bad.body.error.code).toBe(viaSql.body.error.code);
  });

  it('a column added later reads as its default in rows written before it (the new table definition)', async () => {
    await exec("ALTER TABLE every ADD COLUMN later TEXT DEFAULT 'dflt'");
    const direct = await raw('/tables/every/rows/1', admin);
    expect(JSON.parse(direct.text).data.later).toBe('dflt');
    expect(direct.text).toBe(`{"data":${await sqlRowText('SELECT * FROM every WHERE id = $1', [1])}}`);
  });

  it('text, uuid, varchar and composite keys: the same rows and refusals as SQL', async () => {
    await exec('CREATE TABLE keyed_text (k TEXT PRIMARY KEY, v INTEGER)');
    await exec('CREATE TABLE keyed_uuid (k UUID PRIMARY KEY, v INTEGER)');
    await exec('CREATE TABLE keyed_vc (k VARCHAR(5) PRIMARY KEY, v INTEGER)');
    await exec('CREATE TABLE keyed_pair (a INTEGER, b TEXT, v INTEGER, PRIMARY KEY (a, b))');
    await exec("INSERT INTO keyed_text VALUES ('a,b/ c', 1), ('', 2)");
    await exec("INSERT INTO keyed_uuid VALUES ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 3)");
    await exec("INSERT INTO keyed_vc VALUES ('abc', 4)");
    await exec("INSERT INTO keyed_pair VALUES (1, 'x,y', 5)");
    const cases: [string, string, unknown[]][] = [
      ['/tables/keyed_text/rows/a%2Cb%2F%20c', 'SELECT * FROM keyed_text WHERE k = $1', ['a,b/ c']],
      ['/tables/keyed_uuid/rows/A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', 'SELECT * FROM keyed_uuid WHERE k = $1', ['A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11']],
      ['/tables/keyed_vc/rows/abc', 'SELECT * FROM keyed_vc WHERE k = $1', ['abc']],
      ['/tables/keyed_pair/rows/1,x%2Cy', 'SELECT * FROM keyed_pair WHERE a = $1 AND b = $2', ['1', 'x,y']],
    ];
    for (const [path, sql, params] of cases) {
      const direct = await raw(path, admin);
      expect(direct.status, `${path}: ${direct.text}`).toBe(200);
      expect(direct.text).toBe(`{"data":${await sqlRowText(sql, params)}}`);
    }
    // Ids SQL refuses or cannot match answer as before: a bad uuid, a varchar id longer than its column.
    for (const [path, sql, params] of [
      ['/tables/keyed_uuid/rows/not-a-uuid', 'SELECT * FROM keyed_uuid WHERE k = $1', ['not-a-uuid']],
      ['/tables/keyed_vc/rows/abcdefgh', 'SELECT * FROM keyed_vc WHERE k = $1', ['abcdefgh']],
    ] as const) {
      const direct = await api(server.baseUrl, path, { headers: admin });
      const viaSql = await query(server.baseUrl, admin, sql, [...params]);
      if (viaSql.status === 200) {
        expect(viaSql.body.data).toEqual([]);
        expect(direct.status).toBe(404);
      } else {
        expect(direct.status).toBe(viaSql.status);
        expect(direct.body.error.code).toBe(viaSql.body.error.code);
      }
    }
  });

  it('a key type left to the SQL path answers the same', async () => {
    await exec('CREATE TABLE keyed_num (k NUMERIC PRIMARY KEY, v INTEGER)');
    await exec('INSERT INTO keyed_num VALUES (1.50, 1)');
    // NUMERIC keys compare by value (1.5 = 1.50): the SQL path answers, with the same result.
    const numeric = await api(server.baseUrl, '/tables/keyed_num/rows/1.5', { headers: admin });
    expect(numeric.status).toBe(200);
    expect(numeric.body.data).toEqual((await query(server.baseUrl, admin, 'SELECT * FROM keyed_num WHERE k = $1', ['1.5'])).body.data[0]);
  });

  it('reads its own writes: a row inserted, changed or deleted is seen by the very next GET', async () => {
    await exec('CREATE TABLE ryw (id INTEGER PRIMARY KEY, n INTEGER)');
    for (let i = 1; i <= 40; i++) {
      const inserted = await api(server.baseUrl, '/tables/ryw/rows', { headers: admin, body: { row: { id: i, n: i } } });
      expect(inserted.status).toBe(201);
      const read = await api(server.baseUrl, `/tables/ryw/rows/${i}`, { headers: admin });
      expect(read.status).toBe(200);
      expect(read.body.data).toEqual({ id: i, n: i });
    }
    const concurrent = await Promise.all(
      Array.from({ length: 20 }, async (_v, k) => {
        const id = 100 + k;
        await api(server.baseUrl, '/tables/ryw/rows', { headers: admin, body: { row: { id, n: k } } });
        return (await api(server.baseUrl, `/tables/ryw/rows/${id}`, { headers: admin })).body.data;
      }),
    );
    expect(concurrent).toEqual(Array.from({ length: 20 }, (_v, k) => ({ id: 100 + k, n: k })));
    expect((await api(server.baseUrl, '/tables/ryw/rows/7', { method: 'PATCH', headers: admin, body: { updates: { n: 70 } } })).status).toBe(200);
    expect((await api(server.baseUrl, '/tables/ryw/rows/7', { headers: admin })).body.data).toEqual({ id: 7, n: 70 });
    await exec('UPDATE ryw SET n = n + 1 WHERE id = 8');
    expect((await api(server.baseUrl, '/tables/ryw/rows/8', { headers: admin })).body.data).toEqual({ id: 8, n: 9 });
    expect((await api(server.baseUrl, '/tables/ryw/rows/9', { method: 'DELETE', headers: admin })).status).toBe(200);
    expect((await api(server.baseUrl, '/tables/ryw/rows/9', { headers: admin })).status).toBe(404);
    // A table dropped and made again under the same name: the new one's rows.
    await exec('DROP TABLE ryw');
    expect((await api(server.baseUrl, '/tables/ryw/rows/1', { headers: admin })).status).toBe(404);
    await exec('CREATE TABLE ryw (id INTEGER PRIMARY KEY, other TEXT)');
    await exec("INSERT INTO ryw VALUES (1, 'new')");
    expect((await api(server.baseUrl, '/tables/ryw/rows/1', { headers: admin })).body.data).toEqual({ id: 1, other: 'new' });
  });

  it('tenants are isolated, roles as on the SQL path: read_only reads, another tenant is refused', async () => {
    const acme = (await newKey(server.dataDir, { role: 'read_write', tenant: 'acme' })).key;
    const globex = (await newKey(server.dataDir, { role: 'read_only', tenant: 'globex' })).key;
    await eventually(async () => (await api(server.baseUrl, '/tables', { headers: bearer(globex) })).status === 200);
    const table = {
      name: 'notes',
      columns: [
        { name: 'id', type: 'INTEGER', primary_key: true },
        { name: 'body', type: 'TEXT' },
      ],
    };
    expect((await api(server.baseUrl, '/tables', { headers: bearer(acme), body: table })).status).toBe(201);
    expect((await api(server.baseUrl, '/tables/notes/rows', { headers: bearer(acme), body: { row: { id: 1, body: 'acme' } } })).status).toBe(201);
    const ownTenant = await api(server.baseUrl, '/tables/notes/rows/1', { headers: bearer(acme) });
    expect(ownTenant.body.data).toEqual({ id: 1, body: 'acme' });
    // globex has no table notes; the default tenant neither.
    expect((await api(server.baseUrl, '/tables/notes/rows/1', { headers: bearer(globex) })).status).toBe(404);
    expect((await api(server.baseUrl, '/tables/notes/rows/1', { headers: admin })).status).toBe(404);
    const crossing = await api(server.baseUrl, '/tables/notes/rows/1', { headers: { ...bearer(globex), 'x-tenant-id': 'acme' } });
    expect(crossing.status).toBe(403);
    expect(crossing.body.error.code).toBe('AUTHORIZATION_DENIED');
    // The unbound admin chooses the tenant.
    const viaAdmin = await api(server.baseUrl, '/tables/notes/rows/1', { headers: { ...admin, 'x-tenant-id': 'acme' } });
    expect(viaAdmin.body.data).toEqual({ id: 1, body: 'acme' });
    // read_only reads its own tenant's rows directly.
    await api(server.baseUrl, '/tables', { headers: { ...admin, 'x-tenant-id': 'globex' }, body: table });
    await query(server.baseUrl, { ...admin, 'x-tenant-id': 'globex' }, "INSERT INTO notes VALUES (1, 'globex')");
    expect((await api(server.baseUrl, '/tables/notes/rows/1', { headers: bearer(globex) })).body.data).toEqual({ id: 1, body: 'globex' });
    const anonymous = await api(server.baseUrl, '/tables/notes/rows/1', {});
    expect(anonymous.status).toBe(401);
  });
});
