import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSql, type SqlHarness } from './helpers.js';

describe('sql smoke', () => {
  let h: SqlHarness;
  beforeAll(async () => {
    h = await openSql();
  });
  afterAll(async () => {
    await h.close();
  });

  it('creates, inserts, selects', async () => {
    await h.q('CREATE TABLE t (id BIGSERIAL PRIMARY KEY, name TEXT NOT NULL, score INTEGER, price NUMERIC(10,2))');
    const ins = await h.q("INSERT INTO t (name, score, price) VALUES ('a', 1, 1.5), ('b', 2, 2.25), ('c', NULL, 3) RETURNING id, name");
    expect(ins.rows).toEqual([
      { id: 1, name: 'a' },
      { id: 2, name: 'b' },
      { id: 3, name: 'c' },
    ]);
    expect(await h.rows('SELECT name, score + 1 AS s, price FROM t WHERE id >= 2 ORDER BY id')).toEqual([
      { name: 'b', s: 3, price: '2.25' },
      { name: 'c', s: null, price: '3.00' },
    ]);
    expect(await h.rows('SELECT count(*), sum(score), avg(price) FROM t')).toEqual([{ count: 3, sum: 3, avg: '2.2500000000000000' }]);
    expect(await h.rows('SELECT 1, 2 AS x, 3')).toEqual([{ '?column?': 1, x: 2, '?column?_2': 3 }]);
  });
});
