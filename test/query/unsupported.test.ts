import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caught, openSql, type SqlHarness } from './helpers.js';

/** Features svcdb does not have fail with a clear INVALID_QUERY, not a syntax error or a 500. */
describe('unsupported statements and features', () => {
  let h: SqlHarness;
  beforeAll(async () => {
    h = await openSql();
    await h.q('CREATE TABLE t (id INT PRIMARY KEY, a INT)');
  });
  afterAll(async () => {
    await h.close();
  });

  it('refuses statements it does not implement by name', async () => {
    const cases: [string, string][] = [
      ['REFRESH MATERIALIZED VIEW CONCURRENTLY mv', 'REFRESH MATERIALIZED VIEW CONCURRENTLY is not supported'],
      ['ALTER MATERIALIZED VIEW mv RENAME TO mw', 'ALTER MATERIALIZED VIEW RENAME is not supported'],
      ['CREATE SCHEMA s', 'CREATE SCHEMA is not supported'],
      ['DROP SCHEMA s', 'DROP SCHEMA is not supported'],
      ['CREATE OR REPLACE FUNCTION f(int) RETURNS int LANGUAGE sql AS $$SELECT $1$$', 'CREATE FUNCTION is not supported'],
      ['DROP FUNCTION f(int)', 'DROP FUNCTION is not supported'],
      ['COMMENT ON TABLE t IS $$x$$', 'COMMENT ON is not supported'],
    ];
    for (const [sql, message] of cases) {
      expect(await caught(h.q(sql))).toMatchObject({ code: 'INVALID_QUERY', message, details: { reason: 'unsupported' } });
    }
  });

  it('runs LATERAL references to earlier FROM items, refuses them from inside a JOIN to items outside it', async () => {
    expect(await h.rows('SELECT * FROM (VALUES (1), (2)) v(x), LATERAL (SELECT v.x + 1 AS b) s ORDER BY x')).toEqual([
      { x: 1, b: 2 },
      { x: 2, b: 3 },
    ]);
    expect(await h.rows('SELECT * FROM (VALUES (1)) v(x), LATERAL (SELECT 2 AS y) s')).toEqual([{ x: 1, y: 2 }]);
    const e = await caught(h.q('SELECT * FROM t, t AS u JOIN LATERAL (SELECT t.a) s ON true'));
    expect(e).toMatchObject({
      code: 'INVALID_QUERY',
      message: 'LATERAL references to FROM items outside the JOIN are not supported',
      details: { reason: 'unsupported' },
    });
  });

  it('refuses the generate_series forms it does not implement', async () => {
    const cases: [string, string][] = [
      // several calls in one select list run in lockstep now (select-list-srf.slt)
      ['SELECT sum(1) OVER (ORDER BY generate_series(1, 2))', 'set-returning functions in window definitions are not supported'],
      // grouped and windowed queries run them now (srf-grouped.slt), except as a grouping key and outside it at once
      ['SELECT generate_series(1, 2), generate_series(1, 3) FROM t GROUP BY 1', 'set-returning functions both in GROUP BY and outside it are not supported'],
      ["SELECT * FROM upper('a')", 'function upper() in FROM is not supported'],
    ];
    for (const [sql, message] of cases) expect(await caught(h.q(sql))).toMatchObject({ message, details: { reason: 'unsupported' } });
    expect(await caught(h.q('SELECT * FROM generate_series(1.5, 3)'))).toMatchObject({ code: 'TYPE_MISMATCH', details: { reason: 'unsupported' } });
  });

  it('runs generate_series over FROM items (LATERAL), in FROM and in a select list', async () => {
    expect(await h.rows('SELECT x, g FROM (VALUES (2)) v(x), generate_series(1, v.x) g ORDER BY g')).toEqual([
      { x: 2, g: 1 },
      { x: 2, g: 2 },
    ]);
    expect(await h.rows('SELECT generate_series(1, x) AS g FROM (VALUES (2)) v(x) ORDER BY g')).toEqual([{ g: 1 }, { g: 2 }]);
  });

  it('refuses INTERVAL and INTERVAL[] columns in tables (array columns of stored types are supported)', async () => {
    for (const type of ['INTERVAL', 'INTERVAL[]']) {
      const e = await caught(h.q(`CREATE TABLE arr (id INT, v ${type})`));
      expect(e.code).toBe('INVALID_QUERY');
      expect(e.message).toContain('cannot store in a table');
    }
  });
});
