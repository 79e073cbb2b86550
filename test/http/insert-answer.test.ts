import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../helpers/auth.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

/**
 * POST /tables/{t}/rows answers with text written at once (rows-routes.ts insertAnswer: one kept
 * string for one row inserted without RETURNING); its handler is not an async function, so what
 * fails before the insert (no such table, `row` with `rows`) is a rejection fastify answers. Every
 * answer must be the text of `{ success, inserted_count, data }` with the status and Content-Length
 * (bytes) it had, and errors keep their envelope.
 */
describe('POST rows answer texts', () => {
  let server: TestServer;
  let auth: Record<string, string>;
  const post = async (table: string, body: unknown): Promise<{ status: number; text: string }> => {
    const response = await fetch(`${server.baseUrl}/api/v1/tables/${table}/rows`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(response.headers.get('content-length')).toBe(String(bytes.length));
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    return { status: response.status, text: bytes.toString('utf8') };
  };
  const text = (count: number, data: unknown[]): string => JSON.stringify({ success: true, inserted_count: count, data });

  beforeAll(async () => {
    server = await startTestServer();
    auth = bearer(server.apiKey);
    const response = await fetch(`${server.baseUrl}/api/v1/query`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ sql: 'CREATE TABLE ia (id BIGINT PRIMARY KEY, name TEXT)' }),
    });
    expect(response.status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  it('one row, several, RETURNING, a conflict that inserts nothing, and the errors before the insert', async () => {
    expect(await post('ia', { row: { id: 1, name: 'a' } })).toEqual({ status: 201, text: text(1, []) });
    expect(await post('ia', { id: 2, name: 'b' })).toEqual({ status: 201, text: text(1, []) });
    expect(await post('ia', [{ id: 3 }, { id: 4, name: 'ü ✓' }])).toEqual({ status: 201, text: text(2, []) });
    expect(await post('ia', { row: { id: 5, name: 'é' }, returning: ['*'] })).toEqual({ status: 201, text: text(1, [{ id: 5, name: 'é' }]) });
    expect(await post('ia', { rows: [{ id: 6 }, { id: 7 }], returning: ['id'] })).toEqual({ status: 201, text: text(2, [{ id: 6 }, { id: 7 }]) });
    expect(await post('ia', { row: { id: 1, name: 'again' }, on_conflict: { action: 'nothing' } })).toEqual({ status: 201, text: text(0, []) });
    // The same kept text again (a second request of the usual shape).
    expect(await post('ia', { row: { id: 8, name: 'h' } })).toEqual({ status: 201, text: text(1, []) });

    const missing = await post('nowhere', { row: { id: 1 } });
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.text)).toMatchObject({ error: { code: 'TABLE_NOT_FOUND' } });
    const both = await post('ia', { row: { id: 9 }, rows: [{ id: 10 }] });
    expect(both.status).toBe(422);
    expect(JSON.parse(both.text)).toMatchObject({
      error: { code: 'VALIDATION_ERROR', message: 'send row (one row) or rows (several), not both' },
    });
    const duplicate = await post('ia', { row: { id: 2 } });
    expect(duplicate.status).toBe(409);
    expect(JSON.parse(duplicate.text)).toMatchObject({ error: { code: 'CONSTRAINT_VIOLATION' } });
  });
});
