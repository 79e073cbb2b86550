import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { qs, restClient, type RestReply } from './rest-client.js';

/** GET/POST /tables, GET/PATCH/DELETE /tables/{name} over a real server. */
describe('REST tables', () => {
  let server: TestServer;
  let call: (method: string, path: string, body?: unknown) => Promise<RestReply>;
  const sql = (text: string, params: unknown[] = []) => call('POST', '/query', { sql: text, params });

  beforeAll(async () => {
    server = await startTestServer();
    call = restClient(server);
  });
  afterAll(() => server?.close());

  const usersDefinition = {
    name: 'users',
    columns: [
      { name: 'id', type: 'BIGSERIAL', primary_key: true },
      { name: 'email', type: 'VARCHAR(255)', nullable: false },
      { name: 'score', type: 'DECIMAL(10,2)', default: '0', check: 'score >= 0' },
      { name: 'bio', type: 'TEXT', default: "'none'" },
      { name: 'active', type: 'BOOLEAN', default: true },
      { name: 'created_at', type: 'TIMESTAMP WITH TIME ZONE', default: 'now()' },
      { name: 'embedding', type: 'VECTOR(3)' },
      { name: 'meta', type: 'JSONB' },
      { name: 'n', type: 'INTEGER' },
    ],
    indexes: [
      { name: 'users_email_key', columns: ['email'], unique: true },
      { name: 'users_embedding_idx', columns: ['embedding'], type: 'hnsw', options: { m: 16, ef_construction: 64 } },
    ],
  };

  it('POST /tables creates a table with its indexes: 201 {success, table {name, schema, created_at}}', async () => {
    const r = await call('POST', '/tables', usersDefinition);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ success: true, table: { name: 'users', schema: 'public' } });
    expect(Date.parse(r.body.table.created_at)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('GET /tables/{name} shows columns, indexes, constraints and statistics in the spec shape', async () => {
    const r = await call('GET', '/tables/users');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name: 'users', schema: 'public', type: 'table' });
    expect(r.body.columns).toEqual([
      { name: 'id', type: 'BIGINT', nullable: false, default: "nextval('users_id_seq'::regclass)", is_primary_key: true },
      { name: 'email', type: 'VARCHAR(255)', nullable: false, default: null, is_primary_key: false },
      { name: 'score', type: 'NUMERIC(10,2)', nullable: true, default: '0', is_primary_key: false },
      { name: 'bio', type: 'TEXT', nullable: true, default: "'none'", is_primary_key: false },
      { name: 'active', type: 'BOOLEAN', nullable: true, default: 'TRUE', is_primary_key: false },
      { name: 'created_at', type: 'TIMESTAMP WITH TIME ZONE', nullable: true, default: 'now()', is_primary_key: false },
      { name: 'embedding', type: 'VECTOR(3)', nullable: true, default: null, is_primary_key: false },
      { name: 'meta', type: 'JSONB', nullable: true, default: null, is_primary_key: false },
      { name: 'n', type: 'INTEGER', nullable: true, default: null, is_primary_key: false },
    ]);
    expect(r.body.indexes).toEqual([
      { name: 'users_pkey', type: 'btree', columns: ['id'], unique: true, primary: true },
      { name: 'users_email_key', type: 'btree', columns: ['email'], unique: true, primary: false },
      // No metric given: cosine (docs/vectors.md), shown so the definition round-trips.
      {
        name: 'users_embedding_idx',
        type: 'hnsw',
        columns: ['embedding'],
        unique: false,
        primary: false,
        options: { m: 16, ef_construction: 64, metric: 'cosine' },
      },
    ]);
    expect(r.body.constraints).toEqual([
      { name: 'users_pkey', type: 'primary_key', definition: 'PRIMARY KEY (id)' },
      { name: 'users_score_check', type: 'check', definition: 'score >= 0' },
    ]);
    expect(r.body.statistics).toMatchObject({ row_count: 0, size_bytes: 0, index_size_bytes: 0 });
    expect(typeof r.body.statistics.last_analyzed).toBe('string');
  });

  it('statistics are real: exact row count, bytes of rows and of index entries', async () => {
    const rows = Array.from({ length: 25 }, (_v, i) => ({ email: `u${i}@x.io`, n: i }));
    expect((await call('POST', '/tables/users/rows', { rows })).status).toBe(201);
    expect((await call('DELETE', '/tables/users/rows', { filter: 'n >= 20' })).body.deleted_count).toBe(5);
    const stats = (await call('GET', '/tables/users')).body.statistics;
    expect(stats.row_count).toBe(20);
    expect((await sql('SELECT count(*) AS c FROM users')).body.data).toEqual([{ c: 20 }]);
    expect(stats.size_bytes).toBeGreaterThan(20 * 20);
    expect(stats.index_size_bytes).toBeGreaterThan(20 * 10);
    const listed = (await call('GET', '/tables')).body.tables.find((t: { name: string }) => t.name === 'users');
    expect(listed).toMatchObject({ name: 'users', schema: 'public', type: 'table', row_count: 20, size_bytes: stats.size_bytes });
  });

  it('GET /tables filters by schema, LIKE pattern (% _ and \\ escape) and views, with total_count, limit and offset', async () => {
    for (const name of ['log_a', 'log_b', 'logxc', 'log_']) {
      expect((await call('POST', '/tables', { name, columns: [{ name: 'id', type: 'INT', primary_key: true }] })).status).toBe(201);
    }
    expect((await call('POST', '/tables', { name: 'log_a', schema: 'archive', columns: [{ name: 'id', type: 'INT' }] })).status).toBe(201);
    expect((await sql('CREATE VIEW log_view AS SELECT id FROM log_a')).status).toBe(200);
    const names = async (query: Record<string, string | number | boolean>) => {
      const r = await call('GET', `/tables${qs(query)}`);
      expect(r.status).toBe(200);
      expect(r.body.total_count).toBeGreaterThanOrEqual(r.body.tables.length);
      return r.body.tables.map((t: { schema: string; name: string }) => `${t.schema}.${t.name}`);
    };
    expect(await names({ pattern: 'log%' })).toEqual(['archive.log_a', 'public.log_', 'public.log_a', 'public.log_b', 'public.log_view', 'public.logxc']);
    expect(await names({ pattern: 'log\\_%', schema: 'public' })).toEqual(['public.log_', 'public.log_a', 'public.log_b', 'public.log_view']);
    expect(await names({ pattern: 'log__', schema: 'public' })).toEqual(['public.log_a', 'public.log_b', 'public.logxc']);
    expect(await names({ pattern: 'log%', include_views: false, schema: 'public' })).toEqual(['public.log_', 'public.log_a', 'public.log_b', 'public.logxc']);
    const view = (await call('GET', '/tables?pattern=log_view')).body.tables[0];
    expect(view).toMatchObject({ type: 'view', row_count: null, size_bytes: null });
    const page = await call('GET', `/tables${qs({ pattern: 'log%', limit: 2, offset: 1 })}`);
    expect(page.body.total_count).toBe(6);
    expect(page.body.tables.map((t: { name: string }) => t.name)).toEqual(['log_', 'log_a']);
    expect((await call('GET', '/tables?include_system=true&pattern=nothing%25')).body).toEqual({ tables: [], total_count: 0 });
    expect((await call('GET', '/tables?limit=0')).status).toBe(400);
    expect((await call('GET', '/tables?bogus=1')).status).toBe(400);
  });

  it('schema-qualified names: POST with schema, GET /tables/schema.name', async () => {
    const r = await call('GET', '/tables/archive.log_a');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ schema: 'archive', name: 'log_a' });
    expect((await call('GET', '/tables/public.log_a')).body.schema).toBe('public');
    expect((await call('GET', '/tables/nope')).body.error.code).toBe('TABLE_NOT_FOUND');
    expect((await call('GET', '/tables/nope')).status).toBe(404);
  });

  it('if_not_exists answers 200 created:false for an existing table and adds nothing; without it 409', async () => {
    const again = await call('POST', '/tables', { ...usersDefinition, indexes: [{ name: 'extra_idx', columns: ['n'] }], if_not_exists: true });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ success: true, created: false, table: { name: 'users' } });
    expect((await call('GET', '/tables/users')).body.indexes.map((i: { name: string }) => i.name)).not.toContain('extra_idx');
    const dup = await call('POST', '/tables', usersDefinition);
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('CONSTRAINT_VIOLATION');
  });

  it('a table and its indexes are created together or not at all', async () => {
    const r = await call('POST', '/tables', {
      name: 'half',
      columns: [
        { name: 'id', type: 'INT', primary_key: true },
        { name: 'v', type: 'TEXT' },
      ],
      indexes: [
        { name: 'half_v', columns: ['v'] },
        { name: 'half_bad', columns: ['missing'] },
      ],
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'COLUMN_NOT_FOUND', details: { index: 1, field: 'indexes.1' } });
    expect((await call('GET', '/tables/half')).status).toBe(404);
    const hnsw = await call('POST', '/tables', { name: 'half', columns: [{ name: 'id', type: 'INT' }], indexes: [{ columns: ['id'], type: 'hnsw' }] });
    expect(hnsw.status).toBe(400);
    expect((await call('GET', '/tables/half')).status).toBe(404);
  });

  it('composite primary keys become a table constraint', async () => {
    const r = await call('POST', '/tables', {
      name: 'pairs',
      columns: [
        { name: 'a', type: 'INT', primary_key: true },
        { name: 'b', type: 'TEXT', primary_key: true },
        { name: 'v', type: 'INT' },
      ],
    });
    expect(r.status).toBe(201);
    const detail = (await call('GET', '/tables/pairs')).body;
    expect(detail.columns.filter((c: { is_primary_key: boolean }) => c.is_primary_key).map((c: { name: string }) => c.name)).toEqual(['a', 'b']);
    expect(detail.indexes[0]).toMatchObject({ columns: ['a', 'b'], primary: true });
  });

  it('refuses SQL smuggled through types, defaults, checks and names, and creates nothing', async () => {
    const attempts: [Record<string, unknown>, number, string][] = [
      [{ name: 'id', type: 'INT); DROP TABLE users; --' }, 400, 'columns.0.type'],
      [{ name: 'id', type: 'INT PRIMARY KEY REFERENCES users' }, 400, 'columns.0.type'],
      [{ name: 'id', type: 'NOTATYPE' }, 400, 'columns.0.type'],
      [{ name: 'id', type: 'INT', default: '1); DROP TABLE users; --' }, 400, 'columns.0.default'],
      [{ name: 'id', type: 'INT', default: '1 /* x */' }, 400, 'columns.0.default'],
      [{ name: 'id', type: 'INT', check: 'id > 0) , CHECK (id < 0' }, 400, 'columns.0.check'],
      [{ name: 'id', type: 'INT', check: 'id > 0; DROP TABLE users' }, 400, 'columns.0.check'],
      [{ name: 'id', type: 'INT', check: '(SELECT count(*) FROM users) > 0' }, 400, 'columns.0.check'],
      [{ name: 'x" INT, "y', type: 'INT' }, 422, 'columns.0.name'],
    ];
    for (const [column, status, field] of attempts) {
      const r = await call('POST', '/tables', { name: 'smuggled', columns: [column] });
      expect(r.status, JSON.stringify(column)).toBe(status);
      expect(r.body.error.details.field, JSON.stringify(column)).toBe(field);
    }
    expect((await call('POST', '/tables', { name: 'a"; DROP TABLE users; --', columns: [{ name: 'id', type: 'INT' }] })).status).toBe(422);
    expect(
      (
        await call('POST', '/tables', {
          name: 'x',
          columns: [{ name: 'id', type: 'INT' }],
          indexes: [{ columns: ['id'], options: { 'm = 1); DROP TABLE users; --': 1 } }],
        })
      ).status,
    ).toBe(422);
    expect((await call('GET', '/tables/smuggled')).status).toBe(404);
    expect((await call('GET', '/tables/users')).status).toBe(200);
  });

  it('refuses malformed definitions with the envelope (422 for the body, 400 for the URL)', async () => {
    expect((await call('POST', '/tables', { name: 't' })).body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'columns' } });
    expect((await call('POST', '/tables', { name: 't', columns: [] })).status).toBe(422);
    expect((await call('POST', '/tables', { name: 't', columns: [{ name: 'id', type: 'INT', colour: 'red' }] })).status).toBe(422);
    expect((await call('POST', '/tables', { name: 't', columns: [{ name: 'id', type: 'INT' }], indexes: [{ columns: ['id'], type: 'gin' }] })).status).toBe(
      422,
    );
    expect((await call('DELETE', '/tables/users?cascade=maybe')).status).toBe(400);
  });

  it('PATCH applies every operation in one go and says how many', async () => {
    const r = await call('PATCH', '/tables/users', {
      operations: [
        { operation: 'add_column', column: { name: 'age', type: 'INTEGER', default: 18, nullable: false } },
        { operation: 'rename_column', old_name: 'bio', new_name: 'about' },
        { operation: 'add_index', index: { columns: ['age'] } },
        { operation: 'add_index', index: { name: 'users_email_age', columns: ['email', 'age'], unique: true } },
        { operation: 'drop_column', column_name: 'meta' },
      ],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ success: true, operations_completed: 5, table: { name: 'users' } });
    const detail = (await call('GET', '/tables/users')).body;
    expect(r.body.table.updated_at).toBe(detail.updated_at);
    expect(detail.columns.map((c: { name: string }) => c.name)).toEqual(['id', 'email', 'score', 'about', 'active', 'created_at', 'embedding', 'n', 'age']);
    expect(detail.columns.find((c: { name: string }) => c.name === 'age')).toMatchObject({ type: 'INTEGER', nullable: false, default: '18' });
    expect(detail.indexes.map((i: { name: string }) => i.name)).toEqual([
      'users_pkey',
      'users_email_key',
      'users_embedding_idx',
      'users_age_idx',
      'users_email_age',
    ]);
    // Existing rows read the new column's default.
    expect((await sql('SELECT DISTINCT age FROM users')).body.data).toEqual([{ age: 18 }]);
  });

  it('PATCH is all or nothing: a failing operation names itself and none of the others happened', async () => {
    const before = (await call('GET', '/tables/users')).body;
    const r = await call('PATCH', '/tables/users', {
      operations: [
        { operation: 'add_column', column: { name: 'nickname', type: 'TEXT' } },
        { operation: 'add_index', index: { columns: ['nickname'] } },
        { operation: 'drop_column', column_name: 'no_such_column' },
      ],
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'COLUMN_NOT_FOUND', details: { operation_index: 2, operation: 'drop_column', operations_completed: 0 } });
    const after = (await call('GET', '/tables/users')).body;
    expect(after.columns).toEqual(before.columns);
    expect(after.indexes).toEqual(before.indexes);
    expect(after.updated_at).toBe(before.updated_at);
    const unique = await call('PATCH', '/tables/users', { operations: [{ operation: 'add_index', index: { columns: ['age'], unique: true } }] });
    expect(unique.status, JSON.stringify(unique.body)).toBe(409);
    expect(unique.body.error.details.operation_index).toBe(0);
  });

  it('PATCH refuses bad operations, views and unknown tables', async () => {
    expect((await call('PATCH', '/tables/users', { operations: [{ operation: 'add_column' }] })).body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { field: 'operations.0.column' },
    });
    expect((await call('PATCH', '/tables/users', { operations: [{ operation: 'truncate' }] })).status).toBe(422);
    expect((await call('PATCH', '/tables/users', { operations: [] })).status).toBe(422);
    expect((await call('PATCH', '/tables/nope', { operations: [{ operation: 'drop_column', column_name: 'x' }] })).status).toBe(404);
    expect((await call('PATCH', '/tables/log_view', { operations: [{ operation: 'drop_column', column_name: 'id' }] })).status).toBe(400);
    const injected = await call('PATCH', '/tables/users', {
      operations: [{ operation: 'add_column', column: { name: 'z', type: 'INT', default: '0); DROP TABLE users; --' } }],
    });
    expect(injected.body.error.details.field).toBe('operations.0.column.default');
  });

  it('DELETE drops tables and views; 404 without if_exists; cascade for dependents', async () => {
    expect((await sql('CREATE TABLE parent (id INT PRIMARY KEY); CREATE TABLE child (id INT PRIMARY KEY, p INT REFERENCES parent(id))')).status).toBe(200);
    const refused = await call('DELETE', '/tables/parent');
    expect(refused.status).toBe(409);
    const cascaded = await call('DELETE', '/tables/parent?cascade=true');
    expect(cascaded.status).toBe(200);
    expect(cascaded.body).toMatchObject({ success: true, table: 'parent', dropped: true });
    expect(Date.parse(cascaded.body.dropped_at)).toBeGreaterThan(0);
    expect((await call('GET', '/tables/child')).body.constraints).toEqual([{ name: 'child_pkey', type: 'primary_key', definition: 'PRIMARY KEY (id)' }]);
    const missing = await call('DELETE', '/tables/parent');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('TABLE_NOT_FOUND');
    expect((await call('DELETE', '/tables/parent?if_exists=true')).body).toEqual({ success: true, table: 'parent', dropped: false, dropped_at: null });
    expect((await call('DELETE', '/tables/log_view')).status).toBe(200);
    expect((await call('DELETE', '/tables/archive.log_a')).status).toBe(200);
    expect((await call('GET', '/tables/archive.log_a')).status).toBe(404);
  });

  it('requires credentials', async () => {
    const r = await fetch(`${server.baseUrl}/api/v1/tables`);
    expect(r.status).toBe(401);
  });

  it('an hnsw index definition takes its metric in options, and GET shows it back', async () => {
    const created = await call('POST', '/tables', {
      name: 'places',
      columns: [
        { name: 'id', type: 'INTEGER', primary_key: true },
        { name: 'at', type: 'VECTOR(2)' },
      ],
      indexes: [{ name: 'places_at', columns: ['at'], type: 'hnsw', options: { m: 8, metric: 'l2' } }],
    });
    expect(created.status).toBe(201);
    const shown = await call('GET', '/tables/places');
    expect(shown.body.indexes.find((i: { name: string }) => i.name === 'places_at').options).toEqual({ m: 8, metric: 'l2' });
    const bad = await call('POST', '/tables', {
      name: 'p2',
      columns: [{ name: 'v', type: 'VECTOR(2)' }],
      indexes: [{ columns: ['v'], type: 'hnsw', options: { metric: 'hamming' } }],
    });
    expect(bad.status).toBe(422);
  });
  it("include_system: the vector protocol's own bookkeeping table is listed only when asked", async () => {
    const created = await fetch(`${server.baseUrl}/indexes`, {
      method: 'POST',
      headers: { 'api-key': server.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'sysdemo', dimension: 2, metric: 'cosine', spec: { serverless: { cloud: 'aws', region: 'us-east-1' } } }),
    });
    expect(created.status).toBe(201);
    const names = async (query: string): Promise<string[]> =>
      (await call('GET', `/tables?pattern=pinecone%25${query}`)).body.tables.map((t: { name: string }) => t.name);
    expect(await names('')).toEqual(['pinecone_sysdemo']);
    expect(await names('&include_system=false')).toEqual(['pinecone_sysdemo']);
    expect(await names('&include_system=true')).toEqual(['pinecone__indexes', 'pinecone_sysdemo']);
    expect((await call('GET', '/tables?pattern=pinecone%25&include_system=true')).body.total_count).toBe(2);
  });
});
