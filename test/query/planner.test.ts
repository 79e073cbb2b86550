import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSql, type SqlHarness } from './helpers.js';
import type { PlanNode } from '../../query/index.js';

function find(node: PlanNode, type: string): PlanNode | undefined {
  if (node.node_type === type) return node;
  for (const child of node.plans) {
    const hit = find(child, type);
    if (hit) return hit;
  }
  return undefined;
}

describe('planner and executor behaviour', () => {
  let h: SqlHarness;
  beforeAll(async () => {
    h = await openSql();
    await h.q('CREATE TABLE big (id INT PRIMARY KEY, v INT, tag TEXT)');
    const values = Array.from({ length: 5000 }, (_v, i) => `(${i}, ${i % 97}, 't${i % 7}')`).join(',');
    await h.q(`INSERT INTO big VALUES ${values}`);
    await h.q('CREATE INDEX big_v_idx ON big (v DESC)');
  });
  afterAll(async () => {
    await h.close();
  });

  it('LIMIT stops pulling: an index-ordered scan reads one batch, not the table', async () => {
    const { plan } = await h.engine.explain('SELECT id FROM big ORDER BY id LIMIT 5', { analyze: true });
    expect(plan.node_type).toBe('Limit');
    expect(plan.actual_rows).toBe(5);
    const scan = find(plan, 'Index Scan')!;
    expect(scan.index_name).toBe('big_pkey');
    expect(scan.actual_rows).toBeLessThan(5000);
  });

  it('a DESC index serves ORDER BY v DESC and ranges on v', async () => {
    const rows = await h.rows('SELECT v, id FROM big ORDER BY v DESC, id LIMIT 3');
    expect(rows).toEqual([
      { v: 96, id: 96 },
      { v: 96, id: 193 },
      { v: 96, id: 290 },
    ]);
    const { plan } = await h.engine.explain('SELECT v, id FROM big ORDER BY v DESC, id LIMIT 3');
    expect(find(plan, 'Index Scan')?.index_name).toBe('big_v_idx');
    expect(await h.rows('SELECT count(*) AS n FROM big WHERE v > 90 AND v <= 95')).toEqual([{ n: 255 }]);
    const range = await h.engine.explain('SELECT count(*) FROM big WHERE v > 90 AND v <= 95');
    expect(find(range.plan, 'Index Scan')?.index_cond).toBe('(v > 90) AND (v <= 95)');
  });

  it('caches plans per statement text and replans after DDL', async () => {
    const sql = 'SELECT count(*) AS n FROM big WHERE tag = $1';
    expect(await h.rows(sql, ['t1'])).toEqual([{ n: 715 }]);
    const before = await h.engine.explain(sql, { params: ['t1'] });
    expect(before.plan.node_type).toBe('Aggregate');
    expect(find(before.plan, 'Seq Scan')).toBeDefined();
    await h.q('CREATE INDEX big_tag_idx ON big (tag)');
    const after = await h.engine.explain(sql, { params: ['t1'] });
    expect(find(after.plan, 'Index Scan')?.index_name).toBe('big_tag_idx');
    expect(await h.rows(sql, ['t1'])).toEqual([{ n: 715 }]);
  });

  it('statements of one request run in order and read their own writes', async () => {
    const r = await h.q(
      "CREATE TABLE seq_t (id SERIAL PRIMARY KEY, x TEXT); INSERT INTO seq_t (x) VALUES ('a'), ('b'); UPDATE seq_t SET x = x || '!' WHERE id = 2; SELECT id, x FROM seq_t ORDER BY id",
    );
    expect(r.rows).toEqual([
      { id: 1, x: 'a' },
      { id: 2, x: 'b!' },
    ]);
    expect(r.command).toBe('SELECT');
  });

  it("tenants do not see each other's tables", async () => {
    await h.engine.execute('CREATE TABLE private_t (a INT)', { tenant: 'acme', timeoutMs: 5000, maxRows: 10 });
    await h.engine.execute('INSERT INTO private_t VALUES (1)', { tenant: 'acme', timeoutMs: 5000, maxRows: 10 });
    await expect(h.q('SELECT * FROM private_t')).rejects.toMatchObject({ code: 'TABLE_NOT_FOUND' });
    const r = await h.engine.execute('SELECT a FROM private_t', { tenant: 'acme', timeoutMs: 5000, maxRows: 10 });
    expect(r.rows).toEqual([{ a: 1 }]);
  });

  it('results stop at maxRows without reading everything', async () => {
    const r = await h.engine.execute('SELECT id FROM big', { tenant: 'default', timeoutMs: 5000, maxRows: 7 });
    expect(r.rows).toHaveLength(7);
    expect(r.truncated).toBe(true);
  });
});

describe('plan cache and statistics', () => {
  it('replans a cached statement when the table grew a lot', async () => {
    const h = await openSql();
    try {
      await h.q('CREATE TABLE grow (id INT PRIMARY KEY, v INT)');
      const sql = 'SELECT v FROM grow WHERE id = 5';
      await h.q(sql);
      const values = Array.from({ length: 500 }, (_v, i) => `(${i}, ${i})`).join(',');
      await h.q(`INSERT INTO grow VALUES ${values}`);
      const { plan } = await h.engine.explain(sql);
      expect(plan).toMatchObject({ node_type: 'Index Scan', index_name: 'grow_pkey' });
      expect(await h.rows(sql)).toEqual([{ v: 5 }]);
    } finally {
      await h.close();
    }
  });
});
