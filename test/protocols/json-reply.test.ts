import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JSON_NULL, jsonNumber, stringifyJson } from '../../core/json-exact.js';
import { rowJson, rowsJson } from '../../protocols/http/json-reply.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

/** Values a result row can hold (what types.toJson gives), and the odd ones JSON.stringify treats specially. */
const member = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  // Lone surrogates, control characters, quotes and backslashes: JSON.stringify escapes them.
  fc.string({ unit: fc.constantFrom('\ud800', '\udfff', '\u0000', '\u0001', '\u001f', '"', '\\', '\u2028', 'é', '😀', 'a') }),
  fc.double(),
  fc.constantFrom(0, -0, Number.NaN, Infinity, -Infinity, 1e21, 1e-7, 5e-324, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, 0.1 + 0.2),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.constant(JSON_NULL),
  fc.constantFrom('1.0', '12345678901234567890123', '-0.50', '1e400').map((text) => jsonNumber(text)),
  fc.jsonValue(),
  fc.array(fc.oneof(fc.integer(), fc.string(), fc.constant(null), fc.double())),
  fc.date({ noInvalidDate: true }),
  fc.constant(() => 1),
);

/** Column names: plain ones, ones that need escaping, and integer-like ones (JSON.stringify writes those first). */
const columnName = fc.oneof(fc.string(), fc.constantFrom('id', '0', '1', '10', '4294967295', '-1', 'a"b', 'a\\b', 'toJSON', 'data', '\u0000'));

const row = fc.dictionary(columnName, member, { maxKeys: 12 });

describe('rowJson / rowsJson write what stringifyJson writes', () => {
  it('for any row', () => {
    fc.assert(
      fc.property(row, (r) => {
        expect(rowJson(r)).toBe(stringifyJson(r));
      }),
      { numRuns: 2000 },
    );
  });

  it('for any list of rows', () => {
    fc.assert(
      fc.property(fc.array(row, { maxLength: 5 }), (rows) => {
        expect(rowsJson(rows)).toBe(stringifyJson(rows));
      }),
      { numRuns: 500 },
    );
  });

  it('for the envelopes the read routes send', () => {
    const r = { id: 1, name: 'x"y', amount: 1.5, doc: jsonNumber('1.0'), n: null };
    expect(`{"data":${rowJson(r)}}`).toBe(stringifyJson({ data: r }));
    expect(`{"success":true,"data":${rowsJson([r, r])}}`).toBe(stringifyJson({ success: true, data: [r, r] }));
    expect(`{"success":true,"data":${rowsJson([])}}`).toBe(stringifyJson({ success: true, data: [] }));
  });

  it('throws on a bigint as JSON.stringify does', () => {
    expect(() => rowJson({ a: 1n })).toThrow(TypeError);
  });
});

/**
 * Over HTTP: GET /tables/{t}/rows/{id} and POST /query (without metadata) send text written by
 * json-reply.ts; the list route and POST /query with include_metadata still serialize objects.
 * The row's text must be the same on every route, byte for byte, for every column type.
 */
describe('read answers over HTTP carry the same row text as the serialized routes', () => {
  let server: TestServer;
  const raw = async (method: string, path: string, body?: unknown): Promise<{ status: number; text: string; type: string | null }> => {
    const headers: Record<string, string> = { authorization: `Bearer ${server.apiKey}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const r = await fetch(`${server.baseUrl}/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: r.status, text: await r.text(), type: r.headers.get('content-type') };
  };
  const sql = (text: string, params: unknown[] = [], extra: object = {}) => raw('POST', '/query', { sql: text, params, ...extra });

  beforeAll(async () => {
    server = await startTestServer();
    const create = await sql(
      `CREATE TABLE wide (id BIGINT PRIMARY KEY, t TEXT, f DOUBLE PRECISION, r REAL, n NUMERIC(20,4), b BOOLEAN, j JSONB,
       a INTEGER[], ts TIMESTAMPTZ, d DATE, u UUID, big BIGINT, s SMALLINT)`,
    );
    expect(create.status, create.text).toBe(200);
    const insert = await sql(
      `INSERT INTO wide VALUES
       (1, 'plain', 1.5, 0.1, 12.3400, true, '{"a": 1.0, "big": 12345678901234567890123, "s": "x\\"y"}', ARRAY[1, NULL, 3],
        '2026-01-02T03:04:05.678Z', '2026-01-02', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 9007199254740993, -7),
       (2, E'quote " backslash \\\\ newline \\n tab \\t é 😀 \\u0001', 'NaN', '-Infinity', -0.0001, false, 'null', ARRAY[]::INTEGER[],
        NULL, NULL, NULL, -9223372036854775808, 0),
       (3, NULL, -0.0, 3.4e38, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
       (4, '', 1e300, 1e-30, 99999999999999.9999, true, '[1.50, null, {"k": []}]', ARRAY[2147483647], NULL, NULL, NULL, 1, 1)`,
    );
    expect(insert.status, insert.text).toBe(200);
  });
  afterAll(() => server?.close());

  it('GET /rows/{id}, POST /query and the serialized routes agree for every row', async () => {
    const list = await raw('GET', '/tables/wide/rows?order_by=id');
    expect(list.status, list.text).toBe(200);
    const listed = JSON.parse(list.text) as { data: unknown[] };
    expect(listed.data).toHaveLength(4);
    const withMetadata = await sql('SELECT * FROM wide ORDER BY id', [], { include_metadata: true });
    expect(withMetadata.status, withMetadata.text).toBe(200);
    const plain = await sql('SELECT * FROM wide ORDER BY id');
    expect(plain.type).toBe('application/json; charset=utf-8');
    // The general path's rows without metadata: the same text as the serialized object's data.
    expect(withMetadata.text.startsWith(`${plain.text.slice(0, -1)},"metadata":`)).toBe(true);
    for (const id of [1, 2, 3, 4]) {
      const one = await raw('GET', `/tables/wide/rows/${id}`);
      expect(one.status, one.text).toBe(200);
      expect(one.type).toBe('application/json; charset=utf-8');
      const rowText = one.text.slice('{"data":'.length, -1);
      expect(list.text).toContain(rowText);
      // The point select (its plan cached after the first run): the same row text.
      for (let run = 0; run < 2; run++) {
        const point = await sql('SELECT * FROM wide WHERE id = $1', [id]);
        expect(point.text).toBe(`{"success":true,"data":[${rowText}]}`);
      }
    }
  });

  it('an empty result and a missing row keep their answers', async () => {
    expect((await sql('SELECT * FROM wide WHERE id = $1', [99])).text).toBe('{"success":true,"data":[]}');
    const missing = await raw('GET', '/tables/wide/rows/99');
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.text).error.code).toBe('NOT_FOUND');
  });

  it('MessagePack and NDJSON are re-encoded from the written JSON as before', async () => {
    const r = await fetch(`${server.baseUrl}/api/v1/tables/wide/rows/1`, {
      headers: { authorization: `Bearer ${server.apiKey}`, accept: 'application/x-ndjson' },
    });
    expect(r.headers.get('content-type')).toContain('application/x-ndjson');
    expect(JSON.parse((await r.text()).trim())).toEqual({ data: expect.objectContaining({ id: 1, t: 'plain' }) });
  });
});
