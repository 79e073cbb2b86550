import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../helpers/auth.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

/**
 * GET /tables/{t}/rows/{id} answers with the whole answer text kept beside the cached row
 * (protocols/http/rows/row-routes.ts rowAnswerJson): every answer — first read, cached read, another
 * column list, after a write, alternating with point SELECTs of the same row, the SQL path — must be
 * the text of `{ data: row }`, with a Content-Length in bytes (not characters). POST /query's point
 * SELECT keeps its whole answer likewise (query-routes.ts ANSWER_FRAME): the general path's text.
 */
describe('the answer texts kept with cached rows', () => {
  let server: TestServer;
  let auth: Record<string, string>;
  const sql = async (text: string, params: unknown[] = []): Promise<string> => {
    const response = await fetch(`${server.baseUrl}/api/v1/query`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ sql: text, params }),
    });
    const body = await response.text();
    expect(response.status, body).toBe(200);
    return body;
  };
  const get = async (path: string): Promise<{ status: number; body: string; length: string | null }> => {
    const response = await fetch(`${server.baseUrl}/api/v1${path}`, { headers: auth });
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(response.headers.get('content-length')).toBe(String(bytes.length));
    return { status: response.status, body: bytes.toString('utf8'), length: response.headers.get('content-length') };
  };

  beforeAll(async () => {
    server = await startTestServer();
    auth = bearer(server.apiKey);
    await sql('CREATE TABLE a (id BIGINT PRIMARY KEY, name TEXT, doc JSONB, n DOUBLE PRECISION)');
    await sql(`INSERT INTO a VALUES (1, 'zwölf "quoted" \\ é ✓', '{"k": 1.50, "z": [1, 2]}', 0.1), (2, NULL, NULL, -0), (3, 'three', '[]', 1e21)`);
  }, 60_000);

  afterAll(async () => {
    await server?.close();
  });

  it('first, cached and alternating reads give the text of { data: row }, each column list its own', async () => {
    const whole = async (id: number): Promise<string> => {
      const rows = JSON.parse(await sql('SELECT * FROM a WHERE id = $1', [id])) as { data: unknown[] };
      return rows.data.length === 0 ? '' : JSON.stringify({ data: rows.data[0] });
    };
    for (const round of [1, 2, 3]) {
      for (const id of [1, 2, 3]) {
        const expected = await whole(id);
        const read = await get(`/tables/a/rows/${id}`);
        expect(read.status).toBe(200);
        // jsonb keeps its exact number text (1.50), which JSON.stringify of the parsed value would not.
        if (id === 1) expect(read.body).toBe('{"data":{"id":1,"name":"zwölf \\"quoted\\" \\\\ é ✓","doc":{"k":1.50,"z":[1,2]},"n":0.1}}');
        else expect(read.body).toBe(expected);
        const some = await get(`/tables/a/rows/${id}?select=n,id`);
        expect(JSON.parse(some.body)).toEqual({ data: { n: JSON.parse(read.body).data.n, id } });
        expect(some.body.startsWith('{"data":{"n":')).toBe(true);
        expect((await get(`/tables/a/rows/${id}`)).body).toBe(read.body);
      }
      expect(round).toBeGreaterThan(0);
    }
  });

  it('a point SELECT answers the text of { success, data }, with or without metadata in turn, as the general path does', async () => {
    const select = async (id: number, extra: Record<string, unknown> = {}): Promise<string> => {
      const response = await fetch(`${server.baseUrl}/api/v1/query`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ sql: 'SELECT * FROM a WHERE id = $1', params: [id], ...extra }),
      });
      const bytes = Buffer.from(await response.arrayBuffer());
      expect(response.status).toBe(200);
      expect(response.headers.get('content-length')).toBe(String(bytes.length));
      return bytes.toString('utf8');
    };
    // A text no plan is cached for (a comment makes it new) takes the general path: the reference.
    const general = async (id: number): Promise<string> => sql(`SELECT * FROM a WHERE id = $1 -- ${Math.random()}`, [id]);
    for (let round = 0; round < 3; round++) {
      for (const id of [1, 2, 9]) {
        const expected = await general(id);
        expect(await select(id)).toBe(expected);
        const withMetadata = JSON.parse(await select(id, { include_metadata: true })) as { data: unknown[]; metadata: { row_count: number } };
        expect(withMetadata.data).toEqual((JSON.parse(expected) as { data: unknown[] }).data);
        expect(withMetadata.metadata.row_count).toBe(withMetadata.data.length);
        expect((await get(`/tables/a/rows/${id}`)).status).toBe(id === 9 ? 404 : 200);
        expect(await select(id)).toBe(expected);
      }
    }
    expect(await select(1)).toBe('{"success":true,"data":[{"id":1,"name":"zwölf \\"quoted\\" \\\\ é ✓","doc":{"k":1.50,"z":[1,2]},"n":0.1}]}');
  });

  it('a write is seen at once, and a key only SQL reads (a bad id) keeps the SQL path answer', async () => {
    expect((await get('/tables/a/rows/3')).body).toBe('{"data":{"id":3,"name":"three","doc":[],"n":1e+21}}');
    await sql("UPDATE a SET name = 'drei' WHERE id = 3");
    expect((await get('/tables/a/rows/3')).body).toBe('{"data":{"id":3,"name":"drei","doc":[],"n":1e+21}}');
    await sql('DELETE FROM a WHERE id = 3');
    expect((await get('/tables/a/rows/3')).status).toBe(404);
    await sql("INSERT INTO a VALUES (3, 'again', NULL, 3)");
    expect((await get('/tables/a/rows/3')).body).toBe('{"data":{"id":3,"name":"again","doc":null,"n":3}}');
    const bad = await get('/tables/a/rows/x1');
    expect(bad.status).toBe(422);
    expect(JSON.parse(bad.body)).toMatchObject({ error: { code: 'TYPE_MISMATCH' } });
  });
});
