import { decode } from '@msgpack/msgpack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJsonExact, stringifyJson } from '../../core/json-exact.js';
import { bearer } from '../helpers/auth.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

/**
 * The text of a search answer (REST POST /api/v1/vectors/search, Pinecone POST /query) is written
 * at once (json-reply.ts), not by the reply serializer: it must be the text stringifyJson writes of
 * the answer object (key order, floats, string escapes, jsonb numbers kept exactly as PostgreSQL
 * sends them), with the same headers, and still re-encoded for an Accept asking for MessagePack.
 */
const VECTOR_KEY = 'answer-text-vector-key';
let server: TestServer;

const post = async (path: string, body: unknown, headers: Record<string, string>) => {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
};
const rest = (body: unknown, headers: Record<string, string> = {}) => post('/api/v1/vectors/search', body, { ...bearer(server.apiKey), ...headers });
const sql = async (text: string) => expect((await post('/api/v1/query', { sql: text }, bearer(server.apiKey))).status).toBe(200);

/** The text is what stringifyJson writes of the value it denotes (exact jsonb numbers kept as sent). */
const expectCanonical = (text: string): void => expect(stringifyJson(parseJsonExact(text))).toBe(text);

const expectJsonHeaders = (headers: Headers): void => {
  expect(headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(headers.get('vary')).toMatch(/accept/i);
  expect(headers.get('x-ratelimit-limit')).not.toBeNull();
};

// Metadata as JSON text: numbers in the forms jsonb keeps (1.50, a 20-digit integer), escapes, U+2028, nesting.
const METADATA_TEXT = '{"price": 1.50, "big": 12345678901234567890, "s": "é \\"q\\"\\n\\u2028 \\ud83d\\ude00", "n": null, "arr": [1.0, true, {"x": 1e2}]}';

beforeAll(async () => {
  server = await startTestServer({ env: { SVC_VECTOR_API_KEY: VECTOR_KEY } });
  await sql('CREATE TABLE docs (id TEXT PRIMARY KEY, embedding VECTOR(3), metadata JSONB)');
  await sql('CREATE INDEX docs_hnsw ON docs USING hnsw (embedding vector_cosine_ops)');
  await sql(`INSERT INTO docs VALUES ('a\\"b', '[0.1, 0.2, 0.3]', '${METADATA_TEXT}'), ('c', '[1e-7, -2.5, 2]', NULL), ('d', '[0.3, 0.2, 0.1]', '{}')`);
  await sql('CREATE TABLE plain (sku INT PRIMARY KEY, v VECTOR(2), name TEXT, price NUMERIC)');
  await sql("INSERT INTO plain VALUES (1, '[1, 0]', 'one', 1.50), (2, '[0.6, 0.8]', NULL, 2)");
  const created = await post(
    '/indexes',
    { name: 'texts', dimension: 3, metric: 'cosine', spec: { serverless: { cloud: 'aws', region: 'us-east-1' } } },
    { 'api-key': VECTOR_KEY },
  );
  expect(created.status).toBe(201);
  const vectors = [
    { id: 'p"1', values: [0.1, 0.2, 0.3], metadata: { tag: 'é\n', n: 1.5, list: ['a', 'b'] } },
    { id: 'p2', values: [0.3, 0.1, 0.2] },
  ];
  expect((await post('/indexes/texts/vectors/upsert', { vectors, namespace: 'n "s"' }, { 'api-key': VECTOR_KEY })).status).toBe(200);
});
afterAll(() => server?.close());

describe('vector search answer text', () => {
  it('REST: the text stringifyJson writes of { results, query_time_ms }, jsonb numbers exact, headers as before', async () => {
    for (const include of [false, true]) {
      const answer = await rest({ index: 'docs_hnsw', vector: [0.1, 0.2, 0.25], top_k: 3, include_metadata: include, include_vectors: include });
      expect(answer.status).toBe(200);
      expectJsonHeaders(answer.headers);
      const text = answer.bytes.toString('utf8');
      expectCanonical(text);
      const body = JSON.parse(text) as { results: Record<string, unknown>[] };
      expect(Object.keys(body)).toEqual(['results', 'query_time_ms']);
      expect(body.results.map((r) => r['id'])).toEqual(['a\\"b', 'd', 'c']);
      for (const r of body.results) expect(Object.keys(r)).toEqual(include ? ['id', 'score', 'distance', 'metadata', 'vector'] : ['id', 'score', 'distance']);
      if (include) {
        expect(text).toContain('"metadata":{"n":null,"s":"é \\"q\\"\\n\u2028 😀","arr":[1.0,true,{"x":100}],"big":12345678901234567890,"price":1.50}');
        expect(body.results[2]!['metadata']).toEqual({});
      }
    }
  });

  it('REST: a table without a metadata column answers its other columns as metadata, in the same text', async () => {
    const answer = await rest({ index: 'plain', vector: [1, 0.1], top_k: 2, include_metadata: true, metric: 'l2' });
    expect(answer.status).toBe(200);
    const text = answer.bytes.toString('utf8');
    expectCanonical(text);
    expect(text).toMatch(/^\{"results":\[\{"id":1,"score":[^,]+,"distance":[^,]+,"metadata":\{"name":"one","price":"1\.50"\}\},\{"id":2,/);
  });

  it('REST: each answer shape (metric, include flags) asked in turn, twice, answers its own columns and ranking', async () => {
    const first = new Map<string, string>();
    for (const round of [0, 1])
      for (const metric of [undefined, 'l2', 'inner_product'] as const)
        for (const include_metadata of [false, true])
          for (const include_vectors of [false, true]) {
            const answer = await rest({
              index: 'docs_hnsw',
              vector: [0.1, 0.2, 0.25],
              top_k: 3,
              include_metadata,
              include_vectors,
              ...(metric ? { metric } : {}),
            });
            expect(answer.status).toBe(200);
            const text = answer.bytes.toString('utf8').replace(/"query_time_ms":\d+/, '');
            const keys = ['id', 'score', 'distance', ...(include_metadata ? ['metadata'] : []), ...(include_vectors ? ['vector'] : [])];
            for (const r of (JSON.parse(`${text.slice(0, -1)}"x":0}`) as { results: object[] }).results) expect(Object.keys(r)).toEqual(keys);
            const shape = `${metric}/${include_metadata}/${include_vectors}`;
            if (round === 0) first.set(shape, text);
            else expect(text).toBe(first.get(shape));
          }
    // The metrics rank differently here (cosine against inner product of unnormalized vectors).
    expect(first.get('undefined/false/false')).not.toBe(first.get('inner_product/false/false'));
  });

  it('REST: Accept application/msgpack still re-encodes the written text', async () => {
    const body = { index: 'docs_hnsw', vector: [0.1, 0.2, 0.25], top_k: 3, include_vectors: true };
    const json = JSON.parse((await rest(body)).bytes.toString('utf8')) as { results: unknown };
    const packed = await rest(body, { accept: 'application/msgpack' });
    expect(packed.headers.get('content-type')).toBe('application/msgpack');
    expect((decode(packed.bytes) as { results: unknown }).results).toEqual(json.results);
  });

  it('Pinecone /query, hybrid (dotproduct): each match its record fields then its score, in the text stringifyJson writes', async () => {
    const headers = { 'api-key': VECTOR_KEY };
    const spec = { serverless: { cloud: 'aws', region: 'us-east-1' } };
    expect((await post('/indexes', { name: 'hybrid-text', dimension: 2, metric: 'dotproduct', spec }, headers)).status).toBe(201);
    const vectors = [
      { id: 'd', values: [1, 0], metadata: { k: 'é' } },
      { id: 's', values: [0.5, 0], sparseValues: { indices: [7], values: [2] } },
    ];
    expect((await post('/indexes/hybrid-text/vectors/upsert', { vectors }, headers)).status).toBe(200);
    for (const include of [false, true]) {
      const query = { vector: [1, 0], sparseVector: { indices: [7], values: [1] }, topK: 2, includeValues: include, includeMetadata: include };
      const answer = await post('/indexes/hybrid-text/query', query, headers);
      expect(answer.status).toBe(200);
      const text = answer.bytes.toString('utf8');
      expectCanonical(text);
      const body = JSON.parse(text) as { matches: Record<string, unknown>[] };
      // s: 0.5 dense + 2 sparse; d: 1 dense.
      expect(body.matches.map((m) => [m['id'], m['score']])).toEqual([
        ['s', 2.5],
        ['d', 1],
      ]);
      expect(body.matches.map((m) => Object.keys(m))).toEqual(
        include
          ? [
              ['id', 'values', 'sparseValues', 'score'],
              ['id', 'values', 'metadata', 'score'],
            ]
          : [
              ['id', 'score'],
              ['id', 'score'],
            ],
      );
    }
  });

  it('Pinecone /query: the text stringifyJson writes of { matches, namespace, usage }', async () => {
    for (const include of [false, true]) {
      const answer = await post(
        '/indexes/texts/query',
        { vector: [0.1, 0.2, 0.25], topK: 2, namespace: 'n "s"', includeValues: include, includeMetadata: include },
        { 'api-key': VECTOR_KEY },
      );
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(answer.headers.get('vary')).toMatch(/accept/i);
      const text = answer.bytes.toString('utf8');
      expectCanonical(text);
      const body = JSON.parse(text) as { matches: Record<string, unknown>[]; namespace: string; usage: unknown };
      expect(Object.keys(body)).toEqual(['matches', 'namespace', 'usage']);
      expect(body.namespace).toBe('n "s"');
      expect(body.usage).toEqual({ readUnits: 1 });
      expect(body.matches.map((m) => m['id'])).toEqual(['p"1', 'p2']);
      expect(Object.keys(body.matches[0]!)).toEqual(include ? ['id', 'values', 'metadata', 'score'] : ['id', 'score']);
      if (include) expect(body.matches[0]!['metadata']).toEqual({ tag: 'é\n', n: 1.5, list: ['a', 'b'] });
    }
  });
});
