import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Pinecone, type PineconeRecord } from '@pinecone-database/pinecone';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../bin/app.js';
import type { ServeHandle } from '../../bin/app-types.js';
import { resolveConfig } from '../../core/config.js';
import { bearer, newKey } from '../helpers/auth.js';

const VECTOR_KEY = 'vector-test-key';
let dataDir: string;
let handle: ServeHandle;
let baseUrl: string;

/** A server over our own data dir, so it can be stopped and started again on the same data. */
async function start(env: Record<string, string> = {}): Promise<void> {
  const config = resolveConfig({
    env: {
      SVC_DATA_DIR: dataDir,
      SVC_HTTP_PORT: '0',
      SVC_OPS_PORT: '0',
      SVC_HOST: '127.0.0.1',
      SVC_API_KEY: 'admin-key',
      SVC_VECTOR_API_KEY: VECTOR_KEY,
      ...env,
    },
  });
  handle = await startServer(config, pino({ level: 'silent' }));
  baseUrl = handle.httpUrl.replace(/\/$/, '');
}

/** A raw request to the vector protocol. */
async function raw(pathname: string, init: { method?: string; body?: unknown; key?: string | null } = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (init.key !== null) headers['api-key'] = init.key ?? VECTOR_KEY;
  const response = await fetch(`${baseUrl}${pathname}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) };
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'svcdb-pinecone-'));
  await start();
});
afterAll(async () => {
  await handle?.close('test done');
  await rm(dataDir, { recursive: true, force: true });
});

const records: PineconeRecord[] = [
  { id: 'a1', values: [1, 0, 0], metadata: { genre: 'news', year: 2020, tags: ['x', 'y'] } },
  { id: 'a2', values: [0.9, 0.1, 0], metadata: { genre: 'sport', year: 2021 } },
  { id: 'b1', values: [0, 1, 0], metadata: { genre: 'news', year: 2022, draft: true } },
  { id: 'c1', values: [0, 0, 1] },
];

describe('the official Pinecone client (8.x)', () => {
  it('manages indexes: create, describe, list, configure', async () => {
    const pc = new Pinecone({ apiKey: VECTOR_KEY, controllerHostUrl: baseUrl });
    const created = await pc.createIndex({ name: 'docs', dimension: 3, metric: 'cosine', spec: { serverless: { cloud: 'aws', region: 'us-east-1' } } });
    expect(created).toMatchObject({ name: 'docs', dimension: 3, metric: 'cosine', status: { ready: true, state: 'Ready' } });
    const described = await pc.describeIndex('docs');
    expect(described.host).toBe(`${baseUrl}/indexes/docs`);
    expect(described.spec).toMatchObject({ serverless: { cloud: 'aws', region: 'us-east-1' } });
    await pc.createIndex({ name: 'hybrid', dimension: 2, metric: 'dotproduct', spec: { serverless: { cloud: 'aws', region: 'us-east-1' } } });
    expect((await pc.listIndexes()).indexes?.map((i) => i.name)).toEqual(['docs', 'hybrid']);
    await expect(pc.createIndex({ name: 'docs', dimension: 3, spec: { serverless: { cloud: 'aws', region: 'us-east-1' } } })).rejects.toThrow(/already exists/);
    await expect(pc.describeIndex('ghost')).rejects.toMatchObject({ name: 'PineconeNotFoundError' });
    const configured = await pc.configureIndex({ name: 'hybrid', deletionProtection: 'enabled', tags: { team: 'search' } });
    expect(configured).toMatchObject({ deletionProtection: 'enabled', tags: { team: 'search' } });
    await expect(pc.deleteIndex('hybrid')).rejects.toThrow(/Deletion protection/);
    await pc.configureIndex({ name: 'hybrid', deletionProtection: 'disabled' });
  });

  it('PATCH refuses what it would not apply: a changed spec, an unknown field', async () => {
    const spec = { serverless: { cloud: 'aws', region: 'us-east-1' } };
    const moved = await raw('/indexes/docs', { method: 'PATCH', body: { spec: { pod: { replicas: 3, pod_type: 'p1.x2' } } } });
    expect(moved.status).toBe(422);
    expect(moved.body.error.code).toBe('VALIDATION_ERROR');
    expect(moved.body.error.message).toMatch(/spec cannot be changed/);
    expect((await raw('/indexes/docs', { method: 'PATCH', body: { embed: { model: 'x' } } })).status).toBe(422);
    // The same spec (any key order) changes nothing, so it is accepted with what is applied.
    const same = await raw('/indexes/docs', { method: 'PATCH', body: { spec: { serverless: { region: 'us-east-1', cloud: 'aws' } }, tags: { env: 'test' } } });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ spec, tags: { env: 'test' } });
    expect((await raw('/indexes/docs')).body.spec).toEqual(spec);
  });

  it('writes and reads records: upsert, query by vector and id with filters, fetch, update, list, stats, delete', async () => {
    const pc = new Pinecone({ apiKey: VECTOR_KEY, controllerHostUrl: baseUrl });
    const index = pc.index({ host: (await pc.describeIndex('docs')).host });
    await index.upsert({ records });
    await index.upsert({ records: [{ id: 'n1', values: [1, 1, 0], metadata: { genre: 'news' } }], namespace: 'other' });

    const nearest = await index.query({ vector: [1, 0, 0], topK: 2, includeMetadata: true, includeValues: true });
    expect(nearest.matches.map((m) => m.id)).toEqual(['a1', 'a2']);
    expect(nearest.matches[0]).toMatchObject({ id: 'a1', values: [1, 0, 0], metadata: { genre: 'news', year: 2020 } });
    expect(nearest.matches[0]!.score).toBeCloseTo(1, 6);

    const byId = await index.query({ id: 'b1', topK: 1 });
    expect(byId.matches.map((m) => m.id)).toEqual(['b1']);
    const filtered = await index.query({ vector: [1, 0, 0], topK: 10, filter: { genre: { $eq: 'news' }, year: { $gte: 2021 } } });
    expect(filtered.matches.map((m) => m.id)).toEqual(['b1']);
    const or = await index.query({ vector: [1, 0, 0], topK: 10, filter: { $or: [{ genre: 'sport' }, { tags: { $in: ['y'] } }] } });
    expect(or.matches.map((m) => m.id).sort()).toEqual(['a1', 'a2']);
    const nin = await index.query({ vector: [1, 0, 0], topK: 10, filter: { genre: { $nin: ['news'] } } });
    expect(nin.matches.map((m) => m.id).sort()).toEqual(['a2', 'c1']);
    const exists = await index.query({ vector: [1, 0, 0], topK: 10, filter: { draft: { $exists: true } } });
    expect(exists.matches.map((m) => m.id)).toEqual(['b1']);
    const other = await index.namespace('other').query({ vector: [1, 0, 0], topK: 10 });
    expect(other.matches.map((m) => m.id)).toEqual(['n1']);

    const fetched = await index.fetch({ ids: ['a1', 'c1', 'missing'] });
    expect(Object.keys(fetched.records).sort()).toEqual(['a1', 'c1']);
    expect(fetched.records['a1']).toMatchObject({ id: 'a1', values: [1, 0, 0], metadata: { genre: 'news' } });

    await index.update({ id: 'c1', metadata: { genre: 'opinion' }, values: [0, 0.5, 0.5] });
    await index.update({ id: 'a1', metadata: { year: 2019 } });
    const after = await index.fetch({ ids: ['c1', 'a1'] });
    expect(after.records['c1']).toMatchObject({ values: [0, 0.5, 0.5], metadata: { genre: 'opinion' } });
    expect(after.records['a1']!.metadata).toEqual({ genre: 'news', year: 2019, tags: ['x', 'y'] });

    const page1 = await index.listPaginated({ prefix: 'a', limit: 1 });
    expect(page1.vectors?.map((v) => v.id)).toEqual(['a1']);
    const page2 = await index.listPaginated({ prefix: 'a', limit: 1, paginationToken: page1.pagination!.next! });
    expect(page2.vectors?.map((v) => v.id)).toEqual(['a2']);
    expect(page2.pagination).toBeUndefined();

    const stats = await index.describeIndexStats();
    expect(stats).toMatchObject({ dimension: 3, totalRecordCount: 5, namespaces: { __default__: { recordCount: 4 }, other: { recordCount: 1 } } });

    await index.deleteOne({ id: 'a2' });
    await index.deleteMany({ filter: { genre: { $eq: 'opinion' } } });
    expect(Object.keys((await index.fetch({ ids: ['a1', 'a2', 'c1'] })).records)).toEqual(['a1']);
    await index.namespace('other').deleteAll();
    expect((await index.describeIndexStats()).namespaces).toEqual({ __default__: { recordCount: 2 } });
  });

  it('hybrid search on a dotproduct index: dense dot + sparse dot', async () => {
    const pc = new Pinecone({ apiKey: VECTOR_KEY, controllerHostUrl: baseUrl });
    const index = pc.index({ host: (await pc.describeIndex('hybrid')).host });
    await index.upsert({
      records: [
        { id: 'd', values: [1, 0], sparseValues: { indices: [5], values: [0.1] } },
        { id: 's', values: [0.5, 0], sparseValues: { indices: [7], values: [2] } },
      ],
    });
    const dense = await index.query({ vector: [1, 0], topK: 2 });
    expect(dense.matches.map((m) => [m.id, m.score])).toEqual([
      ['d', 1],
      ['s', 0.5],
    ]);
    const hybrid = await index.query({ vector: [1, 0], sparseVector: { indices: [7], values: [1] }, topK: 2, includeValues: true });
    expect(hybrid.matches.map((m) => [m.id, m.score])).toEqual([
      ['s', 2.5],
      ['d', 1],
    ]);
    expect(hybrid.matches[0]!.sparseValues).toEqual({ indices: [7], values: [2] });
    // Without includeValues the stored sparse values still rescore, and neither values nor sparseValues are shown.
    const lean = await index.query({ vector: [1, 0], sparseVector: { indices: [7], values: [1] }, topK: 2 });
    expect(lean.matches.map((m) => [m.id, m.score])).toEqual([
      ['s', 2.5],
      ['d', 1],
    ]);
    expect(lean.matches[0]!.sparseValues).toBeUndefined();
    expect(lean.matches[0]!.values ?? []).toEqual([]);
  });

  it('keeps indexes and records across a restart on the same data dir, and drops an index', async () => {
    await handle.close('restart');
    await start();
    const pc = new Pinecone({ apiKey: VECTOR_KEY, controllerHostUrl: baseUrl });
    const described = await pc.describeIndex('docs');
    expect(described).toMatchObject({ dimension: 3, metric: 'cosine', host: `${baseUrl}/indexes/docs`, spec: { serverless: { region: 'us-east-1' } } });
    const index = pc.index({ host: described.host });
    expect(Object.keys((await index.fetch({ ids: ['a1', 'b1'] })).records).sort()).toEqual(['a1', 'b1']);
    expect((await index.query({ vector: [0, 1, 0], topK: 1 })).matches[0]!.id).toBe('b1');
    await pc.deleteIndex('hybrid');
    expect((await pc.listIndexes()).indexes?.map((i) => i.name)).toEqual(['docs']);
  });
});

describe('the vector protocol over HTTP', () => {
  it('authenticates with Api-Key: the vector key or an svcdb API key; errors carry a top-level message', async () => {
    const none = await raw('/indexes', { key: null });
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ status: 401, error: { code: 'AUTHENTICATION_REQUIRED' } });
    expect(typeof none.body.message).toBe('string');
    expect((await raw('/indexes', { key: 'wrong' })).status).toBe(401);
    const { key } = await newKey(dataDir, { role: 'read_write' });
    await expect.poll(async () => (await raw('/indexes', { key })).status, { timeout: 5000 }).toBe(200);
    expect((await fetch(`${baseUrl}/indexes`, { headers: bearer('admin-key') })).status).toBe(200);
    // Keys verified before are known at once (no hash per request): each answer still decided by its own key.
    for (const [k, status] of [
      [VECTOR_KEY, 200],
      ['wrong', 401],
      [VECTOR_KEY, 200],
      [key, 200],
      [`${VECTOR_KEY}x`, 401],
      [key, 200],
      [null, 401],
    ] as const) {
      const answer = await fetch(`${baseUrl}/indexes`, { headers: k === null ? {} : { 'api-key': k } });
      expect(answer.status).toBe(status);
      expect(answer.headers.get('x-ratelimit-limit')).not.toBeNull();
      await answer.text();
    }
  });

  it('lets a read_only key query, fetch and describe, and refuses its writes with 403', async () => {
    const { key } = await newKey(dataDir, { role: 'read_only' });
    await expect.poll(async () => (await raw('/indexes/docs/query', { key, body: { topK: 1, vector: [1, 0, 0] } })).status, { timeout: 5000 }).toBe(200);
    expect((await raw('/indexes/docs/vectors/fetch?ids=a1', { key })).status).toBe(200);
    expect((await raw('/indexes/docs/describe_index_stats', { key, body: {} })).status).toBe(200);
    const write = await raw('/indexes/docs/vectors/upsert', { key, body: { vectors: [{ id: 'ro', values: [1, 2, 3] }] } });
    expect(write.body).toMatchObject({ status: 403, error: { code: 'AUTHORIZATION_DENIED' } });
    expect((await raw('/indexes', { key, body: { name: 'ro-index', dimension: 2 } })).status).toBe(403);
  });

  it('answers JSON bodies and clear 4xx for bad requests and limits', async () => {
    const bad = await raw('/indexes', { body: { name: 'Bad_Name', dimension: 3 } });
    expect(bad.status).toBe(422);
    expect(bad.body.message).toContain('name');
    expect((await raw('/indexes', { body: { name: 'huge', dimension: 30_000 } })).body.error.code).toBe('LIMIT_EXCEEDED');
    expect((await raw('/indexes/docs/vectors/upsert', { body: { vectors: [{ id: 'x', values: [1, 2] }] } })).body).toMatchObject({
      status: 422,
      error: { code: 'VALIDATION_ERROR' },
    });
    const tooMany = await raw('/indexes/docs/vectors/upsert', {
      body: { vectors: Array.from({ length: 1001 }, (_, i) => ({ id: `v${i}`, values: [1, 2, 3] })) },
    });
    expect(tooMany.status).toBe(422);
    const fat = await raw('/indexes/docs/vectors/upsert', { body: { vectors: [{ id: 'x', values: [1, 2, 3], metadata: { t: 'x'.repeat(41_000) } }] } });
    expect(fat.body.error.code).toBe('LIMIT_EXCEEDED');
    const ids = Array.from({ length: 101 }, (_, i) => `ids=i${i}`).join('&');
    expect((await raw(`/indexes/docs/vectors/fetch?${ids}`)).status).toBe(400);
    expect((await raw('/indexes/docs/query', { body: { topK: 1, vector: [1, 0, 0], filter: { genre: { $regex: 'x' } } } })).body.error.code).toBe(
      'VALIDATION_ERROR',
    );
    expect((await raw('/indexes/docs/query', { body: { topK: 1, vector: [1, 0, 0], sparseVector: { indices: [1], values: [1] } } })).status).toBe(422);
    expect((await raw('/indexes/docs/vectors/delete', { body: {} })).status).toBe(400);
    expect((await raw('/indexes/ghost/query', { body: { topK: 1, vector: [1] } })).status).toBe(404);
  });

  it('binds filter values as parameters (quotes and SQL in values are data)', async () => {
    await raw('/indexes/docs/vectors/upsert', { body: { vectors: [{ id: 'q', values: [1, 1, 1], metadata: { genre: "it's'; DROP TABLE x; --" } }] } });
    const r = await raw('/indexes/docs/query', { body: { topK: 5, vector: [1, 1, 1], filter: { genre: "it's'; DROP TABLE x; --" } } });
    expect(r.body.matches.map((m: { id: string }) => m.id)).toEqual(['q']);
    const dry = await raw('/indexes/docs/vectors/update', { body: { filter: { genre: { $eq: 'news' } }, setMetadata: { seen: true }, dryRun: true } });
    expect(dry.body).toEqual({ matchedRecords: 2 });
    const stats = await raw('/indexes/docs/describe_index_stats', { body: { filter: { genre: 'news' } } });
    expect(stats.body).toMatchObject({ totalVectorCount: 2, namespaces: { __default__: { vectorCount: 2 } }, dimension: 3, metric: 'cosine' });
    const set = await raw('/indexes/docs/vectors/update', { body: { filter: { genre: 'news' }, setMetadata: { seen: true } } });
    expect(set.body).toEqual({ matchedRecords: 2 });
    const seen = await raw('/indexes/docs/query', { body: { topK: 10, vector: [1, 1, 1], filter: { seen: true } } });
    expect(seen.body.matches.map((m: { id: string }) => m.id).sort()).toEqual(['a1', 'b1']);
    const deleted = await raw('/indexes/docs', { method: 'DELETE', body: undefined, key: 'nope' });
    expect(deleted.status).toBe(401);
  });
});

/** A port that was free a moment ago. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

describe('SVC_VECTOR_PORT', () => {
  it('serves the protocol on its own listener when it differs from the HTTP port', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'svcdb-pinecone-port-'));
    const port = await freePort();
    const config = resolveConfig({
      env: { SVC_DATA_DIR: dir, SVC_HTTP_PORT: '0', SVC_OPS_PORT: '0', SVC_HOST: '127.0.0.1', SVC_API_KEY: 'admin-key', SVC_VECTOR_PORT: String(port) },
    });
    const own = await startServer(config, pino({ level: 'silent' }));
    try {
      expect(own.vectorUrl).toBe(`http://127.0.0.1:${port}`);
      const pc = new Pinecone({ apiKey: 'admin-key', controllerHostUrl: own.vectorUrl! });
      await pc.createIndex({ name: 'apart', dimension: 2, spec: { serverless: { cloud: 'aws', region: 'us-east-1' } } });
      const created = await pc.describeIndex('apart');
      expect(created.host).toBe(`http://127.0.0.1:${port}/indexes/apart`);
      await pc.index({ host: created.host }).upsert({ records: [{ id: 'p', values: [1, 2] }] });
      const onHttp = await fetch(`${own.httpUrl.replace(/\/$/, '')}/indexes`, { headers: { 'api-key': 'admin-key' } });
      expect(onHttp.status).toBe(404);
      const rows = await fetch(`${own.httpUrl.replace(/\/$/, '')}/api/v1/query`, {
        method: 'POST',
        headers: { authorization: 'Bearer admin-key', 'content-type': 'application/json' },
        body: JSON.stringify({ sql: 'SELECT id FROM "pinecone_apart"' }),
      });
      expect(((await rows.json()) as { data: unknown }).data).toEqual([{ id: 'p' }]);
    } finally {
      await own.close('test done');
      await rm(dir, { recursive: true, force: true });
    }
  });
});
