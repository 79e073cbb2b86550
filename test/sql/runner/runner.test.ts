import { describe, expect, it } from 'vitest';
import { compareResult, expectedLinesFor, md5OfValues } from './compare.js';
import type { EngineResult, SqlEngine } from './engine.js';
import { formatValue, pgArray, pgJson } from './format.js';
import { appliesTo, hasTopLevelOrderBy, parseSlt } from './parse.js';
import { parsePgArray, portabilityProblems } from './portability.js';
import { runSltText } from './run-file.js';

const F = { float3: false };

describe('slt parser', () => {
  const text = [
    '# comment',
    'hash-threshold 8',
    '',
    'statement ok',
    'CREATE TABLE t (a INTEGER)',
    '',
    'statement error duplicate key value violates unique constraint "t_pkey"',
    'INSERT INTO t VALUES (1)',
    '',
    'skipif svcdb',
    'onlyif postgresql',
    'query IT rowsort label-1',
    'SELECT a,',
    "  'x'",
    'FROM t',
    '----',
    '1 x',
    '2 x',
    '',
    'query error division by zero',
    'SELECT 1 / 0',
    '',
    'query I',
    'SELECT 1',
    '',
    'halt',
  ].join('\n');
  const records = parseSlt(text);

  it('reads statements, queries, conditions, labels and line numbers', () => {
    expect(records.map((r) => [r.kind, r.line])).toEqual([
      ['statement', 4],
      ['statement', 7],
      ['query', 12],
      ['query', 20],
      ['query', 23],
      ['halt', 26],
    ]);
    const [create, failing, query, queryError, noResult] = records;
    expect(create).toMatchObject({ kind: 'statement', expectError: false, errorPattern: null, sql: 'CREATE TABLE t (a INTEGER)' });
    expect(failing).toMatchObject({ expectError: true, errorPattern: 'duplicate key value violates unique constraint "t_pkey"' });
    expect(query).toMatchObject({
      types: 'IT',
      sort: 'rowsort',
      label: 'label-1',
      sql: "SELECT a,\n  'x'\nFROM t",
      expected: ['1 x', '2 x'],
      hashThreshold: 8,
    });
    expect(query!.conditions).toEqual([
      { kind: 'skipif', dialect: 'svcdb' },
      { kind: 'onlyif', dialect: 'postgresql' },
    ]);
    expect(queryError).toMatchObject({ kind: 'query', expectError: true, errorPattern: 'division by zero', types: '' });
    expect(noResult).toMatchObject({ expected: null, sort: 'nosort' });
  });

  it('applies skipif/onlyif like run.mjs', () => {
    const svcdb = new Set(['postgresql', 'postgres', 'svcdb']);
    const pglite = new Set(['postgresql', 'postgres', 'pglite']);
    expect(appliesTo(records[2]!.conditions, svcdb)).toBe(false);
    expect(appliesTo(records[2]!.conditions, pglite)).toBe(true);
    expect(appliesTo([{ kind: 'onlyif', dialect: 'mysql' }], pglite)).toBe(false);
  });
});

describe('hasTopLevelOrderBy', () => {
  it("sees only the statement's own ORDER BY", () => {
    expect(hasTopLevelOrderBy('SELECT a FROM t ORDER BY a')).toBe(true);
    expect(hasTopLevelOrderBy('SELECT row_number() OVER (ORDER BY a) FROM t')).toBe(false);
    expect(hasTopLevelOrderBy('SELECT * FROM (SELECT a FROM t ORDER BY a LIMIT 3) s')).toBe(false);
    expect(hasTopLevelOrderBy("SELECT 'order by' FROM t")).toBe(false);
  });
});

describe('result formatting (run.mjs rules)', () => {
  it('prints NULL, booleans, the empty string, numbers and strings', () => {
    expect(formatValue(null, 'T', 'TEXT', F)).toBe('NULL');
    expect(formatValue(undefined, 'T', '', F)).toBe('NULL');
    expect(formatValue(true, 'T', 'BOOLEAN', F)).toBe('t');
    expect(formatValue(false, 'T', 'bool', F)).toBe('f');
    expect(formatValue('', 'T', 'TEXT', F)).toBe('(empty)');
    expect(formatValue(0.1, 'R', 'DOUBLE PRECISION', F)).toBe('0.1');
    expect(formatValue('123.40', 'R', 'NUMERIC(10,2)', F)).toBe('123.40');
    expect(formatValue('9007199254740993', 'I', 'BIGINT', F)).toBe('9007199254740993');
  });

  it('prints jsonb with PostgreSQL separators, and keeps a string as its text form', () => {
    expect(formatValue({ a: [1, { b: null }], c: 'x' }, 'T', 'JSONB', F)).toBe('{"a": [1, {"b": null}], "c": "x"}');
    expect(formatValue('{"a": 1}', 'T', 'jsonb', F)).toBe('{"a": 1}');
    expect(pgJson([])).toBe('[]');
    expect(pgJson({})).toBe('{}');
  });

  it('prints arrays as PostgreSQL does', () => {
    expect(formatValue([1, null, 3], 'T', 'INTEGER[]', F)).toBe('{1,NULL,3}');
    expect(pgArray(['a b', '', 'x', true, [1, 2]])).toBe('{"a b","",x,t,{1,2}}');
    expect(parsePgArray('{"a b","",NULL,x,{1,2}}')).toEqual(['a b', '', null, 'x', ['1', '2']]);
    expect(parsePgArray('{"x\\"y"}')).toEqual(['x"y']);
  });

  it('applies float3 only when asked', () => {
    expect(formatValue(1.23456, 'R', 'REAL', { float3: true })).toBe('1.235');
    expect(formatValue('7.9', 'I', 'NUMERIC', { float3: true })).toBe('7');
    expect(formatValue(1.23456, 'R', 'REAL', F)).toBe('1.23456');
  });
});

describe('result comparison (run.mjs rules)', () => {
  it('compares row per line with whitespace collapsed, and value per line for one column', () => {
    expect(compareResult([['1', 'a  b']], ['1 a b'], 'nosort', 0).ok).toBe(true);
    expect(compareResult([['1'], ['2']], ['1', '2'], 'nosort', 0).ok).toBe(true);
    expect(compareResult([['1'], ['2']], ['2', '1'], 'nosort', 0).ok).toBe(false);
    expect(
      compareResult(
        [
          ['1', 'x'],
          ['2', 'y'],
        ],
        ['1', 'x', '2', 'y'],
        'nosort',
        0,
      ).ok,
    ).toBe(true);
    expect(compareResult([], [], 'nosort', 0).ok).toBe(true);
    expect(compareResult([['1']], null, 'nosort', 0).ok).toBe(false);
  });

  it('sorts rows for rowsort and values for valuesort', () => {
    expect(
      compareResult(
        [
          ['2', 'b'],
          ['10', 'a'],
        ],
        ['2 b', '10 a'],
        'rowsort',
        0,
      ).ok,
    ).toBe(true);
    expect(
      expectedLinesFor(
        [
          ['2', 'b'],
          ['10', 'a'],
        ],
        'rowsort',
        0,
      ),
    ).toEqual(['10 a', '2 b']);
    expect(
      compareResult(
        [
          ['b', 'a'],
          ['c', 'd'],
        ],
        ['a', 'b', 'c', 'd'],
        'valuesort',
        0,
      ).ok,
    ).toBe(true);
  });

  it('hashes results past the threshold', () => {
    const rows = [
      ['1', 'x'],
      ['2', 'y'],
    ];
    const lines = expectedLinesFor(rows, 'nosort', 3);
    expect(lines).toEqual([`4 values hashing to ${md5OfValues(['1', 'x', '2', 'y'])}`]);
    expect(compareResult(rows, lines, 'nosort', 0).ok).toBe(true);
    expect(
      compareResult(
        [
          ['1', 'x'],
          ['2', 'z'],
        ],
        lines,
        'nosort',
        0,
      ).ok,
    ).toBe(false);
  });
});

describe('portability checks (PostgreSQL text vs JSON)', () => {
  it('flags timestamps, unusual floats, jsonb string scalars and key orders JSON cannot keep', () => {
    expect(portabilityProblems([{ name: 't', type: 'timestamptz' }], [['2024-01-01 00:00:00+00']])).toHaveLength(1);
    expect(portabilityProblems([{ name: 'f', type: 'float8' }], [['1e-05']])).toHaveLength(1);
    expect(portabilityProblems([{ name: 'f', type: 'float8' }], [['0.30000000000000004']])).toHaveLength(0);
    expect(portabilityProblems([{ name: 'j', type: 'jsonb' }], [['"abc"']])).toHaveLength(1);
    expect(portabilityProblems([{ name: 'j', type: 'jsonb' }], [['{"b": 1, "10": 2}']])).toHaveLength(1);
    expect(portabilityProblems([{ name: 'j', type: 'jsonb' }], [['{"a": 1.0}']])).toHaveLength(1);
    expect(portabilityProblems([{ name: 'j', type: 'jsonb' }], [['{"a": [1, {"b": null}]}']])).toHaveLength(0);
    expect(portabilityProblems([{ name: 'a', type: '_text' }], [['{"NULL",b}']])).toHaveLength(1);
    expect(portabilityProblems([{ name: 'a', type: '_int4' }], [['{1,NULL}']])).toHaveLength(0);
    expect(
      portabilityProblems(
        [
          { name: 'd', type: 'date' },
          { name: 'n', type: 'numeric' },
        ],
        [['2024-01-01', '1.50']],
      ),
    ).toHaveLength(0);
  });
});

/** An engine that answers from a script, to test the record loop without a database. */
class ScriptedEngine implements SqlEngine {
  readonly name = 'scripted';
  readonly dialects = new Set(['postgresql', 'scripted']);
  readonly seen: string[] = [];
  constructor(private readonly answers: Record<string, EngineResult>) {}
  async execute(sql: string): Promise<EngineResult> {
    this.seen.push(sql);
    return this.answers[sql] ?? { kind: 'rows', columns: [], rows: [] };
  }
  async close(): Promise<void> {}
}

describe('record loop', () => {
  it('reports every failing record with its line, and checks error patterns and column counts', async () => {
    const engine = new ScriptedEngine({
      'SELECT 1': { kind: 'rows', columns: [{ name: 'x', type: 'INTEGER' }], rows: [[1]] },
      'SELECT 2': { kind: 'rows', columns: [{ name: 'x', type: 'INTEGER' }], rows: [[3]] },
      'BAD': { kind: 'error', message: 'INVALID_QUERY: syntax error at or near "BAD"' },
      'SELECT 1, 2': {
        kind: 'rows',
        columns: [
          { name: 'a', type: 'INTEGER' },
          { name: 'b', type: 'INTEGER' },
        ],
        rows: [[1, 2]],
      },
    });
    const text = [
      'query I',
      'SELECT 1',
      '----',
      '1',
      '',
      'query I',
      'SELECT 2',
      '----',
      '2',
      '',
      'statement error syntax error',
      'BAD',
      '',
      'statement error division by zero',
      'BAD',
      '',
      'query I',
      'SELECT 1, 2',
      '----',
      '1 2',
      '',
      'skipif scripted',
      'statement ok',
      'NEVER RUN',
      '',
      'halt',
      '',
      'statement ok',
      'AFTER HALT',
    ].join('\n');
    const report = await runSltText(text, 'x.slt', engine);
    expect(report.passed).toBe(2);
    expect(report.skipped).toBe(1);
    expect(report.failures.map((f) => f.line)).toEqual([6, 14, 17]);
    expect(report.failures[0]).toMatchObject({ expected: '2', actual: '3' });
    expect(engine.seen).not.toContain('NEVER RUN');
    expect(engine.seen).not.toContain('AFTER HALT');
    const loose = await runSltText(text, 'x.slt', engine, { errorMatching: 'any' });
    expect(loose.failures.map((f) => f.line)).toEqual([6, 17]);
  });
});
