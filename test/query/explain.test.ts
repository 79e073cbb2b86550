import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectGolden } from '../helpers/golden.js';
import { openSql, type SqlHarness } from './helpers.js';

const GOLDEN_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'explain');

const CASES: Record<string, string> = {
  'pk-point-lookup': 'SELECT name FROM items WHERE id = 42',
  'pk-range': 'SELECT id FROM items WHERE id >= 10 AND id < 20',
  'index-range': 'SELECT id, score FROM items WHERE score BETWEEN 5 AND 7',
  'full-scan-filter': "SELECT id FROM items WHERE name LIKE 'item-1%'",
  'hash-join': "SELECT i.id, c.label FROM items i JOIN cats c ON i.cat_id = c.id WHERE c.label = 'c1'",
  'aggregate': 'SELECT cat_id, count(*), avg(score) FROM items GROUP BY cat_id ORDER BY cat_id',
  'index-ordered-limit': 'SELECT id, score FROM items ORDER BY score DESC LIMIT 5',
  'pk-ordered-limit': 'SELECT id FROM items ORDER BY id LIMIT 3',
  'nested-loop': 'SELECT count(*) FROM items i JOIN cats c ON i.cat_id < c.id',
  'grouping-sets': 'SELECT cat_id, score, count(*) FROM items GROUP BY ROLLUP (cat_id, score)',
};

describe('EXPLAIN plan shapes (golden files)', () => {
  let h: SqlHarness;
  beforeAll(async () => {
    h = await openSql();
    await h.q('CREATE TABLE cats (id INT PRIMARY KEY, label TEXT)');
    await h.q("INSERT INTO cats SELECT g, 'c' || g FROM (VALUES (1), (2), (3), (4), (5)) AS v(g)");
    await h.q('CREATE TABLE items (id BIGINT PRIMARY KEY, name TEXT, score INT, cat_id INT REFERENCES cats(id))');
    const values = Array.from({ length: 200 }, (_v, i) => `(${i + 1}, 'item-${i + 1}', ${i % 10}, ${(i % 5) + 1})`).join(', ');
    await h.q(`INSERT INTO items VALUES ${values}`);
    await h.q('CREATE INDEX items_score_idx ON items (score)');
  });
  afterAll(async () => {
    await h.close();
  });

  for (const [name, sql] of Object.entries(CASES)) {
    it(name, async () => {
      const { text } = await h.engine.explain(sql, { format: 'text' });
      const file = path.join(GOLDEN_DIR, `${name}.txt`);
      const body = `-- ${sql}\n${text!}\n`;
      await expectGolden(file, body);
    });
  }

  it('json plan object has the spec fields; ANALYZE fills actual values', async () => {
    const plain = await h.engine.explain('SELECT name FROM items WHERE id = 42', { format: 'json' });
    expect(plain.plan).toMatchObject({
      node_type: 'Index Scan',
      relation: 'items',
      index_name: 'items_pkey',
      index_cond: '(id = 42)',
      actual_rows: null,
      actual_time_ms: null,
    });
    expect(typeof plain.planning_time_ms).toBe('number');
    const analyzed = await h.engine.explain('SELECT id FROM items WHERE score = 3', { format: 'json', analyze: true });
    expect(analyzed.plan.actual_rows).toBe(20);
    expect(typeof analyzed.plan.actual_time_ms).toBe('number');
    const yaml = await h.engine.explain('SELECT id FROM items WHERE score = 3', { format: 'yaml' });
    expect(yaml.yaml).toContain('node_type: Index Scan');
  });

  it('EXPLAIN [ANALYZE] as a statement returns QUERY PLAN rows', async () => {
    const r = await h.q('EXPLAIN ANALYZE SELECT count(*) FROM items');
    expect(r.columns).toEqual([{ name: 'QUERY PLAN', type: 'TEXT', nullable: false }]);
    expect(String(r.rows[0]!['QUERY PLAN'])).toMatch(/^Aggregate/);
    expect(r.rows.some((row) => String(row['QUERY PLAN']).startsWith('Execution Time'))).toBe(true);
  });
});
