import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { astTemplateCounts, parseSql } from '../../query/parse/index.js';

/**
 * The parser reuses the AST of a statement of the same shape with other literals
 * (query/parse/ast-templates.ts). Whatever the literals, a templated parse must equal a fresh one.
 */

const int = fc.oneof(fc.integer({ min: 0, max: 1_000_000 }), fc.constantFrom(0, 1, 2147483648, 999999999999999)).map(String);
const num = fc.oneof(
  fc.double({ min: -1e6, max: 1e6, noNaN: true }).map((d) => Math.abs(d).toFixed(3)),
  fc.constantFrom('1e5', '1.5E-3', '12345678901234567890', '0.0', '.5'),
);
const str = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom("it's", 'a\\b', '', "''", '\\', 'ü€😀', '%_x'));
const quoted = (s: string): string => `'${s.replaceAll("'", "''")}'`;
const escaped = (s: string): string => `E'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;

const SHAPES: readonly ((a: string, b: string, c: string, d: string) => string)[] = [
  (a) => `SELECT * FROM facts WHERE id = ${a}`,
  (a, b) => `SELECT id, -${a} AS neg, ${b} FROM t WHERE x BETWEEN -${a} AND ${a}`,
  (a, _b, c) => `SELECT name FROM t WHERE name = ${quoted(c)} OR name LIKE ${quoted(c + '%')} LIMIT ${a} OFFSET ${a}`,
  (_a, _b, c) => `SELECT ${escaped(c)}, $$${c.replaceAll('$', '')}$$ FROM t`,
  (a, b) => `SELECT ${b}::numeric(12,2) + ${a}, ${b} * 2 FROM t ORDER BY 1 DESC`,
  (a, _b, c) => `INSERT INTO t (id, name) VALUES (${a}, ${quoted(c)}), (${a}, NULL) ON CONFLICT (id) DO UPDATE SET name = ${quoted(c)}`,
  (a, b, c) => `UPDATE t SET amount = amount * ${b}, label = ${quoted(c)} WHERE id IN (${a}, ${a}, -${a}) RETURNING id`,
  (a, _b, _c, d) => `SELECT DATE ${quoted(d)}, INTERVAL '1 day', ${quoted(d)}::date FROM t WHERE k > ${a}`,
  (a, b, c) => `SELECT CASE WHEN x > ${a} THEN ${quoted(c)} ELSE ${b} END FROM t GROUP BY 1 HAVING count(*) > ${a}`,
  (a) => `CREATE TABLE x${a.length} (a VARCHAR(${Math.max(1, Number(a) % 100)}), b NUMERIC(10, 2) DEFAULT ${a})`,
];

describe('AST templates', () => {
  it('a templated parse equals a fresh parse for any literals', () => {
    fc.assert(
      fc.property(
        fc.nat(SHAPES.length - 1),
        fc.array(fc.tuple(int, num, str, fc.constantFrom('2024-01-31', 'x')), { minLength: 2, maxLength: 4 }),
        (shape, literalSets) => {
          for (const [a, b, c, d] of literalSets) {
            const sql = SHAPES[shape]!(a, b, c, d);
            expect(parseSql(sql)).toEqual(parseSql(sql, { useTemplates: false }));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('every shape above is templated (the property is not vacuous)', () => {
    SHAPES.forEach((shape, i) => {
      const before = astTemplateCounts();
      parseSql(shape('7', '1.25', "o'k", '2024-01-31'));
      const after = astTemplateCounts();
      expect({ shape: i, untemplated: after.untemplated - before.untemplated }).toEqual({ shape: i, untemplated: 0 });
      expect(after.instantiated).toBe(before.instantiated + 1);
    });
  });

  it('the same shape with other literals does not share (or mutate) one AST', () => {
    const first = parseSql('SELECT * FROM t WHERE id = 1')[0]!;
    const second = parseSql('SELECT * FROM t WHERE id = 2')[0]!;
    expect(JSON.stringify(first.ast)).toContain('"value":1');
    expect(JSON.stringify(second.ast)).toContain('"value":2');
    expect(second.ast).not.toBe(first.ast);
  });

  it('spacing is part of a shape: -7 is a number, - 7 is minus 7', () => {
    for (const [first, second] of [
      ['SELECT a > - 7 FROM t', 'SELECT a>-1 FROM t'],
      ['SELECT 2*-3', 'SELECT 4 * - 5'],
      ['SELECT -2147483648', 'SELECT - 5'],
    ]) {
      parseSql(first!);
      expect(parseSql(second!)).toEqual(parseSql(second!, { useTemplates: false }));
    }
  });

  it('syntax errors keep their own text and position', () => {
    parseSql('SELECT * FROM t WHERE id = 1');
    expect(() => parseSql('SELECT * FROM t WHERE id = = 1')).toThrow(/syntax error at or near "="/);
  });
});
