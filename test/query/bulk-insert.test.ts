import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeLogRecord, nextSequenceAfter } from '../../core/log-records.js';
import { openStack } from '../helpers/stack.js';
import type { QueryResult } from '../../query/index.js';
import { caught, openSql, type SqlHarness } from './helpers.js';

/**
 * Multi-row INSERT (VALUES and JSON rows) takes a bulk path: keys read ahead once, rows written
 * without a promise each, literals bound without the generic coercion per cell. These tests hold
 * it to what the row-by-row path answers: the same rows, the same first error, nothing written.
 */
describe('bulk INSERT is exact', () => {
  let h: SqlHarness;
  const json = (table: string, rows: Record<string, unknown>[], returning: string[] = []): Promise<QueryResult> =>
    h.engine.insertJson({ schema: null, table, rows, returning, onConflict: null }, { params: [], timeoutMs: 30_000, maxRows: 10_000, tenant: 'default' });
  const values = (rows: string[]): string => rows.map((r) => `(${r})`).join(', ');
  const count = async (table: string): Promise<number> => Number((await h.rows(`SELECT count(*) AS n FROM ${table}`))[0]!.n);

  beforeAll(async () => {
    h = await openSql();
    await h.q('CREATE TABLE b (id BIGINT PRIMARY KEY, name TEXT NOT NULL, amount DOUBLE PRECISION)');
    await h.q('CREATE TABLE b1 (id BIGINT PRIMARY KEY, name TEXT NOT NULL, amount DOUBLE PRECISION)');
    await h.q(
      "CREATE TABLE d (id BIGSERIAL PRIMARY KEY, s2 SMALLINT, s4 INTEGER, s8 BIGINT, f4 REAL, f8 DOUBLE PRECISION, n NUMERIC(10,2), t TEXT DEFAULT 'dflt', v VARCHAR(5), c INTEGER CHECK (c < 100))",
    );
    await h.q(
      "CREATE TABLE d1 (id BIGSERIAL PRIMARY KEY, s2 SMALLINT, s4 INTEGER, s8 BIGINT, f4 REAL, f8 DOUBLE PRECISION, n NUMERIC(10,2), t TEXT DEFAULT 'dflt', v VARCHAR(5), c INTEGER CHECK (c < 100))",
    );
  });
  afterAll(async () => {
    await h.close();
  });

  it('a duplicate inside one VALUES request: the row-by-row error, nothing written', async () => {
    const rows = Array.from({ length: 3000 }, (_, i) => `${i + 1}, 'n${i + 1}', ${i * 1.5}`);
    rows.push(`3, 'again', 1`);
    const error = await caught(h.q(`INSERT INTO b VALUES ${values(rows)}`));
    expect(error.code).toBe('CONSTRAINT_VIOLATION');
    expect(error.message).toBe('duplicate key value violates unique constraint "b_pkey"');
    expect(error.details).toMatchObject({ constraint: 'b_pkey', table: 'b' });
    expect(JSON.stringify(error.details)).toContain('(id)=(3)');
    expect(await count('b')).toBe(0);
  });

  it('a duplicate inside one JSON request and against stored rows: the same error as one row, nothing written', async () => {
    const rows = Array.from({ length: 3000 }, (_, i) => ({ id: i + 1, name: `n${i + 1}`, amount: i }));
    const inside = await caught(json('b', [...rows, { id: 17, name: 'again' }]));
    const single = {
      code: 'CONSTRAINT_VIOLATION',
      message: 'duplicate key value violates unique constraint "b_pkey"',
      details: { constraint: 'b_pkey', detail: 'Key (id)=(17) already exists.', key: '(id)=(17)', table: 'b' },
    };
    expect(inside).toEqual(single);
    expect(await count('b')).toBe(0);

    await json('b', rows.slice(0, 1000));
    const stored = await caught(json('b', rows.slice(999, 2000)));
    expect(stored.message).toBe(single.message);
    expect(JSON.stringify(stored.details)).toContain('(id)=(1000)');
    const storedSql = await caught(h.q(`INSERT INTO b VALUES ${values(["5000, 'new', 1", "500, 'old', 1"])}`));
    expect(storedSql.message).toBe(single.message);
    expect(await count('b')).toBe(1000);
  });

  it('the first failing row decides the error (NOT NULL before a later duplicate, a duplicate before a later NULL)', async () => {
    const base = Array.from({ length: 100 }, (_, i) => `${10_000 + i}, 'x', 1`);
    const nullFirst = await caught(h.q(`INSERT INTO b VALUES ${values([...base, '20000, NULL, 1', "10000, 'dup', 1"])}`));
    expect(nullFirst.message).toBe('null value in column "name" of relation "b" violates not-null constraint');
    const dupFirst = await caught(h.q(`INSERT INTO b VALUES ${values([...base, "10000, 'dup', 1", '20000, NULL, 1'])}`));
    expect(dupFirst.message).toBe('duplicate key value violates unique constraint "b_pkey"');
    const jsonNull = await caught(json('b', [{ id: 30000, name: 'a' }, { id: 30001 }, { id: 30000, name: 'dup' }]));
    expect(jsonNull.message).toBe('null value in column "name" of relation "b" violates not-null constraint');
    expect(await count('b')).toBe(1000);
  });

  it('literals, NULLs, defaults, serials and CHECK give what single-row statements give', async () => {
    const cells = [
      "1, 2, 3, 1.5, 2.25, 3.14159, 'a', 'abc', 1",
      '32767, 2147483647, 9223372036854775807, 0.1, 0.1, 12345678.995, NULL, NULL, NULL',
      "0, 2147483647, 123456789012345678, 1e3, 1e-3, 0, DEFAULT, '', 99",
      "7, 7, 7, 7, 7, 7, 'x', 'xy', DEFAULT",
      "NULL, 1.5, 2.5, 100000000000000000000, 123456789012345.678, 1.5, 'y', 'z', 0",
      "12, 99999999, 999999999999999,  3.4028235e38, 1.7976931348623157e308, 99999999.99, 't', 'v', 5",
    ];
    const columns = '(s2, s4, s8, f4, f8, n, t, v, c)';
    const bulk = await h.q(`INSERT INTO d ${columns} VALUES ${values(cells)} RETURNING *`);
    // Unary plus keeps a number's type and value but makes it an expression: the generic binding.
    const generic = (row: string): string => row.replace(/(^|, )([0-9][0-9.e-]*)(?=,|$)/g, '$1+$2');
    expect(generic('1, 2.5, NULL, 3')).toBe('+1, +2.5, NULL, +3');
    const one: Record<string, unknown>[] = [];
    for (const row of cells) one.push(...(await h.q(`INSERT INTO d1 ${columns} VALUES (${generic(row)}) RETURNING *`)).rows);
    expect(bulk.rows).toEqual(one);
    expect(await h.rows('SELECT * FROM d ORDER BY id')).toEqual(await h.rows('SELECT * FROM d1 ORDER BY id'));
  });

  it('literal errors (range, length, CHECK) are the single-row ones', async () => {
    const bad = ['70000, 1, 1', '1, 2147483648, 1', '1, 1, 9223372036854775808', '1.5e10, 1, 1'];
    for (const cell of bad) {
      const bulk = await caught(h.q(`INSERT INTO d (s2, s4, s8) VALUES (1, 1, 1), (${cell})`));
      const one = await caught(h.q(`INSERT INTO d (s2, s4, s8) VALUES (${cell.replace(/(^|, )([0-9])/g, '$1+$2')})`));
      expect(bulk, cell).toEqual(one);
    }
    const check = await caught(h.q('INSERT INTO d (c) VALUES (1), (100), (2)'));
    expect(check.message).toBe('new row for relation "d" violates check constraint "d_c_check"');
    const length = await caught(h.q("INSERT INTO d (v) VALUES ('a'), ('abcdef')"));
    expect(length.code).toBe('TYPE_MISMATCH');
  });

  it('wide rows and RETURNING in row order', async () => {
    const width = 40;
    const cols = Array.from({ length: width }, (_, i) => `c${i} ${i % 3 === 0 ? 'TEXT' : i % 3 === 1 ? 'BIGINT' : 'DOUBLE PRECISION'}`);
    await h.q(`CREATE TABLE w (id INTEGER PRIMARY KEY, ${cols.join(', ')})`);
    const cell = (r: number, i: number): string => (i % 3 === 0 ? `'r${r}c${i}'` : i % 3 === 1 ? String(r * 1000 + i) : `${r}.5`);
    const rows = Array.from(
      { length: 500 },
      (_, r) => `${r}, ${Array.from({ length: width }, (_c, i) => (r % 7 === 0 && i === 5 ? 'NULL' : cell(r, i))).join(', ')}`,
    );
    const result = await h.q(`INSERT INTO w VALUES ${values(rows)} RETURNING id, c3, c5`);
    expect(result.rows.map((r) => r.id)).toEqual(Array.from({ length: 500 }, (_, r) => r));
    expect(result.rows[7]).toEqual({ id: 7, c3: 'r7c3', c5: null });
    expect(result.rows[8]).toEqual({ id: 8, c3: 'r8c3', c5: 8.5 });
    const stored = await h.rows('SELECT * FROM w WHERE id = 499');
    expect(stored[0]!.c39).toBe('r499c39');
    expect(await count('w')).toBe(500);
  });

  it('JSON rows: columns named by any row count, an unknown name in a later row is refused, inherited properties are not columns', async () => {
    const rows: Record<string, unknown>[] = Array.from({ length: 200 }, (_, i) => ({ id: 40_000 + i, name: 'j' }));
    rows[150] = { id: 40_150, name: 'j', amount: 2.5 };
    await json('b1', rows);
    expect(await h.rows('SELECT count(*) AS n, sum(amount) AS s FROM b1 WHERE id >= 40000')).toEqual([{ n: 200, s: 2.5 }]);
    const unknown = await caught(json('b1', [...rows.map((r) => ({ ...r, id: (r.id as number) + 1000 })), { id: 50_000, name: 'x', nope: 1 }]));
    expect(unknown.code).toBe('COLUMN_NOT_FOUND');
    expect(unknown.message).toContain('nope');
    const inherited = Object.create({ nope: 1 }) as Record<string, unknown>;
    inherited.id = 60_000;
    inherited.name = 'own';
    await json('b1', [inherited]);
    expect(await h.rows('SELECT name FROM b1 WHERE id = 60000')).toEqual([{ name: 'own' }]);
    expect(await count('b1')).toBe(201);
  });

  it('keys all above the stored ones skip the per-key reads; any key at or below the last stored one is checked', async () => {
    await h.q('CREATE TABLE b2 (id BIGINT PRIMARY KEY, name TEXT)');
    const ids = (from: number, to: number): Record<string, unknown>[] => Array.from({ length: to - from + 1 }, (_, i) => ({ id: from + i, name: 'r' }));
    await json('b2', ids(1, 100));
    const dup = await caught(json('b2', [...ids(101, 400), { id: 50, name: 'old' }]));
    expect(dup.message).toBe('duplicate key value violates unique constraint "b2_pkey"');
    expect(JSON.stringify(dup.details)).toContain('(id)=(50)');
    // Descending, and one duplicate inside the request: still the row-by-row error.
    const inside = await caught(json('b2', [...ids(101, 400).reverse(), { id: 250, name: 'again' }]));
    expect(JSON.stringify(inside.details)).toContain('(id)=(250)');
    await json('b2', ids(101, 400).reverse());
    await json('b2', [...ids(500, 799), { id: -5, name: 'negative' }]);
    expect(await count('b2')).toBe(701);
    // The last row deleted: keys above the new last one are new again, the deleted ones too.
    await h.q('DELETE FROM b2 WHERE id >= 700');
    await json('b2', ids(700, 999));
    const below = await caught(json('b2', [...ids(1000, 1299), { id: 699, name: 'x' }]));
    expect(JSON.stringify(below.details)).toContain('(id)=(699)');
    expect(await count('b2')).toBe(901);
  });

  it("in a transaction the bulk path sees the transaction's own earlier changes", async () => {
    const t = await openSql({
      transactions: { transactionTimeoutMsDefault: 10_000, transactionTimeoutMsMax: 10_000, transactionsOpenMax: 4, sqlDmlRowsMax: 1000 },
    });
    try {
      await t.q('CREATE TABLE x (id BIGINT PRIMARY KEY, name TEXT)');
      await t.q(`INSERT INTO x VALUES ${values(Array.from({ length: 10 }, (_, i) => `${i}, 'stored'`))}`);
      const many = (from: number): string => values(Array.from({ length: 300 }, (_, i) => `${from + i}, 'bulk'`));
      const dup = await caught(t.q(`BEGIN; INSERT INTO x VALUES (500, 'first'); INSERT INTO x VALUES ${many(400)}; COMMIT`));
      expect(dup.message).toBe('duplicate key value violates unique constraint "x_pkey"');
      expect(JSON.stringify(dup.details)).toContain('(id)=(500)');
      await t.q('ROLLBACK').catch(() => undefined);
      await t.q(`BEGIN; DELETE FROM x WHERE id >= 5; INSERT INTO x VALUES ${many(5)}; COMMIT`);
      expect(await t.rows('SELECT name, count(*) AS n FROM x GROUP BY name ORDER BY name')).toEqual([
        { name: 'bulk', n: 300 },
        { name: 'stored', n: 5 },
      ]);
    } finally {
      await t.close();
    }
  });

  it('change-event sequences and sequence values after multi-row records follow the log, live and after a restart', async () => {
    const t = await openSql();
    try {
      await t.q('CREATE TABLE sq (id BIGSERIAL PRIMARY KEY, k INTEGER NOT NULL)');
      await t.q(`INSERT INTO sq (k) VALUES ${values(Array.from({ length: 700 }, (_, i) => String(i)))}`);
      const options = { params: [], timeoutMs: 30_000, maxRows: 10_000, tenant: 'default' };
      const rows = Array.from({ length: 300 }, (_, i) => ({ k: i }));
      await t.engine.insertJson({ schema: null, table: 'sq', rows, returning: [], onConflict: null }, options);
      await t.q('INSERT INTO sq (k) VALUES (1), (2)');
      // What the log says: the record after the last one starts at its first sequence plus one per op.
      let last: { payload: Uint8Array; lsn: number } | undefined;
      for await (const batch of t.stack.log.read(t.stack.log.headLsn)) last = batch[batch.length - 1] ?? last;
      const record = decodeLogRecord(last!.payload);
      expect(record.type === 'txn' && record.ops.map((op) => op.kind)).toEqual(['row', 'row', 'sequence']);
      const live = t.stack.projections.tables.nextSequence;
      expect(live).toBe(nextSequenceAfter(record, last!.lsn));
      const op = record.type === 'txn' ? record.ops[2] : undefined;
      const name = op?.kind === 'sequence' ? op.name : '';
      const sequence = t.stack.projections.catalog.sequence(name);
      expect(sequence).toBe(1002n);
      // Reopened, the tables projection has what it stored; records applied again are decoded (no handoff): the same.
      await t.stack.close();
      const reopened = await openStack(t.stack.layout.root);
      try {
        expect(reopened.projections.tables.nextSequence).toBe(live);
        expect(reopened.projections.catalog.sequence(name)).toBe(sequence);
      } finally {
        await reopened.close();
      }
    } finally {
      await t.close();
    }
  });
});
