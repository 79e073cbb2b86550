import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

/**
 * JSON bodies that cannot hold a "__proto__" or "constructor" key are parsed by JSON.parse alone
 * (protocols/http/fastify-base.ts); any other goes through fastify's checking parser. Both must
 * answer exactly as that parser does.
 */
describe('JSON request bodies: the plain parse and the checking parser answer alike', () => {
  let server: TestServer;
  const post = async (path: string, body: string): Promise<{ status: number; body: { error?: { code: string; message: string } } }> => {
    const response = await fetch(`${server.baseUrl}/api/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
      body,
    });
    return { status: response.status, body: (await response.json()) as { error?: { code: string; message: string } } };
  };
  const names = async (): Promise<unknown> => (await post('/query', JSON.stringify({ sql: 'SELECT id, "constructor" AS c FROM j ORDER BY id' }))).body;

  beforeAll(async () => {
    server = await startTestServer();
    expect((await post('/query', JSON.stringify({ sql: 'CREATE TABLE j (id INT PRIMARY KEY, "constructor" TEXT)' }))).status).toBe(200);
  });
  afterAll(() => server?.close());

  it('prototype poisoning is refused, plainly spelled or escaped; a "constructor" column is not poisoning', async () => {
    const plain = await post('/tables/j/rows', '{"rows": [{"id": 1}], "__proto__": {"x": 1}}');
    const escaped = await post('/tables/j/rows', '{"rows": [{"id": 1}], "\\u005f_proto__": {"x": 1}}');
    const ctor = await post('/tables/j/rows', '{"rows": [{"id": 1}], "constructor": {"prototype": {"x": 1}}}');
    const malformed = await post('/tables/j/rows', '{"rows": [');
    // Refused by the parser (as malformed JSON is), not later by the body's schema.
    for (const refused of [plain, escaped, ctor]) {
      expect(refused.status).toBe(400);
      expect(refused.body.error?.code).toBe(malformed.body.error?.code);
    }
    expect(escaped.body.error).toEqual(plain.body.error && { ...plain.body.error, request_id: (escaped.body.error as { request_id?: string }).request_id });
    expect((await post('/tables/j/rows', '{"rows": [{"id": 2, "constructor": "c2"}]}')).status).toBe(201);
    expect(await names()).toMatchObject({ data: [{ id: 2, c: 'c2' }] });
  });

  it('escapes, a byte-order mark and malformed text: as the checking parser answers', async () => {
    expect((await post('/tables/j/rows', '{"rows": [{"id": 3, "constructor": "\\u0041"}]}')).status).toBe(201);
    expect((await post('/tables/j/rows', '\ufeff{"rows": [{"id": 4, "constructor": "bom"}]}')).status).toBe(201);
    expect(await names()).toMatchObject({ data: [{ id: 2 }, { id: 3, c: 'A' }, { id: 4, c: 'bom' }] });
    // Malformed without and with a suspicious key (the plain parse, then the checking parser): the same answer.
    const fast = await post('/tables/j/rows', '{"rows": [');
    const slow = await post('/tables/j/rows', '{"constructor": [');
    expect(fast.status).toBe(400);
    expect(fast.status).toBe(slow.status);
    expect(fast.body.error?.code).toBe(slow.body.error?.code);
    expect(fast.body.error?.message).toBe(slow.body.error?.message);
  });
});
