import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caught, openSql, type SqlHarness } from './helpers.js';

/**
 * svcdb's choice for PostgreSQL's json functions (docs/sql.md, "json is jsonb"): they return
 * jsonb, the same value over the JSON wire, printed as jsonb prints it. PostgreSQL's json would
 * keep the text as built (`{"id":1,"name":"x"}`); test/sql/json-builders.slt checks the values
 * against PostgreSQL. And what stays refused: a whole row as a value, a whole row that cannot be
 * told from an outer join's missing row.
 */
describe('json builders over rows', () => {
  let h: SqlHarness;
  beforeAll(async () => {
    h = await openSql();
    await h.q('CREATE TABLE o (id INT PRIMARY KEY, name TEXT)');
    await h.q("INSERT INTO o VALUES (1, 'x')");
    await h.q('CREATE TABLE loose (a INT, b TEXT)');
  });
  afterAll(async () => {
    await h.close();
  });

  it('returns jsonb from the json functions, printed as jsonb', async () => {
    const r = await h.q("SELECT row_to_json(o) AS r, row_to_json(o)::text AS t, json_build_object('b', 1, 'a', 2, 'b', 3)::text AS dup FROM o");
    expect(r.columns.map((c) => c.type)).toEqual(['JSONB', 'TEXT', 'TEXT']);
    expect(r.rows).toEqual([{ r: { id: 1, name: 'x' }, t: '{"id": 1, "name": "x"}', dup: '{"a": 2, "b": 3}' }]);
    expect(await h.rows('SELECT json_agg(id)::text AS a, to_json(1.50)::text AS n FROM o')).toEqual([{ a: '[1]', n: '1.50' }]);
  });

  it('refuses a whole row as a value, and one on the nullable side without a NOT NULL column', async () => {
    expect(await caught(h.q('SELECT o FROM o'))).toMatchObject({ code: 'INVALID_QUERY', details: { reason: 'unsupported' } });
    expect(await caught(h.q('SELECT o.id FROM o WHERE o IS NOT NULL'))).toMatchObject({ code: 'INVALID_QUERY', details: { reason: 'unsupported' } });
    // A name that is an ambiguous column and an alias keeps the ambiguity error.
    expect(await caught(h.q('SELECT a FROM loose a, loose b'))).toMatchObject({ code: 'INVALID_QUERY', message: 'column reference "a" is ambiguous' });
    const outer = await caught(h.q('SELECT to_jsonb(l) FROM o LEFT JOIN loose l ON l.a = o.id'));
    expect(outer).toMatchObject({ code: 'INVALID_QUERY', details: { reason: 'unsupported' } });
    expect(outer.message).toContain('nullable side of an outer join');
    // The inner side of the same join has no such question.
    expect(await h.rows('SELECT to_jsonb(l) AS j FROM o JOIN loose l ON l.a = o.id')).toEqual([]);
  });

  it('refuses row_to_json with pretty_bool and json_each inside a select-list expression (records)', async () => {
    expect(await caught(h.q('SELECT row_to_json(o, true) FROM o'))).toMatchObject({ details: { reason: 'unsupported' } });
    expect(await caught(h.q(`SELECT (json_each('{"a": 1}')).key`))).toMatchObject({ details: { reason: 'unsupported' } });
    // as a whole select-list item, the record's text (test/sql/srf-grouped.slt)
    expect(await h.rows(`SELECT json_each('{"a": 1}') AS kv`)).toEqual([{ kv: '(a,1)' }]);
  });
});
