import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecuteOptions, QueryResult } from '../../query/index.js';
import { PROJECTION_LIMITS } from '../../projections/limits.js';
import { holdApply, within } from '../helpers/hold-apply.js';
import { caught, openSql, type SqlHarness } from '../query/helpers.js';

/**
 * The read barrier (projections/read-barrier.ts) through the SQL engine, with one projection's
 * apply held: a row write is answered once durable, so while the vector projection (or the tables
 * projection) is held the barrier is behind. A read of the tables must not wait for the vector
 * projection; a vector search must; and a wait must end with the statement's deadline or cancel
 * signal (the executor's QUERY_TIMEOUT errors) and leave no waiter behind. How the apply is held:
 * test/helpers/hold-apply.ts.
 */
describe('the read barrier: what each read waits for, and for how long', () => {
  let h: SqlHarness;
  const options = (extra: Partial<ExecuteOptions> = {}): ExecuteOptions => ({ params: [], timeoutMs: 30_000, maxRows: 1000, tenant: 'default', ...extra });
  const run = (sql: string, params: unknown[] = [], extra: Partial<ExecuteOptions> = {}): Promise<QueryResult> =>
    h.engine.execute(sql, options({ params, ...extra }));

  const hold = (which: 'vectors' | 'tables'): (() => void) => holdApply(h.stack.projections, which);

  /** The form the direct path answers (fast-vector.ts: a projection over the index scan). */
  const VECTOR_SEARCH = 'SELECT id, emb <-> $1 AS d FROM vecs ORDER BY emb <-> $1 LIMIT 1';
  const ids = (result: QueryResult): unknown[] => result.rows.map((row) => row.id);

  beforeAll(async () => {
    h = await openSql();
    await run('CREATE TABLE plain (id INT PRIMARY KEY, v INT NOT NULL)');
    await run('CREATE TABLE vecs (id INT PRIMARY KEY, emb VECTOR(3))');
    await run('CREATE INDEX vecs_hnsw ON vecs USING hnsw (emb vector_l2_ops) WITH (m = 8, ef_construction = 32)');
    // Enough rows that one or two more do not make the cached plans be planned again (prepare.ts statsMoved).
    for (let id = 100; id < 130; id++) await run('INSERT INTO vecs VALUES ($1, $2)', [id, `[-${id},-${id},-${id}]`]);
    for (let id = 100; id < 130; id++) await run('INSERT INTO plain VALUES ($1, 0)', [id]);
    // Cached plans: the point SELECT's direct path and the vector search's (fast-point.ts, fast-vector.ts).
    await run('SELECT * FROM plain WHERE id = $1', [1]);
    await run(VECTOR_SEARCH, ['[0,0,0]']);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('with the vector apply held, reads of a plain table answer at once; a vector search waits and then sees the write', async () => {
    const { projections } = h.stack;
    const release = hold('vectors');
    let search: Promise<QueryResult> | null = null;
    try {
      // Both answered once durable: the tables projection applies them, the vector projection is held.
      await run('INSERT INTO vecs VALUES (2, $1)', ['[50,50,50]']);
      await run('INSERT INTO plain VALUES (1, 10), (2, 20)');
      expect(projections.readBarrier.behind).toBe(true);

      const table = projections.tables.catalog.tableByName('default', 'public', 'plain')!.def;
      expect(await within(Promise.resolve(h.engine.readByKey({ table, key: ['1'], columns: ['id', 'v'] })), 2000)).toEqual({ id: 1, v: 10 });
      expect(h.engine.pointSelect('SELECT * FROM plain WHERE id = $1', options({ params: [2] }))?.rows).toEqual([{ id: 2, v: 20 }]);
      expect((await within(run('SELECT * FROM plain WHERE id = $1', [1]), 2000)) as QueryResult).toMatchObject({ rows: [{ id: 1, v: 10 }] });
      expect((await within(run('SELECT count(*)::int AS n, sum(v)::int AS s FROM plain'), 2000)) as QueryResult).toMatchObject({ rows: [{ n: 32, s: 30 }] });
      // The vector projection is still held: these reads did not wait for it.
      expect(projections.readBarrier.behind).toBe(true);

      // A vector search (its direct path: the plan is cached) waits for the held apply.
      search = h.engine.vectorSelect(VECTOR_SEARCH, options({ params: ['[50,50,50]'] })) ?? null;
      expect(search).not.toBeNull();
      expect(await within(search!, 200)).toBe('pending');
    } finally {
      release();
    }
    expect(ids(await search!)).toEqual([2]);
    expect(h.engine.vectorSelectStats().direct).toBeGreaterThan(0);
    expect(projections.applied.waiting).toBe(0);
  });

  it('a vector search waiting at the barrier ends at its deadline and at its cancel, with the executor errors, leaving no waiter', async () => {
    const { projections } = h.stack;
    const release = hold('vectors');
    try {
      await run('INSERT INTO vecs VALUES (3, $1)', ['[90,90,90]']);
      expect(projections.readBarrier.behind).toBe(true);
      const waitingBefore = projections.applied.waiting;

      const started = Date.now();
      // As the vector routes ask: the direct path when the plan is cached, else execute().
      const searchOptions = options({ params: ['[90,90,90]'], timeoutMs: 100 });
      const timedOut = await caught(h.engine.vectorSelect(VECTOR_SEARCH, searchOptions) ?? h.engine.execute(VECTOR_SEARCH, searchOptions));
      expect(timedOut).toMatchObject({ code: 'QUERY_TIMEOUT', message: 'canceling statement due to statement timeout' });
      expect(Date.now() - started).toBeLessThan(5000);
      // The general path too (not the direct one: an uncached text).
      expect(await caught(run(`${VECTOR_SEARCH} OFFSET 0`, ['[90,90,90]'], { timeoutMs: 100 }))).toMatchObject({
        code: 'QUERY_TIMEOUT',
        message: 'canceling statement due to statement timeout',
      });

      const cancel = new AbortController();
      const cancelled = run(`${VECTOR_SEARCH} OFFSET 0`, ['[90,90,90]'], { signal: cancel.signal });
      expect(await within(cancelled, 100)).toBe('pending');
      cancel.abort();
      expect(await caught(cancelled)).toMatchObject({ code: 'QUERY_TIMEOUT', message: 'canceling statement due to user request' });

      // Many searches given up while the apply is held: none stays in the tracker.
      const many = Array.from({ length: 200 }, () => caught(run(`${VECTOR_SEARCH} OFFSET 0`, ['[90,90,90]'], { timeoutMs: 20 })));
      for (const error of await Promise.all(many)) expect(error.code).toBe('QUERY_TIMEOUT');
      expect(projections.applied.waiting).toBe(waitingBefore);
    } finally {
      release();
    }
    expect(ids(await run(VECTOR_SEARCH, ['[90,90,90]']))).toEqual([3]);
    expect(projections.applied.waiting).toBe(0);
  });

  it('with the tables apply held, a SELECT ends at its deadline and at its cancel, leaving no waiter; then sees the write', async () => {
    const { projections } = h.stack;
    const release = hold('tables');
    try {
      await run('INSERT INTO plain VALUES (3, 30)');
      expect(projections.readBarrier.tablesBehind).toBe(true);
      expect(await caught(run('SELECT * FROM plain WHERE id = $1', [3], { timeoutMs: 100 }))).toMatchObject({
        code: 'QUERY_TIMEOUT',
        message: 'canceling statement due to statement timeout',
      });
      const cancel = new AbortController();
      const cancelled = run('SELECT count(*) AS n FROM plain', [], { signal: cancel.signal });
      expect(await within(cancelled, 100)).toBe('pending');
      cancel.abort();
      expect(await caught(cancelled)).toMatchObject({ code: 'QUERY_TIMEOUT', message: 'canceling statement due to user request' });
      expect(projections.tablesApplied.waiting).toBe(0);
    } finally {
      release();
    }
    expect((await run('SELECT * FROM plain WHERE id = $1', [3])).rows).toEqual([{ id: 3, v: 30 }]);
    expect(projections.tablesApplied.waiting).toBe(0);
  });

  it('writers that outrun a held apply: past unappliedKeysMax the next write waits for the apply, so the backlog stays bounded', async () => {
    const { projections } = h.stack;
    const rowsPerWrite = 10_000;
    const bound = PROJECTION_LIMITS.unappliedKeysMax;
    const release = hold('tables');
    let held: Promise<QueryResult> | 'pending' | null = null;
    let answered = 0;
    try {
      // Each write answered once durable adds its keys to the backlog (the pending overlay) that every
      // later read waits for; without the bound they would go on being answered, the backlog unbounded.
      for (let n = 0; n < Math.ceil((3 * bound) / rowsPerWrite) && held === null; n++) {
        const first = 1_000_000 + n * rowsPerWrite;
        const write = run('INSERT INTO plain SELECT g, 0 FROM generate_series($1::int, $2::int) g', [first, first + rowsPerWrite - 1]);
        if ((await within(write, 3000)) === 'pending') held = write;
        else answered++;
      }
      expect(held, 'a write answered with the backlog past the bound').not.toBeNull();
      // Answered while the backlog was at or under the bound when they began; the next one waits.
      expect(answered).toBe(Math.floor(bound / rowsPerWrite) + 1);
      expect(projections.sequencer.pendingKeys).toBeLessThanOrEqual(bound + rowsPerWrite);
    } finally {
      release();
    }
    expect((await held)!.affectedRows).toBe(rowsPerWrite);
    expect((await run('SELECT count(*)::int AS n FROM plain WHERE id >= 1000000')).rows).toEqual([{ n: (answered + 1) * rowsPerWrite }]);
    expect(projections.sequencer.pendingKeys).toBe(0);
  });
});
