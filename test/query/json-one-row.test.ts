import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSql, type SqlHarness } from './helpers.js';

/**
 * A one-row JSON insert reads its row in one pass over its own keys (insert-json.ts rowCells and
 * cellsRow); a request of several rows reads each row column by column (givenColumns,
 * proposedRows). Each row below goes in alone into `one`, and first of two rows into `two` (the
 * second row gives every column, so it takes no default and no sequence value): the answers (row
 * count aside) and the first row read back must match — given and left-out columns, defaults and
 * a sequence, explicit nulls, keys in any order, an unknown column (the first in key order is the
 * one named), values that do not convert (named with row 0), on_conflict naming the given columns.
 */
describe('a one-row JSON insert answers as the several-row path does for its row', () => {
  let h: SqlHarness;
  const BASE = { timeoutMs: 30_000, maxRows: 10_000, tenant: 'default' };
  const ddl = (name: string) =>
    `CREATE TABLE ${name} (id BIGINT PRIMARY KEY, n INTEGER, tag TEXT NOT NULL DEFAULT 'dflt', s SERIAL, ok BOOLEAN DEFAULT true, f DOUBLE PRECISION)`;

  beforeAll(async () => {
    h = await openSql();
    await h.q(ddl('one'));
    await h.q(ddl('two'));
  });
  afterAll(() => h?.close());

  const outcome = async (run: Promise<unknown>): Promise<string> => {
    try {
      await run;
      return 'ok';
    } catch (error) {
      const e = error as { code: string; message: string; details: unknown };
      // The table's name (and its constraints' names) aside.
      const text = `${e.code}: ${e.message} ${JSON.stringify(e.details)}`;
      return text.replace(/\b(one|two)(?=\b|_)/g, 'T');
    }
  };
  const insert = (table: string, rows: Record<string, unknown>[], onConflict: { columns: string[]; action: 'update' | 'nothing' } | null = null) =>
    h.engine.insertJson({ schema: null, table, rows, returning: [], onConflict: onConflict ? { ...onConflict, updateColumns: null } : null }, BASE);

  it('rows with given, missing, null, unknown and unconvertible cells', async () => {
    const rows: Record<string, unknown>[] = [
      { id: 1, n: 5, tag: 'a', s: 9, ok: false, f: 1.5 },
      { id: 2 },
      { f: 2.5, id: 3, n: null },
      { id: 4, tag: null },
      { id: 5, nope: 1, other: 2 },
      { n: 'x', id: 6 },
      { id: 7, n: 2 ** 31 },
      { id: 8, ok: 'yes' },
      { id: 9, f: '1e3', n: '42', tag: 't' },
      { id: '10', s: '4' },
      { id: 11, n: 1, zzz: true },
      {},
    ];
    let filler = 1000;
    for (const row of rows) {
      const alone = await outcome(insert('one', [row]));
      const first = await outcome(insert('two', [row, { id: filler++, n: 0, tag: 'f', s: 0, ok: true, f: 0 }]));
      expect(alone, JSON.stringify(row)).toBe(first);
    }
    // A conflict on the key, updating the given columns (update_columns: every given column but the key).
    for (const table of ['one', 'two']) {
      await insert(table, [{ id: 9, n: 77, tag: 'upd' }], { columns: ['id'], action: 'update' });
      await insert(table, [{ id: 9, n: 78 }], { columns: [], action: 'nothing' });
    }
    const read = (table: string) => h.rows(`SELECT id, n, tag, s, ok, f FROM ${table} WHERE id < 1000 ORDER BY id`);
    const one = await read('one');
    expect(one.length).toBeGreaterThan(4);
    expect(one).toEqual(await read('two'));
  });
});
