import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkExpression } from '../../query/index.js';
import { caught, openSql, type SqlHarness } from './helpers.js';

const rules = { what: 'filter', textBytesMax: 1024 };
const opts = { timeoutMs: 30_000, maxRows: 10_000, tenant: 'default' };

describe('checkExpression: one SQL expression and nothing else', () => {
  it('accepts expressions, strings holding anything, functions and operators', () => {
    expect(checkExpression(" a = 1 AND b <> 'x; DROP TABLE t -- )' ", rules)).toBe("a = 1 AND b <> 'x; DROP TABLE t -- )'");
    for (const ok of [
      '(a > 1) OR (b IS NULL)',
      "lower(name) LIKE 'a%'",
      'a IN (1, 2, 3)',
      "meta->>'k' = 'v'",
      'NOT (a BETWEEN 1 AND 3)',
      'true',
      '"Weird Col" = 2',
    ]) {
      expect(checkExpression(ok, rules)).toBe(ok);
    }
  });

  it.each([
    ['1=1; DROP TABLE x', 'semicolon'],
    ['1=1) OR (1=1', 'unbalanced'],
    ['(1=1', 'unbalanced'],
    ['1=1 UNION SELECT 1', 'not_one_expression'],
    ['1=1 -- rest', 'comment'],
    ['1=1 /* c */', 'comment'],
    ['/* c */ 1=1', 'comment'],
    ['a = $1', 'parameter'],
    ['1 AS x', 'not_one_expression'],
    ['1, 2', 'not_one_expression'],
    ['a FROM t', 'not_one_expression'],
    ['1=1 ORDER BY a', 'not_one_expression'],
    ['1=1 LIMIT 1', 'not_one_expression'],
    ['*', 'not_one_expression'],
    ['a IN (SELECT id FROM other)', 'subquery'],
    ['EXISTS (SELECT 1)', 'subquery'],
    ['', 'empty'],
  ])('refuses %j (%s)', (text, reason) => {
    let error: { code?: string; details?: Record<string, unknown> } = {};
    try {
      checkExpression(text, rules);
    } catch (e) {
      error = e as typeof error;
    }
    expect(error.code).toBe('INVALID_QUERY');
    expect(error.details?.reason).toBe(reason);
  });

  it('allows subqueries only when asked', () => {
    expect(checkExpression('a IN (SELECT 1)', { ...rules, allowSubqueries: true })).toBe('a IN (SELECT 1)');
  });

  it('bounds the text', () => {
    expect(() => checkExpression(`a = '${'x'.repeat(2000)}'`, rules)).toThrow(/longer than 1024 bytes/);
  });
});

describe('SqlEngine.executeDdlBatch and insertJson', () => {
  let h: SqlHarness;
  beforeAll(async () => {
    h = await openSql();
  });
  afterAll(() => h.close());

  it('a batch is one log record: a failing statement leaves nothing, and says which one failed', async () => {
    const head = h.stack.log.headLsn;
    const error = await caught(
      h.engine.executeDdlBatch(['CREATE TABLE b1 (id INT PRIMARY KEY, v INT)', 'CREATE INDEX b1_v ON b1 (v)', 'CREATE INDEX b1_x ON b1 (nope)'], opts),
    );
    expect(error).toMatchObject({ code: 'COLUMN_NOT_FOUND', details: { statement_index: 2 } });
    expect(h.stack.log.headLsn).toBe(head);
    expect((await caught(h.q('SELECT * FROM b1'))).code).toBe('TABLE_NOT_FOUND');
    expect(await h.engine.executeDdlBatch(['CREATE TABLE b1 (id INT PRIMARY KEY, v INT)', 'CREATE INDEX b1_v ON b1 (v)'], opts)).toBe(true);
    expect(h.stack.log.headLsn).toBe(head + 1);
    expect(h.stack.projections.catalog.tableByName('default', 'public', 'b1')!.def.indexes.map((i) => i.name)).toEqual(['b1_pkey', 'b1_v']);
  });

  it('later statements see earlier ones, on a table with rows too', async () => {
    await h.q('INSERT INTO b1 VALUES (1, 1), (2, 2)');
    await h.engine.executeDdlBatch(
      ["ALTER TABLE b1 ADD COLUMN w TEXT DEFAULT 'a'", 'ALTER TABLE b1 RENAME COLUMN w TO w2', 'CREATE INDEX b1_w2 ON b1 (w2)'],
      opts,
    );
    expect(await h.rows('SELECT id, w2 FROM b1 WHERE w2 = $1 ORDER BY id', ['a'])).toEqual([
      { id: 1, w2: 'a' },
      { id: 2, w2: 'a' },
    ]);
    const error = await caught(h.engine.executeDdlBatch(['ALTER TABLE b1 ADD COLUMN z INT', 'CREATE UNIQUE INDEX b1_w2u ON b1 (w2)'], opts));
    expect(error).toMatchObject({ code: 'CONSTRAINT_VIOLATION', details: { statement_index: 1 } });
    expect(h.stack.projections.catalog.tableByName('default', 'public', 'b1')!.def.columns.map((c) => c.name)).toEqual(['id', 'v', 'w2']);
  });

  it('refuses texts that are not exactly one batchable statement', async () => {
    expect(await caught(h.engine.executeDdlBatch(['CREATE TABLE b2 (id INT); DROP TABLE b1'], opts))).toMatchObject({
      code: 'INVALID_QUERY',
      details: { statement_index: 0 },
    });
    expect(await caught(h.engine.executeDdlBatch(['CREATE TABLE b2 (id INT)', 'DROP TABLE b1'], opts))).toMatchObject({
      code: 'INVALID_QUERY',
      details: { statement_index: 1 },
    });
    expect((await caught(h.engine.executeDdlBatch(['CREATE TABLE b2 (id INT)'], { ...opts, readOnly: 'role' }))).code).toBe('AUTHORIZATION_DENIED');
  });

  it('insertJson: defaults for missing keys, one record, on_conflict, returning, typed errors with the cell', async () => {
    await h.q('CREATE TABLE j (id BIGSERIAL PRIMARY KEY, name TEXT NOT NULL, n INT DEFAULT 7, doc JSONB)');
    const head = h.stack.log.headLsn;
    const r = await h.engine.insertJson(
      { schema: null, table: 'j', rows: [{ name: 'a' }, { name: 'b', n: null, doc: { k: [1] } }], returning: ['*'], onConflict: null },
      opts,
    );
    expect(r.rows).toEqual([
      { id: 1, name: 'a', n: 7, doc: null },
      { id: 2, name: 'b', n: null, doc: { k: [1] } },
    ]);
    expect(h.stack.log.headLsn).toBe(head + 1);
    const bad = await caught(
      h.engine.insertJson({ schema: null, table: 'j', rows: [{ name: 'c' }, { name: 'd', n: 'x' }], returning: [], onConflict: null }, opts),
    );
    expect(bad).toMatchObject({ code: 'TYPE_MISMATCH', details: { column: 'n', row: 1 } });
    expect(await h.rows('SELECT count(*) AS c FROM j')).toEqual([{ c: 2 }]);
    const up = await h.engine.insertJson(
      {
        schema: null,
        table: 'j',
        rows: [{ id: 1, name: 'A' }],
        returning: ['id', 'name', 'n'],
        onConflict: { columns: [], action: 'update', updateColumns: null },
      },
      opts,
    );
    expect(up.rows).toEqual([{ id: 1, name: 'A', n: 7 }]);
    const none = await h.engine.insertJson(
      { schema: null, table: 'j', rows: [{ id: 2, name: 'B' }], returning: ['name'], onConflict: { columns: ['id'], action: 'nothing', updateColumns: null } },
      opts,
    );
    expect(none.affectedRows).toBe(0);
    expect((await caught(h.engine.insertJson({ schema: null, table: 'j', rows: [{ nope: 1 }], returning: [], onConflict: null }, opts))).code).toBe(
      'COLUMN_NOT_FOUND',
    );
    expect(
      (await caught(h.engine.insertJson({ schema: null, table: 'j', rows: [{ name: 'x' }], returning: [], onConflict: null }, { ...opts, readOnly: 'role' })))
        .code,
    ).toBe('AUTHORIZATION_DENIED');
  });
});
