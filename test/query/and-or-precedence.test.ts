/**
 * AND binds tighter than OR (PostgreSQL's grammar; node-sql-parser, the parser before it, gave them the
 * same precedence, so `a OR b AND c` read as `(a OR b) AND c` in WHERE and parentheses). Checked on
 * the parsed tree (printed fully parenthesized) and through the engine against PostgreSQL's three-valued logic, in a select list
 * (bare and parenthesized), WHERE, ON, HAVING and CASE WHEN.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exprSql, parseExpression } from '../../query/parse/index.js';
import { openSql, type SqlHarness } from './helpers.js';

type B = boolean | null;
const and = (x: B, y: B): B => (x === false || y === false ? false : x === null || y === null ? null : true);
const or = (x: B, y: B): B => (x === true || y === true ? true : x === null || y === null ? null : false);
const not = (x: B): B => (x === null ? null : !x);

/** Expressions and what PostgreSQL makes of them. */
const CASES: readonly { sql: string; eval: (a: B, b: B, c: B) => B }[] = [
  { sql: 'a OR b AND c', eval: (a, b, c) => or(a, and(b, c)) },
  { sql: 'a AND b OR c', eval: (a, b, c) => or(and(a, b), c) },
  { sql: 'a OR b AND c OR a AND c', eval: (a, b, c) => or(or(a, and(b, c)), and(a, c)) },
  { sql: 'NOT a OR b AND NOT c', eval: (a, b, c) => or(not(a), and(b, not(c))) },
  { sql: 'a OR b AND c IS NULL', eval: (a, b, c) => or(a, and(b, c === null)) },
  { sql: 'a AND c IS NULL OR b', eval: (a, b, c) => or(and(a, c === null), b) },
  { sql: '(a OR b) AND c', eval: (a, b, c) => and(or(a, b), c) },
  { sql: 'a AND (b OR c) OR NOT a AND c', eval: (a, b, c) => or(and(a, or(b, c)), and(not(a), c)) },
];

const VALUES: readonly B[] = [true, false, null];
const ROWS = VALUES.flatMap((a) => VALUES.flatMap((b) => VALUES.map((c) => [a, b, c] as const)));

let h: SqlHarness;

beforeAll(async () => {
  h = await openSql();
  await h.q('CREATE TABLE v (id INTEGER PRIMARY KEY, a BOOLEAN, b BOOLEAN, c BOOLEAN)');
  const sqlOf = (x: B) => (x === null ? 'NULL' : String(x));
  await h.q(`INSERT INTO v VALUES ${ROWS.map(([a, b, c], i) => `(${i}, ${sqlOf(a)}, ${sqlOf(b)}, ${sqlOf(c)})`).join(', ')}`);
});

afterAll(async () => {
  await h?.close();
});

describe('AND before OR', () => {
  it('regroups the parsed tree; explicit parentheses are kept', () => {
    expect(exprSql(parseExpression('a OR b AND c'))).toBe('a OR (b AND c)');
    expect(exprSql(parseExpression('a AND b OR c AND d OR e'))).toBe('(a AND b) OR (c AND d) OR e');
    expect(exprSql(parseExpression('(a OR b) AND c'))).toBe('(a OR b) AND c');
    expect(exprSql(parseExpression('x > 0 OR y BETWEEN 1 AND 2 AND z'))).toBe('(x > 0) OR ((y BETWEEN 1 AND 2) AND z)');
  });

  for (const c of CASES) {
    it(`${c.sql}: every combination of true, false and NULL`, async () => {
      const expected = ROWS.map(([a, b, cc]) => c.eval(a, b, cc));
      const passing = expected.flatMap((r, i) => (r === true ? [i] : []));
      const column = async (sql: string) => (await h.rows(sql)).map((r) => r.r);
      const ids = async (sql: string) => (await h.rows(sql)).map((r) => r.id);
      expect(await column(`SELECT ${c.sql} AS r FROM v ORDER BY id`)).toEqual(expected);
      expect(await column(`SELECT (${c.sql}) AS r FROM v ORDER BY id`)).toEqual(expected);
      expect(await ids(`SELECT id FROM v WHERE ${c.sql} ORDER BY id`)).toEqual(passing);
      expect(await ids(`SELECT DISTINCT v.id FROM v JOIN v AS w ON ${c.sql.replace(/\b([abc])\b/g, 'v.$1')} ORDER BY v.id`)).toEqual(passing);
      expect(await ids(`SELECT id FROM v GROUP BY id, a, b, c HAVING ${c.sql} ORDER BY id`)).toEqual(passing);
      expect(await column(`SELECT CASE WHEN ${c.sql} THEN true WHEN NOT (${c.sql}) THEN false END AS r FROM v ORDER BY id`)).toEqual(expected);
    });
  }
});
