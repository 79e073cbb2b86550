/**
 * The TypeSystem surface the engine uses, without PostgreSQL: type names, cast contexts and
 * modifiers, JSON I/O, commonType, resolution flags, pgvector functions, error codes.
 */
import { describe, expect, it } from 'vitest';
import { isSvcError } from '../../../core/errors.js';
import { arrayOf, T, typeSystem as ts, type QType, type QValue } from '../../../query/types/index.js';

function fails(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (e) {
    if (isSvcError(e)) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error('expected a SvcError');
}

describe('parseTypeName and typeText', () => {
  const cases: [string, string][] = [
    ['serial', 'INTEGER'],
    ['bigserial', 'BIGINT'],
    ['smallserial', 'SMALLINT'],
    ['int', 'INTEGER'],
    ['integer', 'INTEGER'],
    ['int4', 'INTEGER'],
    ['int2', 'SMALLINT'],
    ['smallint', 'SMALLINT'],
    ['int8', 'BIGINT'],
    ['BIGINT', 'BIGINT'],
    ['numeric', 'NUMERIC'],
    ['decimal(10, 2)', 'NUMERIC(10,2)'],
    ['numeric(5)', 'NUMERIC(5,0)'],
    ['real', 'REAL'],
    ['float4', 'REAL'],
    ['double precision', 'DOUBLE PRECISION'],
    ['float8', 'DOUBLE PRECISION'],
    ['float', 'DOUBLE PRECISION'],
    ['float(24)', 'REAL'],
    ['float(25)', 'DOUBLE PRECISION'],
    ['boolean', 'BOOLEAN'],
    ['bool', 'BOOLEAN'],
    ['text', 'TEXT'],
    ['varchar(20)', 'VARCHAR(20)'],
    ['character varying(5)', 'VARCHAR(5)'],
    ['varchar', 'VARCHAR'],
    ['char(3)', 'CHAR(3)'],
    ['character(2)', 'CHAR(2)'],
    ['char', 'CHAR(1)'],
    ['jsonb', 'JSONB'],
    ['json', 'JSONB'],
    ['timestamp', 'TIMESTAMP'],
    ['timestamp without time zone', 'TIMESTAMP'],
    ['timestamp(3)', 'TIMESTAMP'],
    ['timestamptz', 'TIMESTAMP WITH TIME ZONE'],
    ['timestamp with time zone', 'TIMESTAMP WITH TIME ZONE'],
    ['timestamp(6) with time zone', 'TIMESTAMP WITH TIME ZONE'],
    ['date', 'DATE'],
    ['uuid', 'UUID'],
    ['vector(3)', 'VECTOR(3)'],
    ['interval', 'INTERVAL'],
    ['interval day to second', 'INTERVAL'],
    ['int[]', 'INTEGER[]'],
    ['text[][]', 'TEXT[]'],
    ['varchar(10)[]', 'VARCHAR(10)[]'],
    ['integer array', 'INTEGER[]'],
    ['  Double   Precision ', 'DOUBLE PRECISION'],
  ];
  it.each(cases)('%s -> %s', (name, text) => {
    expect(ts.typeText(ts.parseTypeName(name))).toBe(text);
  });
  it('refuses unknown types and bad modifiers', () => {
    expect(fails(() => ts.parseTypeName('money')).message).toBe('type "money" does not exist');
    expect(fails(() => ts.parseTypeName('varchar(0)')).message).toBe('length for type varchar must be at least 1');
    expect(fails(() => ts.parseTypeName('numeric(0)')).code).toBe('INVALID_QUERY');
    expect(fails(() => ts.parseTypeName('vector(0)')).code).toBe('INVALID_QUERY');
  });
});

describe('resolveCast: contexts and modifiers', () => {
  const cast = (from: QType, to: QType, mode: 'explicit' | 'assignment' | 'implicit', v: QValue): QValue => {
    const fn = ts.resolveCast(from, to, mode);
    if (fn === null) throw new Error(`no ${mode} cast`);
    return fn(v);
  };
  it('follows pg_cast contexts', () => {
    expect(ts.resolveCast(T.int4, T.int8, 'implicit')).not.toBeNull();
    expect(ts.resolveCast(T.int8, T.int4, 'implicit')).toBeNull();
    expect(ts.resolveCast(T.int8, T.int4, 'assignment')).not.toBeNull();
    expect(ts.resolveCast(T.text, T.int4, 'assignment')).toBeNull();
    expect(ts.resolveCast(T.text, T.int4, 'explicit')).not.toBeNull();
    expect(ts.resolveCast(T.int4, T.text, 'implicit')).toBeNull();
    expect(ts.resolveCast(T.int4, T.text, 'assignment')).not.toBeNull();
    expect(ts.resolveCast(T.bool, T.int4, 'assignment')).toBeNull();
    expect(ts.resolveCast(T.bool, T.int4, 'explicit')).not.toBeNull();
    expect(ts.resolveCast(T.numeric, T.float8, 'implicit')).not.toBeNull();
    expect(ts.resolveCast(T.float8, T.numeric, 'implicit')).toBeNull();
    expect(ts.resolveCast(T.date, T.timestamptz, 'implicit')).not.toBeNull();
    expect(ts.resolveCast(T.timestamptz, T.date, 'implicit')).toBeNull();
    expect(ts.resolveCast(T.uuid, T.int4, 'explicit')).toBeNull();
    expect(ts.resolveCast(T.jsonb, T.text, 'assignment')).not.toBeNull();
    expect(ts.resolveCast(T.text, T.jsonb, 'implicit')).toBeNull();
    expect(ts.resolveCast(T.unknown, T.jsonb, 'implicit')).not.toBeNull();
    expect(ts.resolveCast(arrayOf(T.int4), arrayOf(T.int8), 'implicit')).not.toBeNull();
    expect(ts.resolveCast(arrayOf(T.int8), arrayOf(T.int4), 'implicit')).toBeNull();
  });
  it('checks ranges and lengths on assignment, truncates on explicit casts', () => {
    expect(cast(T.int8, T.int4, 'assignment', 5n)).toBe(5);
    expect(fails(() => cast(T.int8, T.int4, 'assignment', 2n ** 40n)).message).toBe('integer out of range');
    const v3 = { name: 'varchar', length: 3 } as const;
    expect(fails(() => cast(T.text, v3, 'assignment', 'abcd'))).toEqual({ code: 'TYPE_MISMATCH', message: 'value too long for type character varying(3)' });
    expect(cast(T.text, v3, 'assignment', 'abc  ')).toBe('abc');
    expect(cast(T.text, v3, 'explicit', 'abcd')).toBe('abc');
    expect(cast(T.text, { name: 'char', length: 4 }, 'assignment', 'ab')).toBe('ab  ');
    expect(cast(T.unknown, { name: 'numeric', precision: 5, scale: 2 }, 'implicit', '1.005')).toBe('1.01');
    expect(fails(() => cast(T.numeric, { name: 'numeric', precision: 3, scale: 2 }, 'assignment', '12.3')).message).toBe('numeric field overflow');
    expect(cast(T.int4, T.text, 'assignment', 42)).toBe('42');
    expect(cast(T.bool, T.text, 'assignment', true)).toBe('true');
    expect(cast(T.jsonb, T.text, 'assignment', { b: 1, a: [1, 2] })).toBe('{"a": [1, 2], "b": 1}');
    expect(fails(() => cast(T.unknown, { name: 'vector', dimension: 3 }, 'implicit', '[1,2]')).message).toBe('expected 3 dimensions, not 2');
    expect(cast({ name: 'vector', dimension: 2 }, arrayOf(T.float4), 'implicit', Float32Array.from([1, 2]))).toEqual([1, 2]);
    expect(cast(arrayOf(T.int4), { name: 'vector', dimension: 2 }, 'assignment', [1, 2])).toEqual(Float32Array.from([1, 2]));
  });
  it('reports data errors as TYPE_MISMATCH with the SQLSTATE in details', () => {
    let thrown: unknown = null;
    try {
      ts.parseText(T.int4, 'abc');
    } catch (e) {
      thrown = e;
    }
    expect(isSvcError(thrown)).toBe(true);
    if (!isSvcError(thrown)) return;
    expect(thrown.code).toBe('TYPE_MISMATCH');
    expect(thrown.message).toBe('invalid input syntax for type integer: "abc"');
    expect(thrown.details.sqlstate).toBe('22P02');
  });
});

describe('toJson and fromJson', () => {
  it('serializes values as the query results show them', () => {
    expect(ts.toJson(T.int8, 42n)).toBe(42);
    expect(ts.toJson(T.int8, 2n ** 60n)).toBe('1152921504606846976');
    expect(ts.toJson(T.numeric, '1.50')).toBe('1.50');
    expect(ts.toJson(T.float8, NaN)).toBe('NaN');
    expect(ts.toJson(T.float4, Math.fround(0.1))).toBe(0.1);
    expect(ts.toJson(T.timestamptz, 1_700_000_000_123_456n)).toBe('2023-11-14T22:13:20.123456Z');
    expect(ts.toJson(T.timestamp, 0n)).toBe('1970-01-01T00:00:00Z');
    expect(ts.toJson(T.date, 19_000)).toBe('2022-01-08');
    expect(ts.toJson(T.interval, { months: 14, days: 3, micros: 3_600_000_000n })).toBe('1 year 2 mons 3 days 01:00:00');
    expect(ts.toJson(arrayOf(T.int8), [1n, null, 2n ** 60n])).toEqual([1, null, '1152921504606846976']);
    expect(ts.toJson({ name: 'vector', dimension: 2 }, Float32Array.from([0.1, 2]))).toEqual([0.1, 2]);
    expect(ts.toJson(T.jsonb, { a: [1, null] })).toEqual({ a: [1, null] });
    expect(ts.toJson(T.bool, null)).toBeNull();
  });
  it('reads JSON parameters and row values', () => {
    expect(ts.fromJson(T.int8, '9007199254740993')).toBe(9007199254740993n);
    expect(ts.fromJson(T.int8, 5)).toBe(5n);
    expect(ts.fromJson(T.numeric, 1.5)).toBe('1.5');
    expect(ts.fromJson({ name: 'numeric', precision: 5, scale: 2 }, '1.005')).toBe('1.01');
    expect(ts.fromJson(T.timestamptz, '2024-01-02T03:04:05+02:00')).toBe(ts.parseText(T.timestamptz, '2024-01-02 01:04:05Z'));
    expect(ts.fromJson(arrayOf(T.text), ['a', null])).toEqual(['a', null]);
    expect(ts.fromJson({ name: 'vector', dimension: 2 }, [1, 2])).toEqual(Float32Array.from([1, 2]));
    // Each element rounded to float4 as the text form is; NaN and past float4 refused, a non-number first a type mismatch.
    const third = ts.fromJson(T.vector, [0.1, -1 / 3, 3.4028234663852886e38]) as Float32Array;
    expect(Array.from(third)).toEqual([Math.fround(0.1), Math.fround(-1 / 3), Math.fround(3.4028234663852886e38)]);
    expect(third).toEqual(ts.parseText(T.vector, '[0.1,-0.3333333333333333,3.4028234663852886e38]'));
    expect(fails(() => ts.fromJson(T.vector, [1, NaN])).message).toBe('NaN not allowed in vector');
    expect(fails(() => ts.fromJson(T.vector, [1, 3.5e38])).message).toBe('infinite value not allowed in vector');
    expect(fails(() => ts.fromJson(T.vector, [NaN, 'x'])).code).toBe('TYPE_MISMATCH');
    expect(ts.fromJson(T.jsonb, { a: 1 })).toEqual({ a: 1 });
    expect(fails(() => ts.fromJson(T.int4, 1.5)).code).toBe('TYPE_MISMATCH');
    expect(fails(() => ts.fromJson(T.int4, 2 ** 40)).message).toBe('integer out of range');
    expect(fails(() => ts.fromJson({ name: 'varchar', length: 2 }, 'abc')).message).toBe('value too long for type character varying(2)');
    expect(fails(() => ts.fromJson(T.text, 5)).code).toBe('TYPE_MISMATCH');
  });
});

describe('commonType (UNION, CASE, COALESCE, IN)', () => {
  const ct = (...types: QType[]): string | null => {
    const t = ts.commonType(types);
    return t === null ? null : ts.typeText(t);
  };
  it('follows select_common_type', () => {
    expect(ct(T.int4, T.int8)).toBe('BIGINT');
    expect(ct(T.int4, T.numeric)).toBe('NUMERIC');
    expect(ct(T.int4, T.float4)).toBe('REAL');
    expect(ct(T.numeric, T.float8, T.int2)).toBe('DOUBLE PRECISION');
    expect(ct(T.text, T.unknown)).toBe('TEXT');
    expect(ct(T.unknown, T.unknown)).toBe('TEXT');
    expect(ct(T.unknown, T.int4)).toBe('INTEGER');
    expect(ct(T.int4, T.text)).toBeNull();
    expect(ct(T.date, T.timestamp)).toBe('TIMESTAMP');
    expect(ct(T.timestamp, T.timestamptz)).toBe('TIMESTAMP WITH TIME ZONE');
    expect(ct({ name: 'varchar', length: 3 }, { name: 'varchar', length: 5 })).toBe('VARCHAR');
    expect(ct({ name: 'varchar', length: 3 }, { name: 'varchar', length: 3 })).toBe('VARCHAR(3)');
    expect(ct(T.varchar, T.text)).toBe('VARCHAR'); // PostgreSQL keeps the first of two mutually implicit types
    expect(ct(T.text, T.varchar)).toBe('TEXT');
    expect(ct({ name: 'char', length: 2 }, T.text)).toBe('CHAR');
    expect(ct(T.bool, T.int4)).toBeNull();
    expect(ct(arrayOf(T.int4), arrayOf(T.int8))).toBe('BIGINT[]');
  });
});

describe('resolution', () => {
  it('marks volatile functions and strictness', () => {
    for (const name of ['now', 'random', 'gen_random_uuid', 'clock_timestamp']) {
      expect(ts.resolveFunction(name, [])?.immutable).toBe(false);
    }
    expect(ts.resolveFunction('upper', [T.text])?.immutable).toBe(true);
    expect(ts.resolveFunction('concat', [T.text, T.int4])?.strict).toBe(false);
    expect(ts.resolveFunction('nosuch', [])).toBeNull();
    expect(ts.resolveFunction('upper', [T.int4])).toBeNull();
    const uuid = ts.resolveFunction('gen_random_uuid', [])!.impl([]) as string;
    expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const now = ts.resolveFunction('now', [])!;
    expect(now.returnType).toEqual(T.timestamptz);
    expect(Number(now.impl([]) as bigint) / 1000).toBeCloseTo(Date.now(), -3);
  });
  it('resolves unknown literals against the other side and casts varchar to text', () => {
    expect(ts.resolveFunction('=', [T.int4, T.unknown])?.argTypes).toEqual([T.int4, T.int4]);
    expect(ts.resolveFunction('=', [T.unknown, T.unknown])?.argTypes).toEqual([T.text, T.text]);
    expect(ts.resolveFunction('||', [T.varchar, T.varchar])?.argTypes).toEqual([T.text, T.text]);
    expect(ts.resolveFunction('->', [T.jsonb, T.unknown])?.argTypes).toEqual([T.jsonb, T.text]);
    expect(ts.resolveFunction('+', [T.int4, T.int8])?.returnType).toEqual(T.int8);
    expect(ts.resolveFunction('+', [T.float4, T.int4])?.returnType).toEqual(T.float8);
    expect(ts.resolveFunction('-', [T.int4])?.returnType).toEqual(T.int4);
  });
  it('count(*), count(x), and aggregates over no rows', () => {
    const star = ts.resolveAggregate('count', [], { distinct: false, star: true })!;
    const s = star.newState();
    s.step([]);
    s.step([]);
    expect(s.result()).toBe(2n);
    expect(ts.resolveAggregate('sum', [T.int4], { distinct: false, star: false })!.newState().result()).toBeNull();
    expect(ts.resolveAggregate('count', [T.text], { distinct: true, star: false })!.newState().result()).toBe(0n);
    expect(ts.resolveAggregate('sum', [T.text], { distinct: false, star: false })).toBeNull();
  });
});

describe('pgvector operators and functions', () => {
  const v = (...xs: number[]): Float32Array => Float32Array.from(xs);
  const call = (name: string, ...args: Float32Array[]): QValue => {
    const f = ts.resolveFunction(
      name,
      args.map(() => T.vector),
    );
    if (f === null) throw new Error(`no ${name}`);
    return f.impl(args);
  };
  it('distances as pgvector computes them', () => {
    expect(call('<->', v(1, 2, 3), v(4, 6, 3))).toBe(5);
    expect(call('l2_distance', v(0, 0), v(3, 4))).toBe(5);
    expect(call('<#>', v(1, 2, 3), v(4, 5, 6))).toBe(-32);
    expect(call('inner_product', v(1, 2, 3), v(4, 5, 6))).toBe(32);
    expect(call('<=>', v(1, 0), v(0, 1))).toBe(1);
    expect(call('cosine_distance', v(1, 1), v(2, 2))).toBeCloseTo(0, 7);
    expect(Number.isNaN(call('<=>', v(0, 0), v(1, 1)))).toBe(true);
    expect(call('vector_dims', v(1, 2, 3))).toBe(3);
    expect(call('vector_norm', v(3, 4))).toBe(5);
    expect(call('l1_distance', v(1, 2), v(3, 5))).toBe(5);
    expect(call('+', v(1, 2), v(3, 4))).toEqual(v(4, 6));
    expect(fails(() => call('<->', v(1, 2), v(1, 2, 3))).message).toBe('different vector dimensions 2 and 3');
  });
  it('text I/O', () => {
    expect(ts.formatText(T.vector, v(1, 2.5, -0.1))).toBe('[1,2.5,-0.1]');
    expect(ts.parseText(T.vector, ' [1, 2.5,3e2] ')).toEqual(v(1, 2.5, 300));
    expect(fails(() => ts.parseText(T.vector, '[1,NaN]')).message).toBe('NaN not allowed in vector');
    expect(fails(() => ts.parseText(T.vector, '[]')).message).toBe('vector must have at least 1 dimension');
    expect(fails(() => ts.parseText(T.vector, '1,2')).code).toBe('TYPE_MISMATCH');
  });
});

describe('documented differences from PostgreSQL (docs/sql-types.md)', () => {
  it('unknown time zone names in timestamp input are refused', () => {
    expect(fails(() => ts.parseText(T.timestamptz, '2024-01-01 10:00 Mars/Olympus')).code).toBe('TYPE_MISMATCH');
  });
});

describe('jsonb as PostgreSQL keeps it (formerly documented differences)', () => {
  it('jsonb numbers are numeric: 1.50 reads back as 1.50, big integers exact', () => {
    expect(ts.formatText(T.jsonb, ts.parseText(T.jsonb, '{"a": 1.50}'))).toBe('{"a": 1.50}');
    expect(ts.formatText(T.jsonb, ts.parseText(T.jsonb, '12345678901234567890123'))).toBe('12345678901234567890123');
    expect(ts.formatText(T.jsonb, ts.parseText(T.jsonb, '[1e2, 1.0e1, -0.0]'))).toBe('[100, 10, 0.0]');
  });
  it('a top-level JSON null is a jsonb value, not SQL NULL; nested nulls are kept', () => {
    expect(ts.parseText(T.jsonb, 'null')).not.toBeNull();
    expect(ts.formatText(T.jsonb, ts.parseText(T.jsonb, 'null'))).toBe('null');
    const arrow = ts.resolveFunction('->', [T.jsonb, T.text])!;
    expect(arrow.impl([{ a: null }, 'a'])).not.toBeNull();
    expect(arrow.impl([{ a: null }, 'b'])).toBeNull();
    expect(ts.formatText(T.jsonb, ts.parseText(T.jsonb, '[null, {"a": null}]'))).toBe('[null, {"a": null}]');
  });
});
