import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caught, openSql, type SqlHarness } from './helpers.js';

/**
 * Query forms PostgreSQL runs and svcdb's query binder does not: each refused with INVALID_QUERY
 * and details.reason 'unsupported' (never a wrong answer). The forms it runs are in
 * test/sql/pg-queries.slt, checked against PostgreSQL.
 */
describe('query binder: parameters in LIMIT, unnest, FOR UPDATE and unsupported forms', () => {
  let h: SqlHarness;
  beforeAll(async () => {
    h = await openSql();
    await h.q('CREATE TABLE t (id INT PRIMARY KEY, a INT)');
  });
  afterAll(async () => {
    await h.close();
  });

  it('refuses WITH TIES and data-modifying CTEs', async () => {
    // ROLLUP, CUBE and GROUPING SETS run now (test/sql/grouping-sets.slt).
    const cases: [string, string][] = [
      ['SELECT id FROM t ORDER BY id FETCH FIRST 1 ROWS WITH TIES', 'FETCH FIRST ... WITH TIES is not supported'],
      ['WITH d AS (DELETE FROM t RETURNING id) SELECT * FROM d', 'data-modifying statements in WITH (DELETE in "d") are not supported'],
      // unnest(a, b) and ROWS FROM (f(), g()) run now (select-list-srf.slt); what is left of set-returning functions:
      // as a whole select-list item it gives the record's text (srf-grouped.slt)
      ["SELECT to_jsonb(jsonb_each('{}'::jsonb))", 'jsonb_each in a select list (a record) is not supported other than as a whole item: call it in FROM'],
      ['SELECT generate_series(1, generate_series(1, 2))', 'set-returning functions nested in the arguments of another are not supported'],
      ['SELECT * FROM lower($$A$$)', 'function lower() in FROM is not supported'],
    ];
    for (const [sql, message] of cases) {
      expect(await caught(h.q(sql)), sql).toMatchObject({ code: 'INVALID_QUERY', message, details: { reason: 'unsupported' } });
    }
  });

  it('runs unnest over a FROM item (LATERAL)', async () => {
    expect(await h.rows('SELECT u FROM (VALUES (1)) v(a), unnest(ARRAY[v.a, 5]) u ORDER BY u')).toEqual([{ u: 1 }, { u: 5 }]);
  });

  it('keeps the rows a FOR UPDATE query reads: the clause is accepted and ignored', async () => {
    await h.q('INSERT INTO t (id, a) VALUES (1, 10), (2, 20)');
    expect(await h.rows('SELECT id FROM t ORDER BY id FOR NO KEY UPDATE SKIP LOCKED')).toEqual([{ id: 1 }, { id: 2 }]);
    expect(await caught(h.q('SELECT id FROM t FOR UPDATE OF nope'))).toMatchObject({
      code: 'INVALID_QUERY',
      message: 'relation "nope" in FOR UPDATE clause not found in FROM clause',
    });
  });

  it('takes LIMIT and OFFSET as expressions of parameters', async () => {
    expect(await h.rows('SELECT id FROM t ORDER BY id LIMIT $1 OFFSET $2', [1, 1])).toEqual([{ id: 2 }]);
    expect(await h.rows('SELECT id FROM t ORDER BY id LIMIT $1 - 1', [2])).toEqual([{ id: 1 }]);
    expect(await h.rows('SELECT id FROM t ORDER BY id OFFSET $1 ROWS FETCH FIRST $2 ROWS ONLY', [0, 1])).toEqual([{ id: 1 }]);
    expect(await h.rows('SELECT id FROM t ORDER BY id LIMIT $1', [null])).toEqual([{ id: 1 }, { id: 2 }]);
    expect(await caught(h.q('SELECT id FROM t LIMIT id'))).toMatchObject({ code: 'COLUMN_NOT_FOUND' });
  });

  it('runs unnest of a parameter array', async () => {
    expect(await h.rows('SELECT x FROM unnest($1::int[]) WITH ORDINALITY AS u(x, n) ORDER BY n DESC', [[5, 6]])).toEqual([{ x: 6 }, { x: 5 }]);
  });
});
