import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, query } from '../../helpers/auth.js';
import { startTestServer, type TestServer } from '../../helpers/sql-server.js';
import { expectError, v1 } from './client.js';
import { SchemaMismatch, typedCollection } from './typed-client.js';

/** GET /v1/openapi.json: a valid OpenAPI 3.0 document, generated from the tenant's tables as they are now. */
describe('collections: GET /v1/openapi.json', () => {
  let server: TestServer;
  let key = '';
  const doc = async () => (await v1(server.baseUrl, '/openapi.json', { key })).body;
  const sql = (text: string) => query(server.baseUrl, bearer(server.apiKey), text);
  beforeAll(async () => {
    server = await startTestServer();
    key = server.apiKey;
  });
  afterAll(() => server?.close());

  it('validates, with the generic paths, version 7.0.0, a server ending in /v1 and both security schemes', async () => {
    const document = await doc();
    await SwaggerParser.validate(structuredClone(document));
    expect(document.openapi).toBe('3.0.0');
    expect(document.info.version).toBe('7.0.0');
    expect(document.servers[0].url).toBe(`${server.baseUrl}/v1`);
    expect(document.components.securitySchemes).toEqual({
      ApiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      BearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
    });
    expect(document.security).toEqual([{ ApiKeyAuth: [] }, { BearerAuth: [] }]);
    expect(Object.keys(document.paths)).toEqual(['/api/{collection}', '/api/{collection}/{id}', '/openapi.json']);
    expect(document.components.schemas.Resource.required).toEqual(['id', 'name']);
  });

  it('has a schema per collection from its columns, and follows ALTER TABLE', async () => {
    expect((await v1(server.baseUrl, '/api/widgets', { key, body: { name: 'w' } })).status).toBe(201);
    await sql('CREATE TABLE not_a_collection (k INTEGER PRIMARY KEY)');
    let document = await doc();
    await SwaggerParser.validate(structuredClone(document));
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/api/widgets', '/api/widgets/{id}']));
    expect(Object.keys(document.paths).some((p) => p.includes('not_a_collection'))).toBe(false);
    const widget = document.components.schemas['collections.widgets'];
    expect(widget.properties).toEqual({
      id: { type: 'string', format: 'uuid' },
      name: { type: 'string' },
      created_at: { type: 'string', format: 'date-time', readOnly: true },
      updated_at: { type: 'string', format: 'date-time', readOnly: true },
    });
    expect(widget.additionalProperties).toBe(true);
    expect(document.components.schemas['collections.widgets.input'].required).toEqual(['name']);

    await sql('ALTER TABLE widgets ADD COLUMN price NUMERIC(10,2)');
    await sql('ALTER TABLE widgets ADD COLUMN stock INTEGER NOT NULL DEFAULT 0');
    document = await doc();
    await SwaggerParser.validate(structuredClone(document));
    expect(document.components.schemas['collections.widgets'].properties).toMatchObject({
      price: { type: 'string', format: 'decimal', nullable: true },
      stock: { type: 'integer', format: 'int32' },
    });
    await sql('ALTER TABLE widgets DROP COLUMN price');
    await sql('ALTER TABLE widgets DROP COLUMN extra');
    document = await doc();
    const after = document.components.schemas['collections.widgets'];
    expect(Object.keys(after.properties)).toEqual(['id', 'name', 'created_at', 'updated_at', 'stock']);
    expect(after.additionalProperties).toBe(false);
    await sql('DROP TABLE widgets');
    expect(Object.keys((await doc()).paths).some((p) => p.includes('widgets'))).toBe(false);
  });

  it('a client checked against the document round-trips the main operations', async () => {
    interface Task {
      id: string;
      name: string;
      created_at: string;
      updated_at: string;
      done?: boolean;
      priority?: number;
    }
    interface TaskInput {
      id?: string;
      name: string;
      done?: boolean;
      priority?: number;
    }
    expect((await v1(server.baseUrl, '/api/tasks', { key, body: { name: 'seed' } })).status).toBe(201);
    await sql('ALTER TABLE tasks ADD COLUMN priority INTEGER');
    const tasks = await typedCollection<Task, TaskInput>(server.baseUrl, key, 'tasks');
    const created = await tasks.create({ name: 'write the client', done: false, priority: 2 });
    expect(created).toMatchObject({ name: 'write the client', done: false, priority: 2 });
    expect(await tasks.get(created.id)).toEqual(created);
    const replaced = await tasks.replace(created.id, { name: 'rewrite the client', priority: 1 });
    expect(replaced).toMatchObject({ id: created.id, name: 'rewrite the client', priority: 1, created_at: created.created_at });
    expect(replaced).not.toHaveProperty('done');
    const updated = await tasks.update(created.id, { done: true });
    expect(updated).toMatchObject({ name: 'rewrite the client', done: true, priority: 1 });
    expect((await tasks.list({ limit: 10 })).map((t) => t.name)).toEqual(['seed', 'rewrite the client']);
    expect((await tasks.list({ limit: 1, offset: 1 })).map((t) => t.id)).toEqual([created.id]);
    await tasks.remove(created.id);
    expectError(await v1(server.baseUrl, `/api/tasks/${created.id}`, { key }), 404, 'NOT_FOUND');
    // Errors are answers the document lists, in its Error schema.
    const gone = await tasks.get(created.id).catch((error: unknown) => error);
    expect(gone).not.toBeInstanceOf(SchemaMismatch);
    expect(String(gone)).toMatch(/get_tasks: 404/);
    // The document's schemas are what the client checks: a wrong type is caught before sending.
    await expect(tasks.create({ name: 'x', priority: 'high' as unknown as number })).rejects.toBeInstanceOf(SchemaMismatch);
    await expect(tasks.create({ name: '' })).rejects.toBeInstanceOf(SchemaMismatch);
  });
});
