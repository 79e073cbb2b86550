/**
 * Vector search through SQL (hnsw index scan) against raw hnswlib-node in the same run: recall@10
 * and QPS at ef_search 40/100/200, filtered (10% selectivity) recall, and upsert throughput
 * (durable INSERTs through SQL vs raw addPoint). Env: BENCH_VECTORS (default 100,000),
 * BENCH_QUERIES (default 100) distinct queries, BENCH_QUERY_ROUNDS (default 10) passes over them.
 * Vectors are embedding-like: a 16-dim latent mapped to 128 dims + noise.
 *
 * Fair by construction: at each ef both sides get the same warm-up (WARMUP_QUERIES queries) and
 * the same timed sample (BENCH_QUERIES x BENCH_QUERY_ROUNDS queries), and which side goes first
 * alternates from one ef to the next. Recall is read from the first pass.
 */
import { silentLogger } from '../core/logger.js';
import { SqlEngine, typeSystem } from '../query/index.js';
import { openStack, tempDir } from '../test/helpers/stack.js';
import { DIMS, embeddings, exactTopK, hnswlib, K, recallOf } from './lib/embeddings.js';
import { printBenchResult, progress, round2 } from './lib/print-result.js';

const N = Number(process.env.BENCH_VECTORS ?? 100_000);
const Q = Number(process.env.BENCH_QUERIES ?? 100);
const ROUNDS = Number(process.env.BENCH_QUERY_ROUNDS ?? 10);
const WARMUP_QUERIES = 20;
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

/** Warm-up, then ROUNDS timed passes over the queries: queries/s and the first pass's answers. */
async function timed(search: (q: Float32Array) => number[] | Promise<number[]>): Promise<{ qps: number; got: number[][] }> {
  for (let i = 0; i < WARMUP_QUERIES; i++) await search(queries[i % Q]!);
  const got: number[][] = [];
  const started = performance.now();
  for (let round = 0; round < ROUNDS; round++) {
    for (const q of queries) {
      const ids = await search(q);
      if (round === 0) got.push(ids);
    }
  }
  return { qps: Math.round((Q * ROUNDS) / ((performance.now() - started) / 1000)), got };
}

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
    await sql(
      `INSERT INTO items VALUES ${values}`,
      chunk.flatMap((v, j) => [at + j, category(at + j), literal(v)]),
    );
  }
  const sqlInsertPerS = Math.round(N / ((performance.now() - t0) / 1000));
  const result: Record<string, number> = {
    vectors: N,
    dims: DIMS,
    queries: Q,
    queryRounds: ROUNDS,
    warmupQueries: WARMUP_QUERIES,
    sql_insert_vectors_per_s: sqlInsertPerS,
    raw_add_vectors_per_s: rawAddPerS,
  };
  const sqlIds = async (text: string, q: Float32Array, ef: number): Promise<number[]> => (await sql(text, [literal(q)], ef)).rows.map((r) => Number(r.id));
  const cases = [
    ...[40, 100, 200].map((ef) => ({
      name: `ef${ef}`,
      ef,
      truth,
      sql: (q: Float32Array) => sqlIds('SELECT id FROM items ORDER BY embedding <=> $1 LIMIT 10', q, ef),
      raw: (q: Float32Array) => raw.searchKnn(Array.from(q), K).neighbors,
    })),
    {
      name: 'filtered10_ef40',
      ef: 40,
      truth: truthFiltered,
      sql: (q: Float32Array) => sqlIds('SELECT id FROM items WHERE cat < 10 ORDER BY embedding <=> $1 LIMIT 10', q, 40),
      raw: (q: Float32Array) => raw.searchKnn(Array.from(q), K, (label) => category(label) < 10).neighbors,
    },
  ];
  for (const [i, c] of cases.entries()) {
    progress(`search ${c.name} (${i % 2 === 0 ? 'SQL' : 'raw'} first)`);
    raw.setEf(c.ef);
    const sides = i % 2 === 0 ? (['sql', 'raw'] as const) : (['raw', 'sql'] as const);
    for (const side of sides) {
      const { qps, got } = await timed(side === 'sql' ? c.sql : c.raw);
      result[`${side}_qps_${c.name}`] = qps;
      result[`${side}_recall_${c.name}`] = recallOf(got, c.truth);
    }
  }
  printBenchResult({
    bench: 'vector-hnsw',
    ...result,
    insert_ratio: round2(sqlInsertPerS / rawAddPerS),
    qps_ratio_ef40: round2(result.sql_qps_ef40! / result.raw_qps_ef40!),
  });
} finally {
  await stack.close();
  await remove();
}
