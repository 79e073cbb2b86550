import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/logger.js';
import { SqlEngine, TxnManager, typeSystem } from '../../query/index.js';
import { seededRandom as rng } from '../helpers/random.js';
import { expectGolden } from '../helpers/golden.js';
import { openSql, type SqlHarness } from './helpers.js';

const GOLDEN_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'explain');
const DIMS = 16;
const ROWS = 2000;

/** Embedding-like vectors: a 4-dimensional latent mapped up through a fixed matrix, plus noise. */
function embeddings(count: number, seed: number): number[][] {
  const random = rng(seed);
  const gauss = (): number => Math.sqrt(-2 * Math.log(random() + 1e-12)) * Math.cos(2 * Math.PI * random());
  const basis = Array.from({ length: 4 }, () => Array.from({ length: DIMS }, gauss));
  return Array.from({ length: count }, () => {
    const latent = basis.map(() => gauss());
    return Array.from({ length: DIMS }, (_v, d) => latent.reduce((s, z, i) => s + z * basis[i]![d]!, 0) + 0.3 * gauss());
  });
}

const lit = (v: readonly number[]): string => `[${v.map((x) => x.toFixed(5)).join(',')}]`;

describe('SQL over hnsw indexes', () => {
  let h: SqlHarness;
  const vectors = embeddings(ROWS + 20, 7);
  const queries = vectors.slice(ROWS).map(lit);
  const ids = async (sql: string, params: unknown[], efSearch?: number): Promise<number[]> =>
    (await h.engine.execute(sql, { params, timeoutMs: 30_000, maxRows: 10_000, tenant: 'default', ...(efSearch ? { efSearch } : {}) })).rows.map((r) =>
      Number(r.id),
    );

  beforeAll(async () => {
    h = await openSql();
    await h.q(`CREATE TABLE items (id INT PRIMARY KEY, cat INT, embedding VECTOR(${DIMS}))`);
    for (let at = 0; at < ROWS; at += 500) {
      const values = vectors
        .slice(at, at + 500)
        .map((v, i) => `(${at + i + 1}, ${(at + i) % 100}, '${lit(v)}')`)
        .join(', ');
      await h.q(`INSERT INTO items VALUES ${values}`);
    }
    await h.q('CREATE INDEX items_hnsw ON items USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)');
    await h.q('CREATE INDEX items_l2 ON items USING hnsw (embedding vector_l2_ops)');
  });
  afterAll(async () => {
    await h.close();
  });

  it('plans an index scan for a matching metric, and an exact scan otherwise (golden EXPLAIN)', async () => {
    const cases: Record<string, string> = {
      'vector-index-scan': 'SELECT id FROM items ORDER BY embedding <=> $1 LIMIT 10',
      'vector-index-scan-filter': 'SELECT id, embedding <-> $1 AS d FROM items WHERE cat < 10 ORDER BY d LIMIT 5',
      'vector-no-index': 'SELECT id FROM items ORDER BY embedding <#> $1 LIMIT 10',
    };
    for (const [name, sql] of Object.entries(cases)) {
      const { text } = await h.engine.explain(sql, { format: 'text', params: [queries[0]] });
      const file = path.join(GOLDEN_DIR, `${name}.txt`);
      const body = `-- ${sql}\n${text!}\n`;
      await expectGolden(file, body);
    }
  });

  it('returns exact distances and recall >= 0.95 at ef_search 100', async () => {
    let hit = 0;
    for (const q of queries) {
      const exact = await ids(`SELECT id FROM items ORDER BY (embedding <=> $1) + 0 LIMIT 10`, [q]);
      const rows = (
        await h.engine.execute('SELECT id, embedding <=> $1 AS d FROM items ORDER BY embedding <=> $1 LIMIT 10', {
          params: [q],
          timeoutMs: 30_000,
          maxRows: 100,
          tenant: 'default',
          efSearch: 100,
        })
      ).rows;
      expect(rows).toHaveLength(10);
      for (let i = 1; i < rows.length; i++) expect(Number(rows[i]!.d)).toBeGreaterThanOrEqual(Number(rows[i - 1]!.d));
      const check = await h.rows('SELECT embedding <=> $1 AS d FROM items WHERE id = $2', [q, rows[0]!.id]);
      expect(rows[0]!.d).toBe(check[0]!.d);
      hit += rows.filter((r) => exact.includes(Number(r.id))).length;
    }
    expect(hit / (queries.length * 10)).toBeGreaterThanOrEqual(0.95);
  });

  it('returns k rows that match a filter at 1%, 10% and 50% selectivity', async () => {
    for (const [cut, label] of [
      [1, '1%'],
      [10, '10%'],
      [50, '50%'],
    ] as const) {
      let hit = 0;
      for (const q of queries.slice(0, 10)) {
        const got = await ids(`SELECT id FROM items WHERE cat + 0 < ${cut} ORDER BY embedding <-> $1 LIMIT 10`, [q]);
        const exact = await ids(`SELECT id FROM items WHERE cat + 0 < ${cut} ORDER BY (embedding <-> $1) + 0 LIMIT 10`, [q]);
        expect(got, label).toHaveLength(10);
        expect(
          got.every((id) => (id - 1) % 100 < cut),
          label,
        ).toBe(true);
        hit += got.filter((id) => exact.includes(id)).length;
      }
      expect(hit / 100, label).toBeGreaterThanOrEqual(0.9);
    }
  });

  it('sees updates and deletes, and falls back to an exact scan in a transaction that changed the table', async () => {
    const q = queries[1]!;
    const [first] = await ids('SELECT id FROM items ORDER BY embedding <=> $1 LIMIT 1', [q]);
    await h.q('DELETE FROM items WHERE id = $1', [first]);
    expect(await ids('SELECT id FROM items ORDER BY embedding <=> $1 LIMIT 5', [q])).not.toContain(first);
    await h.q('UPDATE items SET embedding = $1 WHERE id = 7', [q]);
    expect((await ids('SELECT id FROM items ORDER BY embedding <=> $1 LIMIT 1', [q]))[0]).toBe(7);
    // An engine built on a transaction manager (as the server's), over the same projections: the batch is one transaction.
    const manager = new TxnManager({
      projections: h.stack.projections,
      logger: silentLogger,
      limits: { transactionTimeoutMsDefault: 10_000, transactionTimeoutMsMax: 10_000, transactionsOpenMax: 4, sqlDmlRowsMax: 1000 },
    });
    const engine = new SqlEngine({ projections: h.stack.projections, types: typeSystem, logger: silentLogger, transactions: manager });
    const sql = `BEGIN; INSERT INTO items VALUES (99999, 1, $1); SELECT id FROM items ORDER BY embedding <=> $1 LIMIT 2; ROLLBACK`;
    const inTxn = await engine.execute(sql, { params: [q], timeoutMs: 30_000, maxRows: 10_000, tenant: 'default' }).finally(() => manager.close());
    expect(inTxn.rows.map((r) => Number(r.id)).sort()).toEqual([7, 99999]);
    expect(await ids('SELECT id FROM items ORDER BY embedding <=> $1 LIMIT 2', [q])).not.toContain(99999);
  });

  it('returns rows with NULL vectors last when the index has fewer than k rows, like the exact scan', async () => {
    await h.q('CREATE TABLE few (id INT PRIMARY KEY, embedding VECTOR(2))');
    await h.q("INSERT INTO few VALUES (1, '[1,0]'), (2, NULL), (3, '[0,1]')");
    await h.q('CREATE INDEX few_hnsw ON few USING hnsw (embedding vector_l2_ops)');
    expect((await h.rows("SELECT id FROM few ORDER BY embedding <-> '[1,0.1]' LIMIT 3")).map((r) => Number(r.id))).toEqual([1, 3, 2]);
    expect((await h.rows("SELECT id FROM few ORDER BY embedding <-> '[1,0.1]' LIMIT 1 OFFSET 1")).map((r) => Number(r.id))).toEqual([3]);
  });

  it('serves <#> from a vector_ip_ops index, in the exact order', async () => {
    await h.q('CREATE TABLE ip (id INT PRIMARY KEY, embedding VECTOR(3))');
    const values = Array.from({ length: 200 }, (_v, i) => `(${i}, '[${(i % 17) / 3},${(i % 5) - 2},${i / 50}]')`).join(', ');
    await h.q(`INSERT INTO ip VALUES ${values}`);
    await h.q('CREATE INDEX ip_hnsw ON ip USING hnsw (embedding vector_ip_ops)');
    const sql = "SELECT id FROM ip ORDER BY embedding <#> '[1,0.5,2]' LIMIT 5";
    expect(JSON.stringify((await h.engine.explain(sql, { format: 'json' })).plan)).toContain('ip_hnsw');
    const exact = (await h.rows("SELECT id FROM ip ORDER BY (embedding <#> '[1,0.5,2]') + 0, id LIMIT 5")).map((r) => Number(r.id));
    const viaIndex = (await h.rows(sql)).map((r) => Number(r.id));
    expect(viaIndex.filter((id) => exact.includes(id)).length).toBeGreaterThanOrEqual(4);
  });

  it('searches the index under a wide primary-key prefix (a namespace) and scans a narrow one exactly', async () => {
    // `ns = $2` is estimated at 1,200 rows (5% of 24,000), more than a graph search reads: the hnsw index serves it with
    // the prefix as its filter. For the small namespace the filter keeps almost no candidate, so after a few rounds the
    // scan ranks that namespace's key range exactly: the same rows as the exact query.
    const generated = embeddings(24_010, 11);
    const rows = generated.slice(0, 24_000);
    const nsQueries = generated.slice(24_000).map(lit);
    await h.q(`CREATE TABLE ns_items (ns TEXT, id INT, embedding VECTOR(${DIMS}), PRIMARY KEY (ns, id))`);
    await h.q('CREATE INDEX ns_items_hnsw ON ns_items USING hnsw (embedding vector_cosine_ops)');
    for (let at = 0; at < rows.length; at += 1000) {
      const values = rows
        .slice(at, at + 1000)
        .map((v, i) => `('${at + i < 50 ? 'small' : 'big'}', ${at + i}, '${lit(v)}')`)
        .join(', ');
      await h.q(`INSERT INTO ns_items VALUES ${values}`);
    }
    const sql = 'SELECT id FROM ns_items WHERE ns = $2 ORDER BY embedding <=> $1 LIMIT 10';
    const { text } = await h.engine.explain(sql, { format: 'text', params: [nsQueries[0], 'big'] });
    expect(text).toContain('Index Scan using ns_items_hnsw');
    expect(text).toContain('Filter: (ns = $2)');
    let hit = 0;
    for (const q of nsQueries) {
      const exactSmall = await ids('SELECT id FROM ns_items WHERE ns = $2 ORDER BY (embedding <=> $1) + 0 LIMIT 10', [q, 'small']);
      expect(await ids(sql, [q, 'small'])).toEqual(exactSmall);
      const big = await ids(sql, [q, 'big']);
      const exactBig = await ids('SELECT id FROM ns_items WHERE ns = $2 ORDER BY (embedding <=> $1) + 0 LIMIT 10', [q, 'big']);
      expect(big.every((id) => id >= 50)).toBe(true);
      hit += big.filter((id) => exactBig.includes(id)).length;
    }
    expect(hit / 100).toBeGreaterThanOrEqual(0.9);
    // A table of one namespace, small: the index still serves it (the estimate, 5%, is far from the truth, 100%).
    await h.q(`CREATE TABLE one_ns (ns TEXT, id INT, embedding VECTOR(${DIMS}), PRIMARY KEY (ns, id))`);
    await h.q('CREATE INDEX one_ns_hnsw ON one_ns USING hnsw (embedding vector_cosine_ops)');
    await h.q(
      `INSERT INTO one_ns VALUES ${rows
        .slice(0, 600)
        .map((v, i) => `('', ${i}, '${lit(v)}')`)
        .join(', ')}`,
    );
    const oneNs = 'SELECT id FROM one_ns WHERE ns = $2 ORDER BY embedding <=> $1 LIMIT 10';
    expect((await h.engine.explain(oneNs, { format: 'text', params: [nsQueries[0], ''] })).text).toContain('Index Scan using one_ns_hnsw');
    const exactOne = await ids('SELECT id FROM one_ns WHERE ns = $2 ORDER BY (embedding <=> $1) + 0 LIMIT 10', [nsQueries[0], '']);
    expect((await ids(oneNs, [nsQueries[0], ''], 100)).filter((id) => exactOne.includes(id)).length).toBeGreaterThanOrEqual(9);
    // A range estimated tiny keeps its exact top-k: the whole primary key given.
    const point = await h.engine.explain('SELECT id FROM ns_items WHERE ns = $2 AND id = 3 ORDER BY embedding <=> $1 LIMIT 10', {
      format: 'text',
      params: [nsQueries[0], 'small'],
    });
    expect(point.text).not.toContain('ns_items_hnsw');
  });

  it('refuses an ef_search outside 1..1000', async () => {
    await expect(h.engine.execute('SELECT 1', { timeoutMs: 1000, maxRows: 1, tenant: 'default', efSearch: 0 })).rejects.toMatchObject({
      code: 'INVALID_QUERY',
    });
  });
});
