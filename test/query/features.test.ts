import type { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSql, type SqlHarness } from './helpers.js';
import { normalize, openPg, pgRows, sortRows } from './pg-oracle.js';

const SETUP = [
  'CREATE TABLE t1 (id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c NUMERIC(10,2), d DOUBLE PRECISION, e BOOLEAN)',
  'CREATE TABLE t2 (id INTEGER PRIMARY KEY, t1_id INTEGER, v VARCHAR(20), n BIGINT)',
  "INSERT INTO t1 VALUES (1, 10, 'apple', 1.50, 0.5, true), (2, 20, 'banana', 2.25, 1.5, false), (3, NULL, 'cherry', NULL, NULL, NULL), (4, 10, NULL, 4.00, 2.5, true), (5, 30, 'apple', 5.75, -1, false)",
  "INSERT INTO t2 VALUES (1, 1, 'x', 100), (2, 1, 'y', 200), (3, 2, 'z', NULL), (4, 9, 'w', 400), (5, NULL, NULL, 500)",
  'CREATE TABLE t3 (k INTEGER, label TEXT)',
  "INSERT INTO t3 VALUES (100, 'hundred'), (200, 'two hundred'), (500, 'five hundred'), (NULL, 'none')",
];

const QUERIES = `SELECT * FROM t1
SELECT a, b FROM t1 WHERE a > 10 OR b = 'apple'
SELECT a + 1, a * 2, a / 3, a % 3, -a FROM t1
SELECT b || '!', upper(b), length(b) FROM t1
SELECT c * 2, c + d, d / 2 FROM t1
SELECT a FROM t1 WHERE a IN (10, 30)
SELECT a FROM t1 WHERE a NOT IN (10, NULL)
SELECT a FROM t1 WHERE a BETWEEN 10 AND 20
SELECT ALL a FROM t1 WHERE NOT (a) >= 15
SELECT id FROM t1 WHERE NOT (a) IS NULL AND NOT (c) BETWEEN 1 AND 3
SELECT count(ALL a), NOT (id) + 1 > 3 FROM t1 GROUP BY id
SELECT b FROM t1 WHERE b LIKE 'a%' OR b ILIKE 'B%'
SELECT a IS NULL, a IS NOT NULL, e IS TRUE, e IS NOT FALSE FROM t1
SELECT a IS DISTINCT FROM 10, a IS NOT DISTINCT FROM NULL FROM t1
SELECT CASE WHEN a > 15 THEN 'big' WHEN a > 5 THEN 'small' ELSE 'none' END FROM t1
SELECT CASE a WHEN 10 THEN 'ten' END FROM t1
SELECT COALESCE(a, 0), NULLIF(a, 10), GREATEST(a, 15), LEAST(a, 15) FROM t1
SELECT CAST(a AS TEXT), a::numeric, '5'::int + 1, c::int FROM t1
SELECT count(*), count(a), count(DISTINCT a), sum(a), avg(a), min(b), max(c) FROM t1
SELECT a, count(*) FROM t1 GROUP BY a
SELECT a, count(*) FROM t1 GROUP BY a HAVING count(*) > 1
SELECT b, sum(c) FROM t1 GROUP BY 1 ORDER BY 1
SELECT string_agg(b, ',' ORDER BY b), array_agg(a ORDER BY a), bool_and(e), bool_or(e) FROM t1
SELECT DISTINCT a FROM t1
SELECT DISTINCT ON (a) a, b FROM t1 ORDER BY a, b DESC
SELECT a, b FROM t1 ORDER BY a DESC, b
SELECT a, b FROM t1 ORDER BY a NULLS FIRST, id
SELECT a FROM t1 ORDER BY a LIMIT 2 OFFSET 1
SELECT t1.id, t2.v FROM t1 JOIN t2 ON t1.id = t2.t1_id
SELECT t1.id, t2.v FROM t1 LEFT JOIN t2 ON t1.id = t2.t1_id
SELECT t1.id, t2.v FROM t1 RIGHT JOIN t2 ON t1.id = t2.t1_id
SELECT t1.id, t2.v FROM t1 FULL JOIN t2 ON t1.id = t2.t1_id
SELECT count(*) FROM t1 CROSS JOIN t2
SELECT t1.id, t2.id FROM t1, t2 WHERE t1.a = t2.n / 10
SELECT t1.id FROM t1 JOIN t2 ON t1.id = t2.t1_id AND t2.n > 150
SELECT id FROM t1 WHERE a = (SELECT max(a) FROM t1)
SELECT id FROM t1 WHERE id IN (SELECT t1_id FROM t2)
SELECT id FROM t1 WHERE id NOT IN (SELECT t1_id FROM t2)
SELECT id FROM t1 WHERE id NOT IN (SELECT t1_id FROM t2 WHERE t1_id IS NOT NULL)
SELECT id FROM t1 WHERE EXISTS (SELECT 1 FROM t2 WHERE t2.t1_id = t1.id)
SELECT id FROM t1 WHERE NOT EXISTS (SELECT 1 FROM t2 WHERE t2.t1_id = t1.id)
SELECT id, (SELECT count(*) FROM t2 WHERE t2.t1_id = t1.id) FROM t1
SELECT id FROM t1 WHERE a > ALL (SELECT a FROM t1 WHERE a < 20)
SELECT id FROM t1 WHERE a = ANY (SELECT n / 10 FROM t2)
SELECT id FROM t1 WHERE a = ANY (ARRAY[10, 20])
WITH x AS (SELECT a, b FROM t1 WHERE a IS NOT NULL) SELECT b FROM x WHERE a > 10
SELECT a FROM t1 UNION SELECT t1_id FROM t2
SELECT a FROM t1 UNION ALL SELECT t1_id FROM t2
SELECT a FROM t1 INTERSECT SELECT t1_id FROM t2
SELECT a FROM t1 EXCEPT SELECT t1_id FROM t2
SELECT id, row_number() OVER (ORDER BY id) FROM t1
SELECT id, rank() OVER (ORDER BY a), dense_rank() OVER (ORDER BY a) FROM t1
SELECT id, lag(a) OVER (ORDER BY id), lead(a, 1, 0) OVER (ORDER BY id) FROM t1
SELECT id, sum(a) OVER (PARTITION BY b ORDER BY id) FROM t1
SELECT id, sum(a) OVER (ORDER BY a), count(*) OVER () FROM t1
SELECT 1
SELECT 1 + 2, 'a' || 'b', 10 / 4, 10.0 / 4, 2 ^ 10
SELECT * FROM (SELECT a, b FROM t1) s WHERE s.a > 10
SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v(x, y)
SELECT x.id FROM t1 x JOIN t1 y ON x.a = y.a AND x.id < y.id
SELECT id FROM t1 WHERE e
SELECT id FROM t1 WHERE NOT e
SELECT sum(a) FILTER (WHERE a > 10) FROM t1
SELECT a, b FROM t1 ORDER BY 2 DESC NULLS LAST, 1
SELECT abs(d), round(c), round(c, 1), floor(d), ceil(d) FROM t1
SELECT substring(b from 2 for 3), position('an' in b), trim('  x  '), replace(b, 'a', 'A') FROM t1
SELECT count(*) FROM t1 WHERE b IS NULL
SELECT a FROM t1 GROUP BY a ORDER BY count(*) DESC, a
SELECT b, count(*) AS n FROM t1 GROUP BY b ORDER BY n DESC, b
SELECT max(a) - min(a) FROM t1
SELECT id FROM t1 WHERE id = 3
SELECT id FROM t1 WHERE id > 2 AND id <= 4
SELECT id FROM t1 ORDER BY id DESC LIMIT 2
SELECT t1.b, t2.v, t3.label FROM t3, t2, t1 WHERE t1.id = t2.t1_id AND t2.n = t3.k
SELECT t1.b, t3.label FROM t1 JOIN t2 ON t1.id = t2.t1_id JOIN t3 ON t3.k = t2.n WHERE t1.a > 5
SELECT count(*) FROM t1, t2, t3 WHERE t1.a * 10 = t2.n AND t3.k > t2.n
SELECT t1.id, t2.id FROM t1 LEFT JOIN t2 ON t1.id = t2.t1_id AND t2.v <> 'y' WHERE t1.id < 4
SELECT b, count(*), rank() OVER (ORDER BY count(*) DESC, b) FROM t1 GROUP BY b
SELECT id, a, first_value(a) OVER (ORDER BY id), last_value(a) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM t1
SELECT sum(DISTINCT a), avg(DISTINCT a), count(DISTINCT b) FROM t1
SELECT x, y FROM (VALUES (1, 'one'), (2, 'two')) AS a(x, y) FULL JOIN (VALUES (2, 'dos'), (3, 'tres')) AS b(x, z) USING (x)
SELECT 'it''s', E'tab\there', $$dollar$$
SELECT b FROM t1 WHERE b LIKE ANY (ARRAY['a%', 'c%'])
WITH RECURSIVE_FREE AS (SELECT 1 AS one) SELECT one FROM RECURSIVE_FREE
SELECT a, b FROM t1 ORDER BY 1 DESC NULLS LAST, 2 NULLS FIRST
SELECT id FROM t1 WHERE id IN (SELECT t1_id FROM t2 WHERE t2.n > (SELECT avg(n) FROM t2))
SELECT DISTINCT b FROM t1 ORDER BY b NULLS FIRST
SELECT a FROM t1 UNION SELECT a FROM t1 ORDER BY 1 LIMIT 2
SELECT a % 7, count(*) FROM t1 GROUP BY a % 7 ORDER BY 1
SELECT upper(b) AS u FROM t1 GROUP BY upper(b) ORDER BY u`.split('\n');

describe('query features against PostgreSQL (PGlite)', () => {
  let h: SqlHarness;
  let pg: PGlite;
  beforeAll(async () => {
    [h, pg] = await Promise.all([openSql(), openPg()]);
    for (const s of SETUP) {
      await h.q(s);
      await pg.query(s);
    }
  });
  afterAll(async () => {
    await h.close();
    await pg.close();
  });

  it('matches', async () => {
    const failures: string[] = [];
    for (const sql of QUERIES) {
      let mine: unknown[][];
      try {
        const r = await h.q(sql);
        mine = r.rows.map((row) => r.columns.map((c) => normalize(row[c.name])));
      } catch (e) {
        failures.push(`${sql}\n   svcdb error: ${(e as Error).message}`);
        continue;
      }
      const theirs = await pgRows(pg, sql);
      const ordered = isOrdered(sql);
      const a = JSON.stringify(ordered ? mine : sortRows(mine));
      const b = JSON.stringify(ordered ? theirs : sortRows(theirs));
      if (a !== b) failures.push(`${sql}\n   svcdb: ${a}\n   pg:    ${b}`);
    }
    console.log(failures.join('\n'));
    expect(failures.length).toBe(0);
  });
});

/** ORDER BY outside parentheses (not the ORDER BY of a window or an aggregate). */
export function isOrdered(sql: string): boolean {
  let flat = sql;
  for (let i = 0; i < 10; i++) flat = flat.replace(/\([^()]*\)/g, '');
  return /order\s+by/i.test(flat);
}
