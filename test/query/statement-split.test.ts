/**
 * A request of several statements is cut where PostgreSQL's parser says each one starts and ends.
 * libpg-query says it in UTF-8 bytes; the cut is made in the JavaScript string's own units, so
 * non-ASCII text before a statement (accents, CJK, emoji) moves nothing. A view's stored text comes
 * from its statement's text: cut wrongly, the view was stored broken and failed on every read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseGeneral, parseSql } from '../../query/parse/sql-parser.js';
import { openSql, type SqlHarness } from './helpers.js';

const texts = (sql: string): string[] => parseSql(sql).map((s) => s.text);

describe('statements split by their place in the text', () => {
  it.each([
    ["SELECT 'héllo wörld' AS a; SELECT 2 AS b", ["SELECT 'héllo wörld' AS a", 'SELECT 2 AS b']],
    ["SELECT '日本語' AS a;SELECT 'ß' AS b ;  SELECT 3", ["SELECT '日本語' AS a", "SELECT 'ß' AS b", 'SELECT 3']],
    ["SELECT '😀' AS e; -- ünïcode comment\nSELECT 1", ["SELECT '😀' AS e", 'SELECT 1']],
    ["INSERT INTO t VALUES ('é'); SELECT 1", ["INSERT INTO t VALUES ('é')", 'SELECT 1']],
  ])('%s', (sql, expected) => {
    expect(texts(sql)).toEqual(expected);
    expect(parseGeneral(sql).map((s) => s.text)).toEqual(expected);
    for (const s of parseGeneral(sql)) expect(sql.slice(s.offset, s.offset + s.text.length)).toBe(s.text);
  });

  it('a syntax error after non-ASCII text is placed in characters, as PostgreSQL does', () => {
    expect(() => parseSql("SELECT 'é' AS a; SELEC 1")).toThrow(/at or near "SELEC" \(line 1, column 18\)/);
  });
});

describe('views defined after non-ASCII text in the same request', () => {
  let h: SqlHarness;
  beforeAll(async () => {
    h = await openSql();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('store their own query and read back', async () => {
    await h.rows("CREATE VIEW v AS SELECT '日本語' AS a, 1 AS b; SELECT 1");
    await h.rows("SELECT '😀x' AS a; CREATE VIEW w AS SELECT '😀' AS e, 'ü' AS u; SELECT 2");
    expect(await h.rows('SELECT * FROM v')).toEqual([{ a: '日本語', b: 1 }]);
    expect(await h.rows('SELECT * FROM w')).toEqual([{ e: '😀', u: 'ü' }]);
  });
});
