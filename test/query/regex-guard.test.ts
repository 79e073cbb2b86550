import type { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedRuns } from '../../query/functions/regex-guard.js';
import { caught, openSql, type SqlHarness } from './helpers.js';
import { normalize, openPg, pgRows } from './pg-oracle.js';

/**
 * Which matches run under query/functions/regex-guard.ts's watchdog (some 70 µs a call): only
 * those V8's linear engine cannot take. guardedRuns() counts the watchdog's runs in this process,
 * where the engine runs: a pattern V8 moves to its linear engine must leave it unchanged (else
 * every `~` of every row would pay the watchdog), one it cannot must raise it (else that match
 * could hold the server past its deadline). And the answers of ordinary lookarounds and back
 * references, which now run guarded, are PostgreSQL's (PGlite), per row (not folded by the binder).
 */
describe('regex matches under the watchdog: which, and their answers', () => {
  let h: SqlHarness;
  let pg: PGlite;
  const SETUP = [
    'CREATE TABLE s (id INTEGER PRIMARY KEY, t TEXT)',
    `INSERT INTO s VALUES (1, 'abc123'), (2, 'hello world'), (3, 'aa bb cc'), (4, 'Password9'), (5, 'foo.bar@example.com'), (6, 'xyzzy'), (7, 'éclair ÉCLAIR')`,
  ];

  beforeAll(async () => {
    [h, pg] = await Promise.all([openSql(), openPg()]);
    for (const sql of SETUP) {
      await h.q(sql);
      await pg.query(sql);
    }
  }, 60_000);
  afterAll(async () => {
    await h.close();
    await pg.close();
  });

  /** The watchdog runs `sql` took. */
  const runsOf = async (sql: string): Promise<number> => {
    const before = guardedRuns();
    await h.q(sql);
    return guardedRuns() - before;
  };

  it('patterns the linear engine takes never run guarded, whatever the function', async () => {
    for (const sql of [
      `SELECT t ~ '(a+)+$', t ~* '^[[:alpha:]]+\\d', t !~ 'b{2}', t SIMILAR TO '%(b|c)%' FROM s`,
      `SELECT regexp_replace(t, '(\\w)(\\w)', '\\2\\1', 'g'), regexp_count(t, '[aeiou]'), regexp_like(t, 'l{2}', 'i') FROM s`,
      `SELECT regexp_match(t, '(\\w+)@(\\w+)'), substring(t from '\\d+'), regexp_substr(t, 'o.', 1, 2), regexp_instr(t, 'c', 1, 1, 1) FROM s`,
      `SELECT regexp_split_to_array(t, '\\s+'), t ~ '(ab){2,16}' FROM s`,
      `SELECT count(*) FROM s, regexp_matches(t, '[a-c]', 'g')`,
      `SELECT count(*) FROM s, regexp_split_to_table(t, '')`,
      `SELECT t ~ ANY(ARRAY['^a', 'z$']) FROM s`,
    ]) {
      expect({ sql, runs: await runsOf(sql) }).toEqual({ sql, runs: 0 });
    }
  });

  it('lookarounds, word constraints, back references, the n flag, subexpression positions, large bounds and a lone surrogate do, with a quantifier or an alternative', async () => {
    for (const sql of [
      `SELECT t ~ '(?=.*\\d)[a-z]' FROM s`,
      `SELECT t ~ '(?<!a)b+' FROM s`,
      `SELECT regexp_replace(t, '\\y\\w+', '|', 'g') FROM s`,
      `SELECT regexp_count(t, '(\\w)\\1') FROM s`,
      `SELECT regexp_like(t, '^b|c$', 'n') FROM s`,
      `SELECT regexp_instr(t, '(\\d+)', 1, 1, 0, '', 1) FROM s`,
      `SELECT t ~ '(ab){2,20}' FROM s`,
      `SELECT t ~ 'a{0,255}c' FROM s`,
      `SELECT count(*) FROM s, regexp_matches(t, '(?=[a-c])[a-z]*', 'g')`,
    ]) {
      expect({ sql, runs: (await runsOf(sql)) > 0 }).toEqual({ sql, runs: true });
    }
    // Text with a lone surrogate keeps the v form (the UTF-16 forms serve well-formed text only).
    const before = guardedRuns();
    expect((await h.q(`SELECT $1 ~ '^a.+b$' AS r`, ['a\ud83db'])).rows).toEqual([{ r: true }]);
    expect(guardedRuns()).toBeGreaterThan(before);
  });

  it('the same without quantifier, alternative or back reference do not: one path per start, however the text', async () => {
    for (const sql of [
      `SELECT t ~ '(?<!a)b' FROM s`,
      `SELECT regexp_replace(t, '\\yhello\\y', 'X', 'g'), regexp_count(t, '\\m[a-z]'), regexp_like(t, 'o\\M') FROM s`,
      `SELECT regexp_like(t, '^b', 'n'), regexp_instr(t, '(\\d)', 1, 1, 0, '', 1), t ~ '\\Yl\\Y' FROM s`,
      `SELECT count(*) FROM s, regexp_matches(t, '(?=[a-c])', 'g')`,
      // 100,000 a's: a lookahead at every start, each a step.
      `SELECT regexp_count(repeat('a', 100000), '(?=a)a') AS r`,
    ]) {
      expect({ sql, runs: await runsOf(sql) }).toEqual({ sql, runs: 0 });
    }
    const before = guardedRuns();
    expect((await h.q(`SELECT $1 ~ '^a.b$' AS r`, ['a\ud83db'])).rows).toEqual([{ r: true }]);
    expect(guardedRuns()).toBe(before);
  });

  it('ordinary lookarounds and back references answer as PostgreSQL does', async () => {
    const queries = [
      `SELECT id, t ~ '(?=.*\\d)(?=.*[A-Z])' AS strong FROM s ORDER BY id`,
      `SELECT id, regexp_replace(t, '(\\w)\\1', '<\\1\\1>', 'g') AS r FROM s ORDER BY id`,
      `SELECT id, regexp_replace(t, '(?<=@)\\w+', 'X') AS r FROM s ORDER BY id`,
      `SELECT id, regexp_count(t, '\\m\\w') AS r FROM s ORDER BY id`,
      `SELECT id, regexp_match(t, '(\\w+)(?!\\w)') AS r FROM s ORDER BY id`,
      `SELECT id, regexp_instr(t, '(l)(o)', 1, 1, 0, '', 2) AS r FROM s ORDER BY id`,
      `SELECT id, t ~* '(.)\\1' AS r FROM s ORDER BY id`,
      `SELECT id, regexp_split_to_array(t, '(?=[.@])') AS r FROM s ORDER BY id`,
      `SELECT id, m FROM s, regexp_matches(t, '(\\w)\\1', 'g') AS m ORDER BY id, m`,
    ];
    for (const sql of queries) {
      const mine = await h.q(sql);
      const ours = mine.rows.map((row) => mine.columns.map((c) => normalize(row[c.name])));
      expect({ sql, rows: ours }).toEqual({ sql, rows: await pgRows(pg, sql) });
    }
  });

  it('a match that passes the statement deadline fails with QUERY_TIMEOUT, constants included', async () => {
    for (const sql of [
      `SELECT repeat('a', 30) || '!' ~ '(?=a)(a+)+$' AS r`,
      `SELECT x ~ '(?=a)(a+)+$' AS r FROM (SELECT repeat('a', 30) || t AS x FROM s) AS q`,
    ]) {
      const started = performance.now();
      const err = await caught(h.engine.execute(sql, { timeoutMs: 200, maxRows: 10, tenant: 'default' }));
      expect({ sql, code: err.code, message: err.message }).toEqual({ sql, code: 'QUERY_TIMEOUT', message: 'canceling statement due to statement timeout' });
      expect(performance.now() - started).toBeLessThan(1000);
    }
  });
});
