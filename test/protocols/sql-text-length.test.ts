import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../bin/app.js';
import type { ServeHandle } from '../../bin/app-types.js';
import { tempDir } from '../helpers/stack.js';
import { testConfig } from './helpers.js';

const KEY = 'sql-text-length-key';
const LIMIT = 2048;
const ASTRAL = '\u{1F600}'; // one code point, two UTF-16 units, four UTF-8 bytes

/** `SELECT '<fill>'` of exactly `codePoints` code points, `astral` of them astral characters. */
function selectText(codePoints: number, astral: number): string {
  const fill = codePoints - "SELECT ''".length;
  return `SELECT '${ASTRAL.repeat(astral)}${'x'.repeat(fill - astral)}'`;
}

/**
 * The body schema of the SQL routes bounds `sql` by max_query_size_bytes counted in code points
 * (JSON Schema's maxLength, as ajv counts it); the engine then bounds it in bytes. The schema now
 * counts code points only for a text longer than the limit in UTF-16 units
 * (protocols/http/string-length-keywords.ts): every answer here is the one given before.
 */
describe('SQL text length at the body schema', () => {
  let server: ServeHandle;
  let remove: () => Promise<void>;
  const send = async (path: string, body: unknown): Promise<{ status: number; text: string }> => {
    const response = await fetch(`${server.httpUrl}/api/v1${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify(body),
    });
    // The request id is the only part of an answer that changes from request to request.
    return { status: response.status, text: (await response.text()).replace(/"request_id":"[^"]+"/, '"request_id":"-"') };
  };

  beforeAll(async () => {
    const dir = await tempDir('svcdb-sql-text-length-');
    remove = dir.remove;
    server = await startServer(
      testConfig({ data: dir.dir, 'api-key': KEY, 'log-level': 'silent', 'max-query-size-bytes': String(LIMIT) }),
      pino({ level: 'silent' }),
    );
  });
  afterAll(async () => {
    await server.close('test');
    await remove();
  });

  const overBytes = `{"error":{"code":"LIMIT_EXCEEDED","message":"query text is larger than ${LIMIT} bytes","details":{"max_query_size_bytes":${LIMIT}},"request_id":"-"}}`;

  it('lets a text of exactly the limit in code points, astral characters among them, past the schema (the engine then counts its bytes)', async () => {
    const sql = selectText(LIMIT, 100);
    expect([...sql]).toHaveLength(LIMIT);
    expect(await send('/query', { sql })).toEqual({ status: 400, text: overBytes });
    // The schema checks sql first: with sql accepted, the next property is the one named.
    expect(await send('/query', { sql, timeout_ms: 0 })).toEqual({
      status: 422,
      text: '{"error":{"code":"VALIDATION_ERROR","message":"body.timeout_ms must be >= 1","details":{"reason":"schema_validation","location":"body","field":"timeout_ms"},"request_id":"-"}}',
    });
  });

  it('refuses a text one code point over the limit with the same envelope on every SQL route', async () => {
    const sql = selectText(LIMIT + 1, 100);
    const refused = {
      status: 422,
      text: `{"error":{"code":"VALIDATION_ERROR","message":"body.sql must NOT have more than ${LIMIT} characters","details":{"reason":"schema_validation","location":"body","field":"sql"},"request_id":"-"}}`,
    };
    for (const path of ['/query', '/query/explain', '/query/stream', '/query/async']) expect(await send(path, { sql }), path).toEqual(refused);
    // All-ASCII, one over: the count is the length.
    expect(await send('/query', { sql: selectText(LIMIT + 1, 0) })).toEqual(refused);
  });

  it('lets a text over the limit in UTF-16 units but within it in code points past the schema', async () => {
    const sql = selectText(LIMIT - 10, LIMIT - 20);
    expect(sql.length).toBeGreaterThan(LIMIT);
    expect(await send('/query', { sql })).toEqual({ status: 400, text: overBytes });
  });

  it('answers a text with astral characters within the limit in bytes', async () => {
    const sql = `SELECT '${ASTRAL.repeat(400)}' AS s`;
    const answer = await send('/query', { sql });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text).data).toEqual([{ s: ASTRAL.repeat(400) }]);
  });

  it('does not count the code points of a text within the limit in UTF-16 units (the server`s ajv has the keywords)', async () => {
    const sql = selectText(LIMIT - 48, 0);
    // ajv's own maxLength and minLength read such a text with charCodeAt twice (2 × 2,000 calls);
    // count the calls while the server refuses its body for another property (no SQL is parsed).
    const original = String.prototype.charCodeAt;
    let calls = 0;
    String.prototype.charCodeAt = function (this: string, index: number) {
      calls++;
      return original.call(this, index);
    };
    let answer: { status: number; text: string };
    try {
      answer = await send('/query', { sql, timeout_ms: 0 });
    } finally {
      String.prototype.charCodeAt = original;
    }
    expect(answer.status).toBe(422);
    expect(calls).toBeLessThan(sql.length / 2);
  });

  it('refuses an empty text as before', async () => {
    expect(await send('/query', { sql: '' })).toEqual({
      status: 422,
      text: '{"error":{"code":"VALIDATION_ERROR","message":"body.sql must NOT have fewer than 1 characters","details":{"reason":"schema_validation","location":"body","field":"sql"},"request_id":"-"}}',
    });
  });
});
