import { describe, expect, it } from 'vitest';
import { metadataFilterSql } from '../../protocols/pinecone/metadata-filter.js';

describe('Pinecone metadata filters to SQL', () => {
  it('binds every key and value as a parameter, numbering after the params already there', () => {
    const params: unknown[] = ['ns'];
    const sql = metadataFilterSql({ "it's": { $eq: "x'); DROP TABLE t; --" }, year: { $gte: 2000, $lt: 2010 } }, params);
    expect(sql).not.toContain('DROP');
    expect(sql).not.toContain("it's");
    expect(sql).not.toContain('2000');
    expect(sql).toContain('$2');
    expect(params).toEqual(['ns', { "it's": "x'); DROP TABLE t; --" }, { "it's": ["x'); DROP TABLE t; --"] }, 'year', 2000, 'year', 2010]);
  });

  it('translates $and, $or, $in, $nin, $ne, $exists and bare values', () => {
    const params: unknown[] = [];
    const sql = metadataFilterSql(
      { $or: [{ genre: 'a' }, { $and: [{ tags: { $in: ['x', 'y'] } }, { n: { $nin: [1] } }] }], gone: { $exists: false }, k: { $ne: true } },
      params,
    );
    expect(sql.match(/ OR /g)?.length).toBeGreaterThanOrEqual(3);
    expect(sql).toContain('NOT COALESCE(metadata ? $');
    expect(sql).toContain('NOT COALESCE((metadata @> CAST($');
    expect(params).toHaveLength(2 + 4 + 2 + 1 + 2);
  });

  it('refuses unknown operators, wrong operand types, empty lists and deep nesting with 422', () => {
    const bad: unknown[] = [
      { a: { $regex: 'x' } },
      { $not: {} },
      { a: { $gt: 'x' } },
      { a: { $in: [] } },
      { a: { $in: [{}] } },
      { $or: [] },
      { a: {} },
      { a: null },
      [],
      { a: { $exists: 'yes' } },
    ];
    for (const filter of bad) {
      expect(() => metadataFilterSql(filter, []), JSON.stringify(filter)).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR' }));
    }
    let deep: Record<string, unknown> = { a: 1 };
    for (let i = 0; i < 20; i++) deep = { $and: [deep] };
    expect(() => metadataFilterSql(deep, [])).toThrow(/nested deeper/);
    expect(() => metadataFilterSql({ a: { $in: Array.from({ length: 600 }, (_, i) => i) } }, [])).toThrow(/operands/);
  });
});
