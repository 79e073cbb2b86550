import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

/**
 * jsonb numbers reach REST clients with their exact text, as PostgreSQL keeps them (`{"a": 1.0}`,
 * integers beyond 2^53 whole), and a jsonb null value is a JSON null. The raw response text is
 * checked: a client's JSON parser would turn 1.0 into 1.
 */
describe('jsonb numbers over REST', () => {
  let server: TestServer;
  const raw = async (method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> => {
    const headers: Record<string, string> = { authorization: `Bearer ${server.apiKey}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const r = await fetch(`${server.baseUrl}/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: r.status, text: await r.text() };
  };
  const sql = (text: string) => raw('POST', '/query', { sql: text });

  beforeAll(async () => {
    server = await startTestServer();
    expect((await sql('CREATE TABLE jdocs (id INTEGER PRIMARY KEY, doc JSONB)')).status).toBe(200);
    const insert = await sql(`INSERT INTO jdocs VALUES (1, '{"a": 1.0, "big": 12345678901234567890123, "list": [1.50, null]}'), (2, 'null'), (3, NULL)`);
    expect(insert.status, insert.text).toBe(200);
  });
  afterAll(() => server?.close());

  it('POST /query sends the exact number text', async () => {
    const r = await sql(`SELECT '{"a":1.0}'::jsonb AS doc, '12345678901234567890123'::jsonb AS big, to_jsonb(2.50) AS n`);
    expect(r.status, r.text).toBe(200);
    expect(r.text).toContain('"doc":{"a":1.0}');
    expect(r.text).toContain('"big":12345678901234567890123');
    expect(r.text).toContain('"n":2.50');
  });

  it('GET /tables/{t}/rows sends stored documents exactly; the jsonb null and SQL NULL both read as null', async () => {
    const r = await raw('GET', '/tables/jdocs/rows');
    expect(r.status, r.text).toBe(200);
    expect(r.text).toContain('{"id":1,"doc":{"a":1.0,"big":12345678901234567890123,"list":[1.50,null]}}');
    expect(r.text).toContain('{"id":2,"doc":null}');
    expect(r.text).toContain('{"id":3,"doc":null}');
  });

  it('keeps the jsonb null distinct from SQL NULL in SQL', async () => {
    const r = await sql('SELECT id, doc IS NULL AS missing FROM jdocs ORDER BY id');
    expect(JSON.parse(r.text).data).toEqual([
      { id: 1, missing: false },
      { id: 2, missing: false },
      { id: 3, missing: true },
    ]);
  });
});
