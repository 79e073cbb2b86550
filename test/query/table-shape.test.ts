import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSql, type SqlHarness } from './helpers.js';

/**
 * TableWriter keeps what it derives from a table's definition (key columns, unique indexes, NOT
 * NULL columns, whether a foreign key exists) per definition object (query/dml/table-shape.ts).
 * DDL makes a new definition: every constraint added after the first inserts must hold on the next
 * insert, through SQL and through JSON rows alike.
 */
describe('constraints added between inserts hold at once (the writer keeps nothing of the old definition)', () => {
  let h: SqlHarness;
  const BASE = { timeoutMs: 30_000, maxRows: 1000, tenant: 'default' };
  const failure = async (run: Promise<unknown>): Promise<{ code: string; message: string } | null> => {
    try {
      await run;
      return null;
    } catch (error) {
      const e = error as { code: string; message: string };
      return { code: e.code, message: e.message };
    }
  };
  const json = (row: Record<string, unknown>) => h.engine.insertJson({ schema: null, table: 'kid', rows: [row], returning: [], onConflict: null }, BASE);

  beforeAll(async () => {
    h = await openSql();
    await h.q('CREATE TABLE parent (id INTEGER PRIMARY KEY)');
    await h.q('CREATE TABLE kid (id INTEGER PRIMARY KEY, code TEXT, pid INTEGER)');
  });
  afterAll(() => h?.close());

  it('a unique index, a NOT NULL column and a foreign key, each added after inserts ran', async () => {
    await h.q('INSERT INTO kid VALUES ($1, $2, $3)', [1, 'a', 7]);
    await json({ id: 2, code: 'a', pid: 8 });
    await h.q('DELETE FROM kid WHERE id = 2');

    await h.q('CREATE UNIQUE INDEX kid_code ON kid (code)');
    expect(await failure(h.q('INSERT INTO kid VALUES ($1, $2, $3)', [3, 'a', 7]))).toMatchObject({ code: 'CONSTRAINT_VIOLATION' });
    expect(await failure(json({ id: 3, code: 'a', pid: 7 }))).toMatchObject({ code: 'CONSTRAINT_VIOLATION' });

    await h.q("ALTER TABLE kid ADD COLUMN tag TEXT NOT NULL DEFAULT 't'");
    expect(await failure(h.q('INSERT INTO kid VALUES ($1, $2, $3, $4)', [4, 'd', 7, null]))).toMatchObject({ code: 'CONSTRAINT_VIOLATION' });
    expect(await failure(json({ id: 4, code: 'd', pid: 7, tag: null }))).toMatchObject({ code: 'CONSTRAINT_VIOLATION' });

    await h.q('INSERT INTO parent VALUES (7)');
    await h.q('ALTER TABLE kid ADD CONSTRAINT kid_parent FOREIGN KEY (pid) REFERENCES parent (id)');
    expect(await failure(h.q('INSERT INTO kid VALUES ($1, $2, $3)', [5, 'e', 99]))).toMatchObject({ code: 'CONSTRAINT_VIOLATION' });
    expect(await failure(json({ id: 5, code: 'e', pid: 99 }))).toMatchObject({ code: 'CONSTRAINT_VIOLATION' });
    await h.q('INSERT INTO kid VALUES ($1, $2, $3)', [5, 'e', 7]);
    await json({ id: 6, code: 'f', pid: 7 });
    expect(await h.rows('SELECT id, code, pid FROM kid ORDER BY id')).toEqual([
      { id: 1, code: 'a', pid: 7 },
      { id: 5, code: 'e', pid: 7 },
      { id: 6, code: 'f', pid: 7 },
    ]);
  });

  it('JSON rows name and convert columns by the current definition (positions and plain kinds kept per definition)', async () => {
    await h.q('CREATE TABLE shaped (id BIGINT PRIMARY KEY, a TEXT, b INTEGER)');
    const put = (row: Record<string, unknown>) => h.engine.insertJson({ schema: null, table: 'shaped', rows: [row], returning: ['*'], onConflict: null }, BASE);
    await put({ id: 1, a: 'x', b: 2 });
    // A renamed column: its new name is known at once, its old one refused.
    await h.q('ALTER TABLE shaped RENAME COLUMN a TO title');
    expect(await failure(put({ id: 2, a: 'y' }))).toMatchObject({ code: 'COLUMN_NOT_FOUND' });
    expect((await put({ id: 2, title: 'y', b: 3 })).rows).toEqual([{ id: 2, title: 'y', b: 3 }]);
    // A new column converts by its own type: a plain bigint, a text refused.
    await h.q('ALTER TABLE shaped ADD COLUMN n BIGINT');
    expect((await put({ n: 9007199254740991, id: 3, title: 'z' })).rows).toEqual([{ id: 3, title: 'z', b: null, n: 9007199254740991 }]);
    expect(await failure(put({ id: 4, n: 'many' }))).toMatchObject({ code: 'TYPE_MISMATCH' });
    // A dropped column is refused, and the column after it is found at its new position.
    await h.q('ALTER TABLE shaped DROP COLUMN b');
    expect(await failure(put({ id: 4, b: 4 }))).toMatchObject({ code: 'COLUMN_NOT_FOUND' });
    expect((await put({ id: 4, n: 7 })).rows).toEqual([{ id: 4, title: null, n: 7 }]);
    expect(await h.rows('SELECT * FROM shaped ORDER BY id')).toEqual([
      { id: 1, title: 'x', n: null },
      { id: 2, title: 'y', n: null },
      { id: 3, title: 'z', n: 9007199254740991 },
      { id: 4, title: null, n: 7 },
    ]);
  });

  it('refuses JSON rows as a rejected promise, never a throw at the call (a read-only caller, an unknown table, a bad value)', async () => {
    const calls = [
      () => h.engine.insertJson({ schema: null, table: 'kid', rows: [{ id: 90 }], returning: [], onConflict: null }, { ...BASE, readOnly: 'role' }),
      () => h.engine.insertJson({ schema: null, table: 'nowhere', rows: [{ id: 91 }], returning: [], onConflict: null }, BASE),
      () => h.engine.insertJson({ schema: null, table: 'kid', rows: [{ id: 'x' }], returning: [], onConflict: null }, BASE),
    ];
    const codes: string[] = [];
    for (const call of calls) {
      let pending: Promise<unknown> | undefined;
      expect(() => (pending = call())).not.toThrow();
      codes.push((await failure(pending!))?.code ?? 'none');
    }
    expect(codes).toEqual(['AUTHORIZATION_DENIED', 'TABLE_NOT_FOUND', 'TYPE_MISMATCH']);
  });
});
