/** parseExpression reads exactly one expression (stored CHECK and DEFAULT texts): nothing else of a SELECT passes. */
import { describe, expect, it } from 'vitest';
import { exprSql, parseExpression } from '../../query/parse/index.js';

describe('parseExpression', () => {
  it('reads one expression and prints it back', () => {
    expect(exprSql(parseExpression('score >= 0 AND name <> $$x$$'))).toBe("(score >= 0) AND (name <> 'x')");
  });

  it.each(['1 WHERE false', '1 FROM t', '1 LIMIT 0', '1, 2', '1; SELECT 2', 'DISTINCT 1', '1 GROUP BY 1'])('refuses %s', (text) => {
    expect(() => parseExpression(text)).toThrow(/expected one expression|syntax error/);
  });
});
