/**
 * Grammar node-sql-parser lacked and query/parse once rewrote (prefix operators, EXTRACT, negative
 * NUMERIC scales): a stored CHECK or DEFAULT text (exprSql) reads as SQL again and means the same thing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exprSql, parseExpression } from '../../query/parse/index.js';
import { openSql, type SqlHarness } from './helpers.js';

let h: SqlHarness;
beforeAll(async () => {
  h = await openSql();
});
afterAll(async () => {
  await h.close();
});

const value = async (expr: string): Promise<unknown> => Object.values((await h.rows(`SELECT (${expr})::text`))[0]!)[0];

describe('rewritten forms survive exprSql', () => {
  const cases: [string, string][] = [
    ['@ -5 + 1', '@ ((-5) + 1)'],
    ['~ 5', '~ 5'],
    ['|/ 16', '|/ 16'],
    ["extract(julian from '2024-01-01'::date)", "EXTRACT(julian FROM CAST('2024-01-01' AS date))"],
    ['1234::numeric(2,-2)', 'CAST(1234 AS numeric(2, -2))'],
  ];
  it.each(cases)('%s', async (expr, text) => {
    const stored = exprSql(parseExpression(expr));
    expect(stored.replace(/\s+/g, ' ')).toBe(text);
    expect(await value(stored)).toBe(await value(expr));
  });

  it('a table keeps a CHECK and a DEFAULT written with them', async () => {
    await h.q(
      "CREATE TABLE rw (id int PRIMARY KEY, a int CHECK (@ a < 10), n numeric DEFAULT 1234::numeric(2,-2), d numeric CHECK (extract(julian from '2024-01-01'::date) > 0))",
    );
    await h.q('INSERT INTO rw (id, a) VALUES (1, -9)');
    expect(await h.rows('SELECT a, n::text AS n FROM rw')).toEqual([{ a: -9, n: '1200' }]);
    await expect(h.q('INSERT INTO rw (id, a) VALUES (2, -10)')).rejects.toThrow(/check constraint/);
  });
});
