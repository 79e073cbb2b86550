import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecuteOptions, KeyRead, QueryResult } from '../../query/index.js';
import { holdApply, within } from '../helpers/hold-apply.js';
import { caught, openSql, type SqlHarness } from '../query/helpers.js';

/**
 * The read barrier per table (projections/read-barrier.ts): a read waits for the writes answered to
 * the tables it reads, not for those answered to others. With the tables projection's apply held
 * after a write to `busy`, reads of `quiet` (GET row's direct read, the point SELECT's direct path,
 * a general SELECT) answer at once and as before; reads that touch `busy` (alone, joined, through a
 * view) still wait, and so does a read of `quiet` once a write to it is answered and held, and a
 * statement that reads no table.
 */
describe('the read barrier per table: a read waits only for the writes to the tables it reads', () => {
  let h: SqlHarness;
  const options = (extra: Partial<ExecuteOptions> = {}): ExecuteOptions => ({ params: [], timeoutMs: 30_000, maxRows: 1000, tenant: 'default', ...extra });
  const run = (sql: string, params: unknown[] = [], extra: Partial<ExecuteOptions> = {}): Promise<QueryResult> =>
    h.engine.execute(sql, options({ params, ...extra }));
  const readOf = (name: string, id: number): KeyRead => ({
    table: h.stack.projections.tables.catalog.tableByName('default', 'public', name)!.def,
    key: [String(id)],
    columns: ['id', 'v'],
  });
  const timeout = { code: 'QUERY_TIMEOUT', message: 'canceling statement due to statement timeout' };

  beforeAll(async () => {
    h = await openSql();
    await run('CREATE TABLE busy (id INT PRIMARY KEY, v INT NOT NULL)');
    await run('CREATE TABLE quiet (id INT PRIMARY KEY, v INT NOT NULL)');
    await run('CREATE VIEW busy_view AS SELECT id, v FROM busy');
    for (let id = 1; id <= 30; id++) await run('INSERT INTO busy VALUES ($1, 0)', [id]);
    for (let id = 1; id <= 30; id++) await run('INSERT INTO quiet VALUES ($1, $2)', [id, id * 10]);
    // Cached plans: the point SELECT's direct path (fast-point.ts).
    await run('SELECT * FROM quiet WHERE id = $1', [1]);
    await run('SELECT * FROM busy WHERE id = $1', [1]);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('with a write to another table held, reads of a table answer at once; reads of the written table wait, and see it', async () => {
    const { projections } = h.stack;
    const release = holdApply(projections, 'tables');
    let busyRead: Promise<unknown> | null = null;
    let busySelect: Promise<QueryResult> | null = null;
    try {
      await run('UPDATE busy SET v = 1 WHERE id = 1');
      expect(projections.readBarrier.tablesBehind).toBe(true);

      // quiet: answered without waiting (synchronously where the store reads so), as before the write.
      const row = h.engine.readByKey(readOf('quiet', 2));
      expect(row).not.toBeInstanceOf(Promise);
      expect(row).toEqual({ id: 2, v: 20 });
      expect(await Promise.resolve(h.engine.readTextByKey(readOf('quiet', 3), (r) => JSON.stringify(r)))).toBe('{"id":3,"v":30}');
      expect(h.engine.pointSelect('SELECT * FROM quiet WHERE id = $1', options({ params: [4] }))?.rows).toEqual([{ id: 4, v: 40 }]);
      expect(await within(run('SELECT count(*)::int AS n, sum(v)::int AS s FROM quiet'), 2000)).toMatchObject({ rows: [{ n: 30, s: 4650 }] });

      // busy, alone, joined with quiet or through a view: waits (here until its deadline).
      expect(h.engine.pointSelect('SELECT * FROM busy WHERE id = $1', options({ params: [1] }))).toBeUndefined();
      expect(await caught(run('SELECT * FROM busy WHERE id = $1', [1], { timeoutMs: 100 }))).toMatchObject(timeout);
      expect(await caught(run('SELECT count(*) FROM quiet JOIN busy ON quiet.id = busy.id WHERE busy.v = 1', [], { timeoutMs: 100 }))).toMatchObject(timeout);
      expect(await caught(run('SELECT * FROM quiet WHERE id IN (SELECT id FROM busy_view WHERE v = 1)', [], { timeoutMs: 100 }))).toMatchObject(timeout);
      // A statement that reads no table waits for every write, as before (a sync point after writes).
      expect(await caught(run('SELECT 1', [], { timeoutMs: 100 }))).toMatchObject(timeout);
      busyRead = Promise.resolve(h.engine.readByKey(readOf('busy', 1)));
      busySelect = run('SELECT count(*)::int AS n FROM busy WHERE v = 1');
      expect(await within(busyRead, 200)).toBe('pending');

      // A write to quiet answered now is held behind busy's: a read of quiet waits for it.
      await run('UPDATE quiet SET v = 21 WHERE id = 2');
      const quietRead = h.engine.readByKey(readOf('quiet', 2));
      expect(quietRead).toBeInstanceOf(Promise);
      expect(await within(quietRead as Promise<unknown>, 200)).toBe('pending');
      release();
      expect(await quietRead).toEqual({ id: 2, v: 21 });
    } finally {
      release();
    }
    expect(await busyRead).toEqual({ id: 1, v: 1 });
    expect((await busySelect!).rows).toEqual([{ n: 1 }]);
    expect(h.engine.pointSelect('SELECT * FROM busy WHERE id = $1', options({ params: [1] }))?.rows).toEqual([{ id: 1, v: 1 }]);
    expect(projections.tablesApplied.waiting).toBe(0);
  });
});
