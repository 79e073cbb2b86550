import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

/**
 * Whatever arrives as a body (broken JSON, wrong types, odd content types, injection-looking
 * strings), every endpoint answers a 4xx envelope (or a success when the body happens to be
 * valid), never a 5xx, and the server keeps serving.
 */
const ENDPOINTS: readonly { method: string; path: string }[] = [
  { method: 'POST', path: '/query' },
  { method: 'POST', path: '/query/stream' },
  { method: 'POST', path: '/query/explain' },
  { method: 'POST', path: '/query/async' },
  { method: 'POST', path: '/transactions' },
  { method: 'POST', path: '/transactions/TXN/query' },
  { method: 'POST', path: '/tables' },
  { method: 'PATCH', path: '/tables/fuzz' },
  { method: 'POST', path: '/tables/fuzz/rows' },
  { method: 'PUT', path: '/tables/fuzz/rows' },
  { method: 'DELETE', path: '/tables/fuzz/rows' },
  { method: 'PATCH', path: '/tables/fuzz/rows/1' },
];

const INJECTIONS = [
  '1=1; DROP TABLE fuzz',
  "' OR '1'='1",
  'id = 1 UNION SELECT * FROM fuzz',
  '/* */ 1=1 --',
  '\u0000',
  '${jndi:x}',
  '{"__proto__": {"admin": true}}',
  "'); DELETE FROM fuzz; --",
];

/** Bodies as raw text: arbitrary JSON, near-valid objects with wrong types, and non-JSON. */
const bodyText = fc.oneof(
  fc.json({ maxDepth: 4 }),
  fc
    .record(
      {
        sql: fc.oneof(fc.string(), fc.constantFrom(...INJECTIONS), fc.integer(), fc.constant(null)),
        params: fc.oneof(fc.array(fc.jsonValue(), { maxLength: 4 }), fc.string()),
        timeout_ms: fc.oneof(fc.integer(), fc.double(), fc.string()),
        row: fc.oneof(fc.dictionary(fc.string(), fc.jsonValue()), fc.string()),
        rows: fc.array(fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }), { maxLength: 3 }),
        filter: fc.oneof(fc.string(), fc.constantFrom(...INJECTIONS)),
        updates: fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }),
        isolation_level: fc.oneof(fc.string(), fc.constantFrom('serializable', 'read_committed')),
        operations: fc.array(fc.record({ operation: fc.string(), column_name: fc.string() }), { maxLength: 2 }),
      },
      { requiredKeys: [] },
    )
    .map((o) => JSON.stringify(o)),
  fc.string(),
  fc.constantFrom('', '{', '[]', 'null', '{"sql":', '\u0000\u0001', '{"a":1}{"b":2}', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}'),
);

const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/xml',
  'application/x-www-form-urlencoded',
);

describe('malformed bodies on every endpoint', () => {
  let server: TestServer;
  let txnId = '';
  beforeAll(async () => {
    server = await startTestServer();
    const headers = { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' };
    await fetch(`${server.baseUrl}/api/v1/query`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ sql: 'CREATE TABLE fuzz (id INT PRIMARY KEY, name TEXT)' }),
    });
    const txn = await fetch(`${server.baseUrl}/api/v1/transactions`, { method: 'POST', headers, body: JSON.stringify({ timeout_ms: 600_000 }) });
    txnId = ((await txn.json()) as { transaction_id: string }).transaction_id;
  });
  afterAll(() => server?.close());

  it('answers a 4xx envelope or a success, never a 5xx, and keeps serving', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ENDPOINTS), bodyText, contentType, async (endpoint, body, type) => {
        const url = `${server.baseUrl}/api/v1${endpoint.path.replace('TXN', txnId)}`;
        const response = await fetch(url, { method: endpoint.method, headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': type }, body });
        const text = await response.text();
        expect(response.status, `${endpoint.method} ${endpoint.path} ${type} ${body} -> ${text}`).toBeLessThan(500);
        if (response.status >= 400) {
          const parsed = JSON.parse(text) as { error: { code: string; message: string; request_id: string } };
          expect(typeof parsed.error.code).toBe('string');
          expect(parsed.error.message.length).toBeGreaterThan(0);
          expect(parsed.error.request_id).toBe(response.headers.get('x-request-id'));
        }
      }),
      { numRuns: 400 },
    );
    const live = await fetch(`${server.baseUrl}/api/v1/live`);
    expect(live.status).toBe(200);
    const table = await fetch(`${server.baseUrl}/api/v1/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sql: 'SELECT count(*) AS n FROM fuzz' }),
    });
    expect(table.status).toBe(200);
  }, 120_000);
});
