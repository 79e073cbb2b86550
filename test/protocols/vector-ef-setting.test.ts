import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../bin/app.js';
import type { ServeHandle } from '../../bin/app-types.js';
import { resolveConfig } from '../../core/config.js';
import { seededRandom } from '../helpers/random.js';

const ADMIN_KEY = 'admin-key';
const VECTOR_KEY = 'vector-key';
const DIMS = 32;
const ROWS = 2000;
const QUERIES = 15;

/** Uniform random vectors (mulberry32, seeded): hard for a graph search, so the beam shows in the answers. */
function randomVectors(count: number, seed: number): number[][] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => Array.from({ length: DIMS }, () => random() - 0.5));
}

let dataDir: string;
let handle: ServeHandle | undefined;
let baseUrl: string;

async function start(efSearch: number): Promise<void> {
  const env = {
    SVC_DATA_DIR: dataDir,
    SVC_HTTP_PORT: '0',
    SVC_OPS_PORT: '0',
    SVC_HOST: '127.0.0.1',
    SVC_API_KEY: ADMIN_KEY,
    SVC_VECTOR_API_KEY: VECTOR_KEY,
    SVC_VECTOR_EF_SEARCH: String(efSearch),
  };
  handle = await startServer(resolveConfig({ env }), pino({ level: 'silent' }));
  baseUrl = handle.httpUrl.replace(/\/$/, '');
}

async function post(pathname: string, body: unknown, headers: Record<string, string>): Promise<Record<string, unknown>> {
  const response = await fetch(`${baseUrl}${pathname}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as Record<string, unknown>;
  expect(response.status, JSON.stringify(answer)).toBeLessThan(300);
  return answer;
}

const pinecone = { 'api-key': VECTOR_KEY };
const rest = { authorization: `Bearer ${ADMIN_KEY}` };
const queries = randomVectors(QUERIES, 99);

/** Ids of the vector protocol's /query (no ef field: the server's SVC_VECTOR_EF_SEARCH). */
async function viaQuery(vector: number[]): Promise<string[]> {
  const answer = await post('/indexes/rand/query', { vector, topK: 10 }, pinecone);
  return (answer.matches as { id: string }[]).map((m) => m.id);
}

/** Ids of POST /api/v1/vectors/search over the same index and table, with an explicit ef_search (or none). */
async function viaRest(vector: number[], efSearch?: number): Promise<string[]> {
  const answer = await post('/api/v1/vectors/search', { index: 'pinecone_rand_cosine', vector, top_k: 10, ...(efSearch ? { ef_search: efSearch } : {}) }, rest);
  return (answer.results as { id: string }[]).map((r) => String(r.id));
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'svcdb-ef-setting-'));
  await start(1);
  await post('/indexes', { name: 'rand', dimension: DIMS, metric: 'cosine', spec: { serverless: { cloud: 'aws', region: 'us-east-1' } } }, pinecone);
  const vectors = randomVectors(ROWS, 7);
  for (let at = 0; at < ROWS; at += 500) {
    await post('/indexes/rand/vectors/upsert', { vectors: vectors.slice(at, at + 500).map((values, i) => ({ id: `v${at + i}`, values })) }, pinecone);
  }
});
afterAll(async () => {
  await handle?.close('test done');
  await rm(dataDir, { recursive: true, force: true });
});

describe('SVC_VECTOR_EF_SEARCH: the search beam of queries that name none', () => {
  it('is what the vector protocol /query and REST without ef_search search with', async () => {
    // At setting 1 the beam is k (10); at 400 nearly exhaustive. The same graph answers both ways.
    const narrow: string[][] = [];
    for (const q of queries) {
      const answer = await viaQuery(q);
      expect(answer).toEqual(await viaRest(q, 10));
      expect(await viaRest(q)).toEqual(answer);
      narrow.push(answer);
    }
    await handle!.close('restart with another beam');
    await start(400);
    let differing = 0;
    for (const [i, q] of queries.entries()) {
      const answer = await viaQuery(q);
      expect(answer).toEqual(await viaRest(q, 400));
      expect(await viaRest(q)).toEqual(answer);
      if (JSON.stringify(answer) !== JSON.stringify(narrow[i])) differing += 1;
    }
    // Uniform random vectors in 32 dimensions: a beam of 10 misses neighbours a beam of 400 finds.
    expect(differing).toBeGreaterThan(0);
  });

  it('refuses a value outside 1..1000 at start', () => {
    expect(() => resolveConfig({ env: { SVC_VECTOR_EF_SEARCH: '0' } })).toThrow(/SVC_VECTOR_EF_SEARCH|vectorEfSearchDefault/);
    expect(() => resolveConfig({ env: { SVC_VECTOR_EF_SEARCH: '1001' } })).toThrow(/SVC_VECTOR_EF_SEARCH|vectorEfSearchDefault/);
  });
});
