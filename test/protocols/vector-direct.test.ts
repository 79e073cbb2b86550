import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../helpers/random.js';
import { bearer } from '../helpers/auth.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

/**
 * The bytes of a search answered by the direct path (query/fast-vector.ts) against those of the
 * same search answered by the executor. A statement's first run goes through the executor (its
 * plan is not cached yet), the same statement sent again takes the direct path: each query below
 * has a text of its own (a filter that keeps every row, or its own topK), sent twice.
 */
const VECTOR_KEY = 'direct-vector-key';
const DIMS = 4;
const random = seededRandom(5);
const vector = (): number[] => Array.from({ length: DIMS }, () => Math.round((random() * 2 - 1) * 1e6) / 1e6);

let server: TestServer;
const post = async (path: string, body: unknown, headers: Record<string, string>): Promise<{ status: number; text: string }> => {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
};
const rest = (body: unknown) => post('/api/v1/vectors/search', body, bearer(server.apiKey));
const pinecone = (body: unknown) => post('/indexes/docs/query', body, { 'api-key': VECTOR_KEY });
const withoutTime = (text: string): string => text.replace(/"query_time_ms":\d+/, '"query_time_ms":0');

beforeAll(async () => {
  server = await startTestServer({ env: { SVC_VECTOR_API_KEY: VECTOR_KEY } });
  const auth = bearer(server.apiKey);
  for (const sql of [
    `CREATE TABLE items (id TEXT PRIMARY KEY, embedding VECTOR(${DIMS}), metadata JSONB)`,
    'CREATE INDEX items_hnsw ON items USING hnsw (embedding vector_l2_ops)',
  ])
    expect((await post('/api/v1/query', { sql }, auth)).status).toBe(200);
  const shared = vector();
  const vectors = Array.from({ length: 300 }, (_v, i) => ({
    id: `v${i}`,
    // Ties: every 25th row has the same vector.
    vector: i % 25 === 0 ? shared : vector(),
    ...(i % 3 === 0 ? { metadata: { cat: i % 7, price: 1.5, tags: ['a', i] } } : {}),
  }));
  expect((await post('/api/v1/vectors/upsert', { table: 'items', vectors }, auth)).status).toBe(200);
  // Changed since they were indexed: deleted and updated rows.
  expect((await post('/api/v1/query', { sql: "DELETE FROM items WHERE id IN ('v1', 'v2', 'v3')" }, auth)).status).toBe(200);
  expect((await post('/api/v1/query', { sql: `UPDATE items SET embedding = '[${vector().join(',')}]' WHERE id IN ('v4', 'v5')` }, auth)).status).toBe(200);
  const created = await post(
    '/indexes',
    { name: 'docs', dimension: DIMS, metric: 'cosine', spec: { serverless: { cloud: 'aws', region: 'us-east-1' } } },
    { 'api-key': VECTOR_KEY },
  );
  expect(created.status).toBe(201);
  // Enough records that the planner searches the index under the namespace condition (a tiny range is ranked exactly).
  for (let at = 0; at < 2000; at += 500) {
    const records = Array.from({ length: 500 }, (_v, i) => ({ id: `p${at + i}`, values: vector(), ...(i % 2 === 0 ? { metadata: { n: i, x: 0.1 } } : {}) }));
    expect((await post('/indexes/docs/vectors/upsert', { vectors: records }, { 'api-key': VECTOR_KEY })).status).toBe(200);
  }
});
afterAll(() => server?.close());

describe('the direct vector search', () => {
  it('answers REST /vectors/search with the bytes of the executor (metadata, vectors, ties, k past the table)', async () => {
    const [tie] = JSON.parse((await rest({ index: 'items_hnsw', vector: vector(), top_k: 1, include_vectors: true })).text).results;
    for (let i = 0; i < 24; i++) {
      const body = {
        index: i % 2 === 0 ? 'items_hnsw' : 'items',
        vector: i % 6 === 0 ? tie.vector : vector(),
        top_k: i === 5 ? 500 : 1 + Math.floor(random() * 30),
        include_metadata: i % 3 !== 0,
        include_vectors: i % 4 === 0,
        // A filter every row passes: a statement text of its own, so its first run is the executor's.
        filter: `${i} = ${i}`,
      };
      const general = await rest(body);
      const direct = await rest(body);
      expect(general.status).toBe(200);
      expect(withoutTime(direct.text)).toBe(withoutTime(general.text));
    }
  });

  it("answers the vector protocol's /query with the bytes of the executor", async () => {
    for (let topK = 1; topK <= 20; topK++) {
      const body = { topK, vector: vector(), includeMetadata: topK % 2 === 0, includeValues: topK % 3 === 0 };
      const general = await pinecone(body);
      const direct = await pinecone(body);
      expect(general.status).toBe(200);
      expect(direct.text).toBe(general.text);
    }
  });

  it('refuses what the executor refuses, with the same envelope', async () => {
    const body = { index: 'items_hnsw', vector: vector(), top_k: 3, ef_search: 40 };
    expect((await rest(body)).status).toBe(200);
    const wrong = await rest({ ...body, vector: [1, 2] });
    expect(wrong.status).toBe(422);
    const zero = await rest({ ...body, vector: [0, 0, 0, 0], top_k: 2 });
    expect(zero.status).toBe(200);
    expect(withoutTime((await rest({ ...body, vector: [0, 0, 0, 0], top_k: 2 })).text)).toBe(withoutTime(zero.text));
  });
});
