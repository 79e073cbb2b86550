/**
 * Vector search through SQL (hnsw index scan) against raw hnswlib-node in the same run: recall@10
 * and QPS at ef_search 40/100/200, filtered (10% selectivity) recall, and upsert throughput
 * (durable INSERTs through SQL vs raw addPoint). Env: BENCH_VECTORS (default 100,000),
 * BENCH_QUERIES (default 100). Vectors are embedding-like: a 16-dim latent mapped to 128 dims + noise.
 */
import { silentLogger } from '../core/logger.js';
import { SqlEngine, typeSystem } from '../query/index.js';
import { openStack, tempDir } from '../test/helpers/stack.js';
import { DIMS, embeddings, exactTopK, hnswlib, K, recallOf } from './lib/embeddings.js';
import { printBenchResult, progress, round2 } from './lib/print-result.js';

const N = Number(process.env.BENCH_VECTORS ?? 100_000);
const Q = Number(process.env.BENCH_QUERIES ?? 100);
const ROWS_PER_INSERT = 500;
const M = 16;
const EF_CONSTRUCTION = 64;

const literal = (v: Float32Array): string => `[${Array.from(v, (x) => x.toPrecision(7)).join(',')}]`;

const data = embeddings(N + Q);
const rows = data.slice(0, N);
const queries = data.slice(N);
const category = (i: number): number => i % 100;
progress(`ground truth for ${Q} queries over ${N} vectors`);
const truth = queries.map((q) => exactTopK(rows, q, () => true));
const truthFiltered = queries.map((q) => exactTopK(rows, q, (i) => category(i) < 10));

// Raw hnswlib baseline.
const raw = new hnswlib.HierarchicalNSW('cosine', DIMS);
raw.initIndex({ maxElements: N, m: M, efConstruction: EF_CONSTRUCTION, randomSeed: 100 });
progress('raw addPoint');
let t0 = performance.now();
for (let i = 0; i < N; i++) raw.addPoint(Array.from(rows[i]!), i);
const rawAddPerS = Math.round(N / ((performance.now() - t0) / 1000));

const { dir, remove } = await tempDir('svcdb-bench-vec-');
const stack = await openStack(dir, { segmentSizeBytesMax: 64 * 1024 * 1024, readBatchBytesMax: 1024 * 1024 });
const engine = new SqlEngine({ projections: stack.projections, types: typeSystem, logger: silentLogger });
const sql = (text: string, params: unknown[] = [], efSearch?: number) =>
  engine.execute(text, { params, timeoutMs: 600_000, maxRows: 10_000, tenant: 'default', ...(efSearch ? { efSearch } : {}) });
try {
  await sql(`CREATE TABLE items (id INT PRIMARY KEY, cat INT, embedding VECTOR(${DIMS}))`);
  await sql(`CREATE INDEX items_hnsw ON items USING hnsw (embedding vector_cosine_ops) WITH (m = ${M}, ef_construction = ${EF_CONSTRUCTION})`);
  progress('SQL inserts');
  t0 = performance.now();
  for (let at = 0; at < N; at += ROWS_PER_INSERT) {
    const chunk = rows.slice(at, at + ROWS_PER_INSERT);
    const values = chunk.map((_v, j) => `($${3 * j + 1}, $${3 * j + 2}, $${3 * j + 3})`).join(',');
    await sql(`INSERT INTO items VALUES ${values}`, chunk.flatMap((v, j) => [at + j, category(at + j), literal(v)]));
  }
  const sqlInsertPerS = Math.round(N / ((performance.now() - t0) / 1000));
  for (const q of queries.slice(0, 10)) await sql('SELECT id FROM items ORDER BY embedding <=> $1 LIMIT 10', [literal(q)]);
  const result: Record<string, number> = { vectors: N, dims: DIMS, queries: Q, sql_insert_vectors_per_s: sqlInsertPerS, raw_add_vectors_per_s: rawAddPerS };
  for (const ef of [40, 100, 200]) {
    progress(`search ef ${ef}`);
    t0 = performance.now();
    const got: number[][] = [];
    for (const q of queries) got.push((await sql('SELECT id FROM items ORDER BY embedding <=> $1 LIMIT 10', [literal(q)], ef)).rows.map((r) => Number(r.id)));
    result[`sql_qps_ef${ef}`] = Math.round(Q / ((performance.now() - t0) / 1000));
    result[`sql_recall_ef${ef}`] = recallOf(got, truth);
    raw.setEf(ef);
    t0 = performance.now();
    const rawGot = queries.map((q) => raw.searchKnn(Array.from(q), K).neighbors);
    result[`raw_qps_ef${ef}`] = Math.round(Q / ((performance.now() - t0) / 1000));
    result[`raw_recall_ef${ef}`] = recallOf(rawGot, truth);
  }
  progress('filtered search (10%)');
  t0 = performance.now();
  const filtered: number[][] = [];
  for (const q of queries) filtered.push((await sql('SELECT id FROM items WHERE cat < 10 ORDER BY embedding <=> $1 LIMIT 10', [literal(q)])).rows.map((r) => Number(r.id)));
  result.sql_filtered10_qps_ef40 = Math.round(Q / ((performance.now() - t0) / 1000));
  result.sql_filtered10_recall_ef40 = recallOf(filtered, truthFiltered);
  raw.setEf(40);
  t0 = performance.now();
  const rawFiltered = queries.map((q) => raw.searchKnn(Array.from(q), K, (label) => category(label) < 10).neighbors);
  result.raw_filtered10_qps_ef40 = Math.round(Q / ((performance.now() - t0) / 1000));
  result.raw_filtered10_recall_ef40 = recallOf(rawFiltered, truthFiltered);
  printBenchResult({ bench: 'vector-hnsw', ...result, insert_ratio: round2(sqlInsertPerS / rawAddPerS), qps_ratio_ef40: round2(result.sql_qps_ef40! / result.raw_qps_ef40!) });
} finally {
  await stack.close();
  await remove();
}
