import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, bearer, newKey } from '../helpers/auth.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

let server: TestServer;
let auth: Record<string, string>;
const call = (path: string, body: unknown, method = 'POST', headers = auth) => api(server.baseUrl, path, { method, headers, body });
const sql = (text: string) => call('/query', { sql: text });

beforeAll(async () => {
  server = await startTestServer();
  auth = bearer(server.apiKey);
  for (const text of [
    'CREATE TABLE docs (id TEXT PRIMARY KEY, embedding VECTOR(3), metadata JSONB, lang TEXT)',
    'CREATE INDEX docs_embedding_idx ON docs USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)',
    'CREATE TABLE items (sku INT PRIMARY KEY, v VECTOR(2), name TEXT)',
    'CREATE TABLE two (id TEXT PRIMARY KEY, a VECTOR(2), b VECTOR(2))',
  ])
    expect((await sql(text)).status).toBe(200);
});
afterAll(() => server?.close());

describe('POST /api/v1/vectors/upsert', () => {
  it('inserts, then replaces by id, in one statement', async () => {
    const first = await call('/vectors/upsert', {
      table: 'docs',
      vectors: [
        { id: 'a', vector: [1, 0, 0], metadata: { genre: 'news', year: 2020 } },
        { id: 'b', vector: [0, 1, 0], metadata: { genre: 'sport', year: 2021 } },
        { id: 'c', vector: [0, 0, 1] },
      ],
    });
    expect(first).toMatchObject({ status: 200, body: { success: true, upserted_count: 3, ids: ['a', 'b', 'c'] } });
    const again = await call('/vectors/upsert', { table: 'docs', vectors: [{ id: 'c', vector: [0.9, 0.1, 0], metadata: { genre: 'news', year: 2022 } }] });
    expect(again.body).toEqual({ success: true, upserted_count: 1, ids: ['c'] });
    const rows = await sql("SELECT id, embedding, metadata->>'year' AS year FROM docs ORDER BY id");
    expect(rows.body.data).toEqual([
      { id: 'a', embedding: [1, 0, 0], year: '2020' },
      { id: 'b', embedding: [0, 1, 0], year: '2021' },
      { id: 'c', embedding: [0.9, 0.1, 0], year: '2022' },
    ]);
  });

  it('refuses a wrong dimension, an unknown table, oversized metadata and too many vectors', async () => {
    const dim = await call('/vectors/upsert', { table: 'docs', vectors: [{ id: 'x', vector: [1, 2] }] });
    expect(dim.status).toBe(422);
    expect(dim.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'vectors.0.vector', expected: 3, actual: 2 } });
    expect((await call('/vectors/upsert', { table: 'nope', vectors: [{ id: 'x', vector: [1] }] })).body.error.code).toBe('TABLE_NOT_FOUND');
    const big = await call('/vectors/upsert', { table: 'docs', vectors: [{ id: 'x', vector: [1, 2, 3], metadata: { text: 'x'.repeat(41_000) } }] });
    expect(big.status).toBe(400);
    expect(big.body.error).toMatchObject({ code: 'LIMIT_EXCEEDED', details: { limit: 40960 } });
    const many = await call('/vectors/upsert', { table: 'docs', vectors: Array.from({ length: 1001 }, (_, i) => ({ id: `m${i}`, vector: [1, 2, 3] })) });
    expect(many.status).toBe(422);
    expect((await call('/vectors/upsert', { table: 'two', vectors: [{ id: 'x', vector: [1, 2] }] })).body.error.message).toContain('2 VECTOR columns');
    const noMeta = await call('/vectors/upsert', { table: 'items', vectors: [{ id: 1, vector: [1, 2], metadata: { a: 1 } }] });
    expect(noMeta.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'vectors.0.metadata' } });
  });
});

describe('POST /api/v1/vectors/search', () => {
  it('finds the nearest by hnsw index name or table name, with score, distance, metadata and vector', async () => {
    const byIndex = await call('/vectors/search', { index: 'docs_embedding_idx', vector: [1, 0, 0], top_k: 2, include_metadata: true, include_vectors: true });
    expect(byIndex.status).toBe(200);
    expect(byIndex.body.results.map((r: { id: string }) => r.id)).toEqual(['a', 'c']);
    expect(byIndex.body.results[0]).toMatchObject({ id: 'a', distance: 0, score: 1, metadata: { genre: 'news', year: 2020 }, vector: [1, 0, 0] });
    expect(typeof byIndex.body.query_time_ms).toBe('number');
    const byTable = await call('/vectors/search', { index: 'docs', vector: [0, 1, 0] });
    expect(byTable.body.results[0]).toEqual({ id: 'b', score: 1, distance: 0 });
    expect(byTable.body.results).toHaveLength(3);
  });

  it('scores each metric so that higher is nearer', async () => {
    const l2 = await call('/vectors/search', { index: 'docs', vector: [1, 0, 0], metric: 'l2', top_k: 1 });
    expect(l2.body.results[0]).toEqual({ id: 'a', distance: 0, score: 1 });
    const ip = await call('/vectors/search', { index: 'docs', vector: [2, 0, 0], metric: 'inner_product', top_k: 1 });
    expect(ip.body.results[0]).toEqual({ id: 'a', distance: -2, score: 2 });
  });

  it('applies a SQL filter over the table columns', async () => {
    const r = await call('/vectors/search', { index: 'docs', vector: [1, 0, 0], filter: "metadata->>'genre' = 'sport' OR id = 'c'", include_metadata: true });
    expect(r.body.results.map((x: { id: string }) => x.id)).toEqual(['c', 'b']);
  });

  it('reads metadata from the other columns when the table has no metadata column', async () => {
    await call('/vectors/upsert', {
      table: 'items',
      vectors: [
        { id: 1, vector: [1, 1] },
        { id: 2, vector: [1, -1] },
      ],
    });
    await sql("UPDATE items SET name = 'one' WHERE sku = 1");
    const r = await call('/vectors/search', { index: 'items', vector: [1, 1], top_k: 1, include_metadata: true });
    expect(r.body.results).toEqual([{ id: 1, score: 1, distance: 0, metadata: { name: 'one' } }]);
  });

  it('refuses filters that are not one condition, and bad requests', async () => {
    for (const filter of [
      "id = 'a'; DROP TABLE docs",
      'true) LIMIT (1',
      'true) ORDER BY (id',
      "id = 'a' --",
      '1 = 1 ORDER BY id',
      "id = 'a') UNION SELECT 1 FROM docs WHERE (true",
      'id = ',
    ]) {
      const r = await call('/vectors/search', { index: 'docs', vector: [1, 0, 0], filter });
      expect(r.status, filter).toBe(400);
      expect(r.body.error.code, filter).toBe('INVALID_QUERY');
    }
    expect((await sql('SELECT count(*) AS n FROM docs')).body.data).toEqual([{ n: 3 }]);
    expect((await call('/vectors/search', { index: 'nothing', vector: [1] })).status).toBe(404);
    expect((await call('/vectors/search', { index: 'docs', vector: [1, 0] })).body.error.code).toBe('VALIDATION_ERROR');
    expect((await call('/vectors/search', { index: 'docs', vector: [1, 0, 0], metric: 'hamming' })).status).toBe(422);
    expect((await call('/vectors/search', { index: 'docs', vector: [1, 0, 0], top_k: 0 })).status).toBe(422);
    expect((await call('/vectors/search', { index: 'docs', vector: [1, 0, 0], filter: 'nosuch > 1' })).body.error.code).toBe('COLUMN_NOT_FOUND');
    expect((await call('/vectors/search', { index: 'docs', vector: [1, 0, 0] }, 'POST', {})).status).toBe(401);
  });

  it('is open to read_only credentials, upsert and delete are not', async () => {
    const { key } = await newKey(server.dataDir, { role: 'read_only' });
    const headers = bearer(key);
    await expect.poll(async () => (await call('/vectors/search', { index: 'docs', vector: [1, 0, 0] }, 'POST', headers)).status, { timeout: 5000 }).toBe(200);
    expect((await call('/vectors/upsert', { table: 'docs', vectors: [{ id: 'z', vector: [1, 2, 3] }] }, 'POST', headers)).status).toBe(403);
    expect((await call('/vectors', { table: 'docs', ids: ['a'] }, 'DELETE', headers)).status).toBe(403);
  });
});

describe('DELETE /api/v1/vectors', () => {
  it('deletes by ids, by filter, and by both (rows matching both)', async () => {
    await call('/vectors/upsert', {
      table: 'docs',
      vectors: [
        { id: 'd', vector: [1, 1, 1], metadata: { genre: 'news' } },
        { id: 'e', vector: [1, 1, 0], metadata: { genre: 'x' } },
      ],
    });
    const both = await call('/vectors', { table: 'docs', ids: ['a', 'b', 'd'], filter: "metadata->>'genre' = 'news'" }, 'DELETE');
    expect(both.body).toEqual({ success: true, deleted_count: 2 });
    expect((await call('/vectors', { table: 'docs', ids: ['b', 'nope'] }, 'DELETE')).body).toEqual({ success: true, deleted_count: 1 });
    expect((await call('/vectors', { table: 'docs', filter: "metadata->>'genre' = 'x'" }, 'DELETE')).body).toEqual({ success: true, deleted_count: 1 });
    expect((await sql('SELECT id FROM docs')).body.data).toEqual([{ id: 'c' }]);
  });

  it('needs ids or a filter, and refuses a filter that is not one condition', async () => {
    const neither = await call('/vectors', { table: 'docs' }, 'DELETE');
    expect(neither.status).toBe(400);
    expect(neither.body.error.details.reason).toBe('ids_or_filter_required');
    expect((await call('/vectors', { table: 'docs', ids: null, filter: null }, 'DELETE')).status).toBe(400);
    expect((await call('/vectors', { table: 'docs', filter: 'true; DROP TABLE docs' }, 'DELETE')).status).toBe(400);
    expect((await call('/vectors', { table: 'docs', filter: 'id = $1' }, 'DELETE')).body.error.details.reason).toBe('parameter');
    // The filter cannot escape the AND with the ids: `true) OR (true` closes what it did not open, and is refused.
    const before = await sql('SELECT count(*) AS n FROM docs');
    const escape = await call('/vectors', { table: 'docs', ids: ['nope'], filter: 'true) OR (true' }, 'DELETE');
    expect(escape.status).toBe(400);
    expect(escape.body.error.code).toBe('INVALID_QUERY');
    expect((await sql('SELECT count(*) AS n FROM docs')).body.data).toEqual(before.body.data);
    expect((await call('/vectors', { table: 'ghost', ids: ['a'] }, 'DELETE')).status).toBe(404);
    expect((await sql('SELECT count(*) AS n FROM docs')).body.data).toEqual([{ n: 1 }]);
  });

  it("searches with the index's own metric by default, and passes ef_search to the index", async () => {
    expect((await sql('CREATE TABLE pts (id INT PRIMARY KEY, v VECTOR(2))')).status).toBe(200);
    expect((await sql('CREATE INDEX pts_l2 ON pts USING hnsw (v vector_l2_ops)')).status).toBe(200);
    expect(
      (
        await call('/vectors/upsert', {
          table: 'pts',
          vectors: [
            { id: 1, vector: [3, 4] },
            { id: 2, vector: [30, 40] },
          ],
        })
      ).status,
    ).toBe(200);
    const found = await call('/vectors/search', { index: 'pts_l2', vector: [0, 0], top_k: 1, ef_search: 200 });
    expect(found.status).toBe(200);
    expect(found.body.results[0]).toMatchObject({ id: 1, distance: 5 }); // L2, not cosine (which would tie at 0)
    expect((await call('/vectors/search', { index: 'pts_l2', vector: [0, 0], ef_search: 5000 })).status).toBe(422);
  });

  it('follows an index name to the table that has it now: dropped, made again on another table, its metric changed', async () => {
    for (const text of ['CREATE TABLE moved_a (id INT PRIMARY KEY, v VECTOR(2))', 'CREATE TABLE moved_b (id INT PRIMARY KEY, w VECTOR(3))'])
      expect((await sql(text)).status).toBe(200);
    expect((await call('/vectors/upsert', { table: 'moved_a', vectors: [{ id: 1, vector: [1, 0] }] })).status).toBe(200);
    expect((await call('/vectors/upsert', { table: 'moved_b', vectors: [{ id: 2, vector: [0, 0, 3] }] })).status).toBe(200);
    const search = (vector: number[]) => call('/vectors/search', { index: 'moved_idx', vector, top_k: 1 });
    expect((await sql('CREATE INDEX moved_idx ON moved_a USING hnsw (v vector_cosine_ops)')).status).toBe(200);
    expect((await search([1, 0])).body.results).toEqual([{ id: 1, score: 1, distance: 0 }]);
    expect((await search([1, 0])).body.results).toEqual([{ id: 1, score: 1, distance: 0 }]);
    // Made again on the other table (another column and dimension): found there.
    expect((await sql('DROP INDEX moved_idx')).status).toBe(200);
    expect((await search([1, 0])).status).toBe(404);
    expect((await sql('CREATE INDEX moved_idx ON moved_b USING hnsw (w vector_l2_ops)')).status).toBe(200);
    expect((await search([1, 0])).status).toBe(422);
    expect((await search([0, 0, 1])).body.results).toEqual([expect.objectContaining({ id: 2, distance: 2 })]);
    // Its table changed under the same name (another metric): searched with the new one.
    expect((await sql('DROP INDEX moved_idx')).status).toBe(200);
    expect((await sql('CREATE INDEX moved_idx ON moved_b USING hnsw (w vector_ip_ops)')).status).toBe(200);
    expect((await search([0, 0, 1])).body.results).toEqual([expect.objectContaining({ id: 2, distance: -3 })]);
  });
});
