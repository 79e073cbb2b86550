import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { startTestServer, TEST_API_KEY, type TestServer } from '../../helpers/sql-server.js';

/**
 * GET /api/v1/openapi.json: a valid OpenAPI 3.1 document generated from the route schemas, and a
 * small typed client driven by it: every call goes to a path and method the document lists, its
 * body is checked against the documented request schema, and the real answer against the
 * documented response schema (so the document cannot drift from the server).
 */
type Json = Record<string, any>;

let server: TestServer;
let doc: Json;
let dereferenced: Json;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);

beforeAll(async () => {
  server = await startTestServer();
  const response = await fetch(`${server.baseUrl}/api/v1/openapi.json`);
  expect(response.status).toBe(200);
  doc = (await response.json()) as Json;
  dereferenced = (await SwaggerParser.dereference(structuredClone(doc) as any)) as Json;
}, 60_000);

afterAll(async () => {
  await server?.close();
});

/** The documented operation of a concrete request (`/api/v1/tables/t/rows/2` matches `/api/v1/tables/{table_name}/rows/{id}`). */
function operationOf(method: string, path: string): Json {
  for (const [template, item] of Object.entries(dereferenced.paths as Json)) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    if (pattern.test(path.split('?')[0]!) && item[method.toLowerCase()]) return item[method.toLowerCase()];
  }
  throw new Error(`the document has no ${method} ${path}`);
}

function check(schema: Json | undefined, value: unknown, what: string): void {
  expect(schema, `${what} is documented`).toBeDefined();
  const validate = ajv.compile(schema!);
  if (!validate(value)) throw new Error(`${what} does not match the document: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value)}`);
}

/** One call through the document: request body and answer both checked against it. */
async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const operation = operationOf(method, path);
  if (body !== undefined) check(operation.requestBody?.content?.['application/json']?.schema, body, `${method} ${path} request body`);
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${TEST_API_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = await response.json();
  const documented = operation.responses[String(response.status)] ?? operation.responses[`${String(response.status)[0]}XX`];
  check(documented?.content?.['application/json']?.schema, json, `${method} ${path} answer ${response.status}`);
  return { status: response.status, json };
}

describe('OpenAPI for /api/v1', () => {
  it('is a valid OpenAPI 3.1 document with both security schemes', async () => {
    await SwaggerParser.validate(structuredClone(doc) as any);
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['apiKeyAuth', 'bearerAuth']);
    expect(doc.components.securitySchemes.apiKeyAuth).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('lists every resource of /api/v1 and nothing outside it', () => {
    const paths = Object.keys(doc.paths);
    for (const path of [
      '/api/v1/query',
      '/api/v1/query/stream',
      '/api/v1/query/async',
      '/api/v1/transactions',
      '/api/v1/tables',
      '/api/v1/tables/{table_name}/rows/{id}',
      '/api/v1/vectors/search',
      '/api/v1/cdc/streams',
      '/api/v1/webhooks',
      '/api/v1/info',
    ]) {
      expect(paths).toContain(path);
    }
    expect(paths.every((path) => path.startsWith('/api/v1/'))).toBe(true);
    expect(paths).not.toContain('/api/v1/openapi.json');
  });

  it('documents what the server validates: the body limits of POST /query come from the route schema', () => {
    const schema = doc.paths['/api/v1/query'].post.requestBody.content['application/json'].schema;
    expect(schema.required).toEqual(['sql']);
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.sql.maxLength).toBeGreaterThan(0);
  });

  it('a client driven by the document round-trips tables, rows, queries and transactions', async () => {
    expect(
      (
        await call('POST', '/api/v1/tables', {
          name: 'oa',
          columns: [
            { name: 'id', type: 'INTEGER', primary_key: true },
            { name: 'v', type: 'TEXT' },
          ],
        })
      ).status,
    ).toBe(201);
    expect((await call('GET', '/api/v1/tables')).json.tables.map((t: Json) => t.name)).toContain('oa');
    expect((await call('GET', '/api/v1/tables/oa')).json.columns).toHaveLength(2);
    expect(
      (
        await call('POST', '/api/v1/tables/oa/rows', {
          rows: [
            { id: 1, v: 'a' },
            { id: 2, v: 'b' },
          ],
        })
      ).json.inserted_count,
    ).toBe(2);
    expect((await call('GET', '/api/v1/tables/oa/rows/2')).json.data).toEqual({ id: 2, v: 'b' });
    expect((await call('GET', '/api/v1/tables/oa/rows?limit=1')).json.pagination.has_more).toBe(true);
    const query = await call('POST', '/api/v1/query', { sql: 'SELECT v FROM oa WHERE id = $1', params: [1], include_metadata: true });
    expect(query.json.data).toEqual([{ v: 'a' }]);
    const txn = await call('POST', '/api/v1/transactions', { isolation_level: 'serializable' });
    expect(txn.status).toBe(201);
    await call('POST', `/api/v1/transactions/${txn.json.transaction_id}/query`, { sql: 'DELETE FROM oa WHERE id = 1' });
    await call('POST', `/api/v1/transactions/${txn.json.transaction_id}/commit`);
    expect((await call('DELETE', '/api/v1/tables/oa/rows/2')).json.success).toBe(true);
    expect((await call('GET', '/api/v1/tables/oa/rows/2')).status).toBe(404);
    expect((await call('POST', '/api/v1/query/async', { sql: 'SELECT 1 AS one' })).status).toBe(202);
  });

  it('errors are documented with the envelope and its stable codes', async () => {
    const failed = await call('POST', '/api/v1/query', { sql: 'SELECT * FROM missing_table' });
    expect(failed.status).toBe(404);
    expect(failed.json.error.code).toBe('TABLE_NOT_FOUND');
  });

  it('serves Swagger UI at /docs over the document', async () => {
    const ui = await fetch(`${server.baseUrl}/docs/`);
    expect(ui.status).toBe(200);
    expect(await ui.text()).toContain('swagger');
    expect((await fetch(`${server.baseUrl}/docs/static/swagger-initializer.js`)).status).toBe(200);
    const shown = (await (await fetch(`${server.baseUrl}/docs/json`)).json()) as Json;
    expect(Object.keys(shown.paths)).toEqual(Object.keys(doc.paths));
  });
});

describe('Swagger UI off', () => {
  it('SVC_SWAGGER_UI=false: no /docs, the document is still served', async () => {
    const off = await startTestServer({ env: { SVC_SWAGGER_UI: 'false' } });
    try {
      expect((await fetch(`${off.baseUrl}/docs/`)).status).toBe(404);
      expect((await fetch(`${off.baseUrl}/api/v1/openapi.json`)).status).toBe(200);
    } finally {
      await off.close();
    }
  }, 60_000);
});
