/**
 * The vector protocol under the interface spec's own names, with plain fetch: POST /upsert at the
 * root (and {host}/upsert), the snake_case fields (top_k defaulting to 10, include_values,
 * include_metadata, sparse_values, sparse_vector) beside the camelCase ones of Pinecone's clients,
 * conflicting values refused with 400, and the index parameters pods, replicas and pod_type.
 */
import { Pinecone } from '@pinecone-database/pinecone';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

const VECTOR_KEY = 'spec-names-vector-key';
let server: TestServer;

async function call(pathname: string, body?: unknown, method?: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.baseUrl}${pathname}`, {
    method: method ?? (body === undefined ? 'GET' : 'POST'),
    headers: { 'api-key': VECTOR_KEY, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: JSON.parse(await response.text()) };
}

const fetchIds = async (index: string, ids: string[], namespace = '') =>
  (await call(`/indexes/${index}/vectors/fetch?${ids.map((id) => `ids=${id}`).join('&')}&namespace=${namespace}`)).body.vectors;

beforeAll(async () => {
  server = await startTestServer({ env: { SVC_VECTOR_API_KEY: VECTOR_KEY } });
});
afterAll(() => server?.close());

describe('POST /upsert and snake_case fields', () => {
  it('POST /upsert at the root upserts into the only index; with several the body names it', async () => {
    expect((await call('/upsert', { vectors: [{ id: 'x', values: [1, 0] }] })).status).toBe(404);
    expect((await call('/indexes', { name: 'first', dimension: 2, metric: 'dotproduct' })).status).toBe(201);
    const only = await call('/upsert', {
      namespace: 'ns',
      vectors: [{ id: 'a', values: [1, 0], sparse_values: { indices: [3], values: [0.5] }, metadata: { k: 'v' } }],
    });
    expect(only).toMatchObject({ status: 200, body: { upsertedCount: 1 } });
    expect((await fetchIds('first', ['a'], 'ns'))['a']).toMatchObject({ values: [1, 0], sparseValues: { indices: [3], values: [0.5] }, metadata: { k: 'v' } });

    expect((await call('/indexes', { name: 'second', dimension: 3 })).status).toBe(201);
    const ambiguous = await call('/upsert', { vectors: [{ id: 'b', values: [1, 0] }] });
    expect(ambiguous.status).toBe(422);
    expect(ambiguous.body.error.details).toMatchObject({ field: 'index', reason: 'index_required' });
    expect((await call('/upsert', { index: 'second', vectors: [{ id: 'b', values: [0, 0, 1] }] })).body).toEqual({ upsertedCount: 1 });
    expect((await call('/upsert', { index: 'ghost', vectors: [{ id: 'b', values: [0, 0, 1] }] })).status).toBe(404);
    // The same path under an index's host (the spec's /upsert relative to an index's host).
    expect((await call('/indexes/second/upsert', { vectors: [{ id: 'c', values: [0, 1, 0] }] })).body).toEqual({ upsertedCount: 1 });
    expect(Object.keys(await fetchIds('second', ['b', 'c'])).sort()).toEqual(['b', 'c']);
  });

  it('query takes top_k (default 10), include_values, include_metadata and sparse_vector', async () => {
    const vectors = Array.from({ length: 12 }, (_, i) => ({ id: `v${String(i).padStart(2, '0')}`, values: [1, i / 10], metadata: { i } }));
    expect((await call('/indexes/first/upsert', { vectors })).status).toBe(200);
    const byDefault = await call('/indexes/first/query', { vector: [1, 0] });
    expect(byDefault.status).toBe(200);
    expect(byDefault.body.matches).toHaveLength(10);
    expect(byDefault.body.matches[0]).not.toHaveProperty('values');
    const snake = await call('/indexes/first/query', { vector: [1, 0], top_k: 2, include_values: true, include_metadata: true });
    expect(snake.body.matches).toHaveLength(2);
    expect(snake.body.matches[0]).toMatchObject({ values: expect.any(Array), metadata: { i: expect.any(Number) } });
    // Hybrid: the sparse part lifts the record whose sparse values match.
    await call('/indexes/first/upsert', {
      namespace: 'h',
      vectors: [
        { id: 'd', values: [1, 0], sparse_values: { indices: [5], values: [0.1] } },
        { id: 's', values: [0.5, 0], sparse_values: { indices: [7], values: [2] } },
      ],
    });
    const hybrid = await call('/indexes/first/query', { namespace: 'h', vector: [1, 0], top_k: 2, sparse_vector: { indices: [7], values: [1] } });
    expect(hybrid.body.matches.map((m: { id: string }) => m.id)).toEqual(['s', 'd']);
    // Both names with one value are that value.
    expect((await call('/indexes/first/query', { vector: [1, 0], top_k: 3, topK: 3, includeValues: false, include_values: false })).body.matches).toHaveLength(
      3,
    );
  });

  it('two names of one field with different values are 400, and nothing is written', async () => {
    const query = await call('/indexes/first/query', { vector: [1, 0], top_k: 2, topK: 3 });
    expect(query.status).toBe(400);
    expect(query.body.error).toMatchObject({ code: 'INVALID_QUERY', details: { reason: 'conflicting_fields', fields: ['topK', 'top_k'] } });
    const sparse = { indices: [1], values: [1] };
    const upsert = await call('/upsert', {
      index: 'first',
      vectors: [{ id: 'clash', values: [1, 1], sparseValues: sparse, sparse_values: { indices: [2], values: [1] } }],
    });
    expect(upsert.status).toBe(400);
    expect(upsert.body.error.details.fields).toEqual(['vectors.0.sparseValues', 'vectors.0.sparse_values']);
    expect(await fetchIds('first', ['clash'])).toEqual({});
    const update = await call('/indexes/first/vectors/update', {
      id: 'a',
      namespace: 'ns',
      sparseValues: sparse,
      sparse_values: { indices: [9], values: [9] },
    });
    expect(update.status).toBe(400);
    expect((await fetchIds('first', ['a'], 'ns'))['a'].sparseValues).toEqual({ indices: [3], values: [0.5] });
    // The snake_case name alone updates.
    expect((await call('/indexes/first/vectors/update', { id: 'a', namespace: 'ns', sparse_values: sparse })).body).toEqual({ matchedRecords: 1 });
    expect((await fetchIds('first', ['a'], 'ns'))['a'].sparseValues).toEqual(sparse);
  });
});

describe('index parameters pods, replicas, pod_type', () => {
  it('are accepted at the top level, kept in spec.pod and echoed by create, describe and list', async () => {
    const created = await call('/indexes', { name: 'pods', dimension: 2, pods: 2, replicas: 3, pod_type: 'p1.x2' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ pods: 2, replicas: 3, pod_type: 'p1.x2', spec: { pod: { pods: 2, replicas: 3, pod_type: 'p1.x2' } } });
    expect((await call('/indexes/pods')).body).toMatchObject({ pods: 2, replicas: 3, pod_type: 'p1.x2' });
    const listed = (await call('/indexes')).body.indexes;
    expect(listed.find((i: { name: string }) => i.name === 'pods')).toMatchObject({ pods: 2, replicas: 3, pod_type: 'p1.x2' });
    // A serverless index echoes the spec's defaults.
    expect(listed.find((i: { name: string }) => i.name === 'second')).toMatchObject({ pods: 1, replicas: 1, pod_type: 'p1.x1' });
  });

  it("the official client's pod spec is echoed the same way", async () => {
    const pc = new Pinecone({ apiKey: VECTOR_KEY, controllerHostUrl: server.baseUrl });
    await pc.createIndex({ name: 'podded', dimension: 2, spec: { pod: { environment: 'us-east1-gcp', podType: 'p2.x1', pods: 1, replicas: 2 } } });
    expect((await pc.describeIndex('podded')).spec).toMatchObject({ pod: { environment: 'us-east1-gcp', podType: 'p2.x1', replicas: 2 } });
    expect((await call('/indexes/podded')).body).toMatchObject({ pods: 1, replicas: 2, pod_type: 'p2.x1' });
  });

  it('refuses bad values and contradictions without creating the index', async () => {
    for (const body of [{ pods: 0 }, { replicas: 1.5 }, { pod_type: 'x9.huge' }, { pods: 1000 }]) {
      expect((await call('/indexes', { name: 'bad', dimension: 2, ...body })).status, JSON.stringify(body)).toBe(422);
    }
    const serverless = await call('/indexes', { name: 'bad', dimension: 2, replicas: 2, spec: { serverless: { cloud: 'aws', region: 'us-east-1' } } });
    expect(serverless.status).toBe(400);
    expect(serverless.body.error.details.reason).toBe('conflicting_fields');
    const twice = await call('/indexes', { name: 'bad', dimension: 2, replicas: 2, spec: { pod: { replicas: 3 } } });
    expect(twice.status).toBe(400);
    expect(twice.body.error.details.fields).toEqual(['replicas', 'spec.pod.replicas']);
    expect((await call('/indexes/bad')).status).toBe(404);
  });
});
