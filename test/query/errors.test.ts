import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caught, openSql, type SqlHarness } from './helpers.js';

const failure = caught;

describe('errors: codes and PostgreSQL messages', () => {
  let h: SqlHarness;
  beforeAll(async () => {
    h = await openSql();
    await h.q('CREATE TABLE t (id INT PRIMARY KEY, a INT, b TEXT)');
    await h.q('CREATE TABLE u (id INT PRIMARY KEY, a INT)');
    const values = Array.from({ length: 1500 }, (_v, i) => `(${i}, ${i}, 'x')`).join(',');
    await h.q(`INSERT INTO t VALUES ${values}`);
  });
  afterAll(async () => {
    await h.close();
  });

  it('INVALID_QUERY with the position, line and column of a syntax error', async () => {
    const e = await failure(h.q('SELECT a\nFROM t\nWHERE a = = 1'));
    expect(e.code).toBe('INVALID_QUERY');
    expect(e.details).toMatchObject({ line: 3, column: 11, position: 27 });
    expect(e.message).toContain('line 3, column 11');
    const end = await failure(h.q('SELECT a FROM'));
    expect(end.message).toContain('at end of input');
    const unterminated = await failure(h.q("SELECT 'abc"));
    expect(unterminated.code).toBe('INVALID_QUERY');
    expect((await failure(h.q('   '))).code).toBe('INVALID_QUERY');
  });

  it('22008 (datetime value out of range) for dates, timestamps and intervals past their range, as PostgreSQL', async () => {
    const cases: [string, string][] = [
      ["SELECT '294277-01-01'::timestamp", 'timestamp out of range: "294277-01-01"'],
      ["SELECT '5874898-01-01'::date", 'date out of range: "5874898-01-01"'],
      ["SELECT timestamp '294276-12-31 23:59:59' + interval '1 day'", 'timestamp out of range'],
      ["SELECT date '5874897-12-31' + 1", 'date out of range'],
      ["SELECT interval '178000000 years' * 100", 'interval out of range'],
      ["SELECT to_date('5874898-01-01', 'YYYY-MM-DD')", 'date out of range: "5874898-01-01"'],
    ];
    for (const [sql, message] of cases) {
      expect(await failure(h.q(sql)), sql).toMatchObject({ code: 'TYPE_MISMATCH', message, details: { sqlstate: '22008' } });
    }
  });

  it('TABLE_NOT_FOUND and COLUMN_NOT_FOUND', async () => {
    expect(await failure(h.q('SELECT * FROM missing'))).toMatchObject({ code: 'TABLE_NOT_FOUND', message: 'relation "missing" does not exist' });
    expect(await failure(h.q('SELECT * FROM public.missing'))).toMatchObject({ code: 'TABLE_NOT_FOUND', message: 'relation "public.missing" does not exist' });
    expect(await failure(h.q('SELECT nope FROM t'))).toMatchObject({ code: 'COLUMN_NOT_FOUND', message: 'column "nope" does not exist' });
    expect(await failure(h.q('SELECT t.nope FROM t'))).toMatchObject({ code: 'COLUMN_NOT_FOUND', message: 'column "t.nope" does not exist' });
    expect(await failure(h.q('SELECT x.a FROM t'))).toMatchObject({ code: 'TABLE_NOT_FOUND', message: 'missing FROM-clause entry for table "x"' });
    expect(await failure(h.q('INSERT INTO t (id, nope) VALUES (1, 2)'))).toMatchObject({ code: 'COLUMN_NOT_FOUND' });
    expect(await failure(h.q('SELECT id FROM t, u'))).toMatchObject({ code: 'INVALID_QUERY', message: 'column reference "id" is ambiguous' });
  });

  it('TYPE_MISMATCH', async () => {
    expect(await failure(h.q("SELECT a + 'x' FROM t"))).toMatchObject({ code: 'TYPE_MISMATCH' });
    expect(await failure(h.q('SELECT b + 1 FROM t'))).toMatchObject({ code: 'TYPE_MISMATCH', message: 'operator does not exist: text + integer' });
    expect(await failure(h.q('SELECT * FROM t WHERE a'))).toMatchObject({
      code: 'TYPE_MISMATCH',
      message: 'argument of WHERE must be type boolean, not type integer',
    });
    expect(await failure(h.q("INSERT INTO t VALUES ('x', 1, 'b')"))).toMatchObject({ code: 'TYPE_MISMATCH' });
  });

  it('grouping and aggregate placement errors', async () => {
    expect((await failure(h.q('SELECT a, count(*) FROM t'))).message).toBe('column "a" must appear in the GROUP BY clause or be used in an aggregate function');
    expect((await failure(h.q('SELECT a FROM t WHERE count(*) > 1'))).message).toBe('aggregate functions are not allowed in WHERE');
  });

  it('parameters: typed by context, missing ones refused', async () => {
    expect(await h.rows('SELECT a FROM t WHERE id = $1', [7])).toEqual([{ a: 7 }]);
    expect(await h.rows('SELECT $1::int + 1 AS x', ['41'])).toEqual([{ x: 42 }]);
    expect(await failure(h.q('SELECT a FROM t WHERE id = $2', [1]))).toMatchObject({ code: 'INVALID_QUERY' });
  });

  it('QUERY_TIMEOUT when the deadline passes, and on abort', async () => {
    const slow = 'SELECT count(*) FROM t x, t y WHERE x.a + y.a > 0';
    const timeout = await failure(h.engine.execute(slow, { timeoutMs: 50, maxRows: 10, tenant: 'default' }));
    expect(timeout).toMatchObject({ code: 'QUERY_TIMEOUT', message: 'canceling statement due to statement timeout' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const aborted = await failure(h.engine.execute(slow, { timeoutMs: 60_000, maxRows: 10, tenant: 'default', signal: controller.signal }));
    expect(aborted.code).toBe('QUERY_TIMEOUT');
  });

  it('scalar subquery returning more than one row', async () => {
    expect((await failure(h.q('SELECT (SELECT a FROM t)'))).message).toBe('more than one row returned by a subquery used as an expression');
  });
});
