import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/logger.js';
import { DEFAULT_SQL_LIMITS, SqlEngine, typeSystem, type QueryResult } from '../../query/index.js';
import { CHUNK_ROWS, TableRows } from '../../query/exec/table-rows.js';
import { openSql, type SqlHarness } from './helpers.js';

/**
 * Aggregates without GROUP BY over a cached table are answered from the scan cache's chunks
 * (query/exec/ops/aggregate-scan.ts). Every answer must equal the general path's: the same
 * statements through an engine without a scan cache over the same store (operators over rows read
 * from LevelDB).
 */

/** Aggregates answered from the chunks (the engine's stats carry the cache's counters; its type names the common ones). */
const fastAggregates = (sql: SqlHarness): number => sql.engine.scanCacheStats().aggregates;

/** An engine over the same store that never caches: the general path. */
function generalEngine(sql: SqlHarness): SqlEngine {
  return new SqlEngine({ projections: sql.stack.projections, types: typeSystem, logger: silentLogger, limits: { ...DEFAULT_SQL_LIMITS, scanCacheRowsMax: 0 } });
}

const run = (engine: SqlEngine, text: string, params: unknown[] = [], tenant = 'default'): Promise<QueryResult> =>
  engine.execute(text, { params, timeoutMs: 30_000, maxRows: 10_000, tenant });

/** Statements (with parameter sets) whose answers are compared; `a` is INTEGER, `b` SMALLINT, `d` DATE, `f` DOUBLE, `t` TEXT. */
const AGGREGATES: [string, unknown[][]][] = [
  ['SELECT count(*), max(a) FROM s WHERE a > $1', [[-1], [0], [3], [7], [1000], [null]]],
  ['SELECT count(*), count(a), min(a), max(a) FROM s', [[]]],
  [
    'SELECT count(a), min(a), max(a), count(*) FROM s WHERE a >= $1 AND a < $2',
    [
      [2, 6],
      [6, 2],
      [-5, 100],
    ],
  ],
  ['SELECT count(*) FROM s WHERE a = $1', [[4], [99]]],
  ['SELECT count(*), max(a) FROM s WHERE a <> $1', [[4]]],
  ['SELECT count(*), min(a) FROM s WHERE $1 < a', [[3]]],
  ['SELECT count(*), min(a) FROM s WHERE $1 >= a', [[3]]],
  ['SELECT count(*), max(b), min(a) FROM s WHERE a <= $1 AND b > $2', [[6, 1]]],
  ['SELECT count(*), max(a) FROM s WHERE a > 2 AND id < 40', [[]]],
  ['SELECT count(*), sum(a), avg(a), sum(f), max(f), min(f) FROM s WHERE a % 3 = 1', [[]]],
  ["SELECT count(t), string_agg(t, ','), max(t) FROM s WHERE a IS NULL OR a > $1", [[5]]],
  ['SELECT min(d), max(d), count(d) FROM s WHERE d > $1', [['2020-01-03'], ['1999-12-31']]],
  ['SELECT count(*) + 1 AS c1, max(a) * 2 AS m2 FROM s WHERE a > $1', [[1]]],
  ['SELECT count(*) FROM s', [[]]],
  ['SELECT bool_and(a > 0), array_agg(id), sum(b) FROM s WHERE b IS NOT NULL', [[]]],
];

async function expectSameAnswers(sql: SqlHarness, general: SqlEngine, note: string): Promise<void> {
  for (const [text, paramSets] of AGGREGATES) {
    for (const params of paramSets) {
      const want = await run(general, text, params);
      const got = await run(sql.engine, text, params);
      expect(got.rows, `${note}: ${text} ${JSON.stringify(params)}`).toEqual(want.rows);
      expect(got.columns).toEqual(want.columns);
    }
  }
}

const DDL = 'CREATE TABLE s (id BIGINT PRIMARY KEY, a INTEGER, b SMALLINT, d DATE, f DOUBLE PRECISION, t TEXT)';

/** A row of s: NULLs every few ids in every column but id. */
function values(id: number, shift = 0): string {
  const a = id % 7 === 0 ? 'NULL' : String(((id + shift) % 11) - 2);
  const b = id % 5 === 0 ? 'NULL' : String((id * 3 + shift) % 9);
  const d = id % 6 === 0 ? 'NULL' : `DATE '2020-01-01' + ${(id + shift) % 10}`;
  const f = id % 4 === 0 ? 'NULL' : id % 13 === 0 ? "'NaN'::float8" : String((id + shift) / 4);
  const t = id % 3 === 0 ? 'NULL' : `'t${(id + shift) % 17}'`;
  return `(${id}, ${a}, ${b}, ${d}, ${f}, ${t})`;
}

describe('aggregates answered from the scan cache', () => {
  it('give the general path’s answer: empty table, NULLs, count(*) and count(col), rows inserted, updated and deleted between scans', async () => {
    const sql = await openSql();
    try {
      const general = generalEngine(sql);
      await sql.q(DDL);
      await expectSameAnswers(sql, general, 'empty');
      await sql.q(`INSERT INTO s VALUES ${Array.from({ length: 1500 }, (_, i) => values(i + 1)).join(', ')}`);
      await expectSameAnswers(sql, general, 'loaded');
      const before = fastAggregates(sql);
      await expectSameAnswers(sql, general, 'cached');
      expect(fastAggregates(sql)).toBeGreaterThan(before);
      for (let round = 0; round < 4; round++) {
        await sql.q(`INSERT INTO s VALUES ${values(2000 + round, round)}`);
        await sql.q(`UPDATE s SET a = a + ${round + 1}, d = d + 1 WHERE id % 9 = ${round}`);
        await sql.q(`UPDATE s SET a = NULL, b = NULL WHERE id % 50 = ${round}`);
        await sql.q(`DELETE FROM s WHERE id % 23 = ${round}`);
        await expectSameAnswers(sql, general, `round ${round}`);
      }
      await sql.q('DELETE FROM s');
      await expectSameAnswers(sql, general, 'emptied');
    } finally {
      await sql.close();
    }
  }, 120_000);

  it('over random rows and thresholds, count/max with a WHERE and the general path agree', async () => {
    const sql = await openSql();
    let table = 0;
    try {
      const general = generalEngine(sql);
      const row = fc.record({ id: fc.integer({ min: 1, max: 5000 }), n: fc.option(fc.integer({ min: -3, max: 3 }), { nil: null }) });
      await fc.assert(
        fc.asyncProperty(
          fc.array(row, { maxLength: 300 }),
          fc.array(row, { maxLength: 20 }),
          fc.integer({ min: -4, max: 4 }),
          async (load, later, threshold) => {
            const t = `r${table++}`;
            await sql.q(`CREATE TABLE ${t} (id BIGINT PRIMARY KEY, n INTEGER)`);
            const rows = (list: typeof load) => [...new Map(list.map((r) => [r.id, r])).values()].map((r) => `(${r.id}, ${r.n ?? 'NULL'})`).join(', ');
            if (load.length > 0) await sql.q(`INSERT INTO ${t} VALUES ${rows(load)}`);
            const text = `SELECT count(*), count(n), max(n), min(n) FROM ${t} WHERE n > $1`;
            expect((await run(sql.engine, text, [threshold])).rows).toEqual((await run(general, text, [threshold])).rows); // fills
            if (later.length > 0) await sql.q(`INSERT INTO ${t} VALUES ${rows(later)} ON CONFLICT (id) DO UPDATE SET n = excluded.n`);
            for (const p of [threshold, threshold - 1, null])
              expect((await run(sql.engine, text, [p])).rows, `${t} ${p}`).toEqual((await run(general, text, [p])).rows);
          },
        ),
        { numRuns: 25 },
      );
      expect(fastAggregates(sql)).toBeGreaterThan(0);
    } finally {
      await sql.close();
    }
  }, 120_000);

  it('inside a transaction whose snapshot is older than the cache, and with its own writes, reads its snapshot', async () => {
    const sql = await openSql({
      transactions: { transactionTimeoutMsDefault: 10_000, transactionTimeoutMsMax: 10_000, transactionsOpenMax: 4, sqlDmlRowsMax: 1000 },
    });
    try {
      await sql.q('CREATE TABLE s (id BIGINT PRIMARY KEY, n INTEGER)');
      await sql.q(`INSERT INTO s VALUES ${Array.from({ length: 100 }, (_, i) => `(${i}, ${i % 10})`).join(', ')}`);
      const text = 'SELECT count(*), max(n) FROM s WHERE n > $1';
      expect((await sql.q(text, [5])).rows).toEqual([{ count: 40, max: 9 }]); // fills the cache
      const { transactionId } = await sql.transactions!.begin({ tenant: 'default', isolation: 'repeatable_read', readOnly: false });
      const inTxn = (t: string, params: unknown[] = []) =>
        sql.engine.execute(t, { params, timeoutMs: 30_000, maxRows: 10_000, tenant: 'default', transaction: { id: transactionId } });
      expect((await inTxn(text, [5])).rows).toEqual([{ count: 40, max: 9 }]);
      for (let i = 0; i < 3; i++) {
        await sql.q(`INSERT INTO s VALUES (${1000 + i}, 42)`);
        await sql.q(`DELETE FROM s WHERE id = ${90 + i}`);
        expect((await sql.q(text, [5])).rows).toEqual([{ count: 40 + i + 1, max: 42 }]); // the deleted rows' n is below 5
        expect((await inTxn(text, [5])).rows).toEqual([{ count: 40, max: 9 }]);
      }
      await inTxn('INSERT INTO s VALUES (5000, 77)');
      expect((await inTxn(text, [5])).rows).toEqual([{ count: 41, max: 77 }]);
      await sql.transactions!.rollback(transactionId, { tenant: 'default' });
      expect((await sql.q(text, [5])).rows).toEqual([{ count: 43, max: 42 }]);
    } finally {
      await sql.close();
    }
  });

  it('keeps tenants apart: each tenant’s table of the same name answers its own rows', async () => {
    const sql = await openSql();
    try {
      const text = 'SELECT count(*), max(n) FROM s WHERE n > $1';
      for (const [tenant, rows] of [
        ['alpha', 30],
        ['beta', 70],
      ] as const) {
        await run(sql.engine, 'CREATE TABLE s (id BIGINT PRIMARY KEY, n INTEGER)', [], tenant);
        await run(sql.engine, `INSERT INTO s VALUES ${Array.from({ length: rows }, (_, i) => `(${i}, ${i})`).join(', ')}`, [], tenant);
      }
      for (let i = 0; i < 3; i++) {
        expect((await run(sql.engine, text, [9], 'alpha')).rows).toEqual([{ count: 20, max: 29 }]);
        expect((await run(sql.engine, text, [9], 'beta')).rows).toEqual([{ count: 60, max: 69 }]);
      }
      expect(fastAggregates(sql)).toBeGreaterThan(0);
    } finally {
      await sql.close();
    }
  });
});

describe('concurrent aggregates over a table not cached yet', () => {
  it('read the table once: the others wait for that fill and answer from memory, right under a concurrent insert', async () => {
    const sql = await openSql();
    try {
      await sql.q('CREATE TABLE s (id BIGINT PRIMARY KEY, n INTEGER)');
      await sql.q('INSERT INTO s SELECT g, g % 100 FROM generate_series(1, 3000) g');
      const text = 'SELECT count(*), max(n) FROM s WHERE n >= $1';
      const before = sql.engine.scanCacheStats();
      const answers = await Promise.all(Array.from({ length: 12 }, () => sql.q(text, [50])));
      for (const answer of answers) expect(answer.rows).toEqual([{ count: 1500, max: 99 }]);
      const after = sql.engine.scanCacheStats();
      expect(after.fills - before.fills).toBe(1);
      expect(after.hits - before.hits).toBeGreaterThanOrEqual(11);
      // Dropped by a write too large to follow, then read again by many at once while rows arrive.
      await sql.q('INSERT INTO s SELECT g, 100 FROM generate_series(3001, 8000) g');
      const inserting = sql.q('INSERT INTO s VALUES (9001, 150)');
      const racing = await Promise.all(Array.from({ length: 12 }, () => sql.q(text, [50])));
      await inserting;
      for (const answer of racing) expect([[{ count: 6500, max: 100 }], [{ count: 6501, max: 150 }]]).toContainEqual(answer.rows);
      expect((await sql.q(text, [50])).rows).toEqual([{ count: 6501, max: 150 }]);
    } finally {
      await sql.close();
    }
  });
});

describe('an aggregate waiting for another one’s fill', () => {
  it('stops waiting at its own statement timeout, while the fill goes on', async () => {
    const sql = await openSql();
    try {
      await sql.q('CREATE TABLE s (id BIGINT PRIMARY KEY, n INTEGER)');
      await sql.q('INSERT INTO s SELECT g, g % 100 FROM generate_series(1, 60000) g');
      const text = 'SELECT count(*), max(n) FROM s WHERE n >= $1';
      const filler = run(sql.engine, text, [50]);
      let rowsCachedWhenRefused = -1;
      const waiter = sql.engine.execute(text, { params: [50], timeoutMs: 20, maxRows: 10, tenant: 'default' }).catch((error: unknown) => {
        rowsCachedWhenRefused = sql.engine.scanCacheStats().rows;
        return error as { code?: string };
      });
      const refused = await waiter;
      expect(refused).toMatchObject({ code: 'QUERY_TIMEOUT' });
      // Refused before the other statement's fill of 60,000 rows had finished, not after it.
      expect(rowsCachedWhenRefused).toBe(0);
      expect((await filler).rows).toEqual([{ count: 30000, max: 99 }]);
    } finally {
      await sql.close();
    }
  });
});

describe('TableRows chunks', () => {
  const pk = (id: number): Uint8Array => Uint8Array.from([id >> 16, (id >> 8) & 0xff, id & 0xff]);

  it('an append changes one chunk: the others (and their column layouts) are the same objects', () => {
    let rows = TableRows.fromSorted(
      Array.from({ length: 10_000 }, (_, i) => pk(i)),
      Array.from({ length: 10_000 }, (_, i) => [i, i % 1000]),
    );
    for (const chunk of rows.chunkList) chunk.numbers(1);
    for (let id = 10_000; id < 10_000 + 3 * CHUNK_ROWS; id++) {
      const next = rows.patched([{ pk: pk(id), row: [id, id % 1000] }]);
      const kept = next.chunkList.filter((c) => rows.chunkList.includes(c)).length;
      expect(kept, `append of ${id}`).toBeGreaterThanOrEqual(rows.chunkList.length - 1);
      expect(next.count).toBe(id + 1);
      rows = next;
    }
    const all = rows.chunkList.flatMap((c) => [...c.numbers(1)]);
    expect(all).toEqual(Array.from({ length: rows.count }, (_, i) => i % 1000));
  });

  it('lays a column out as doubles with NaN for NULL, once per chunk', () => {
    const rows = TableRows.fromSorted(
      [pk(1), pk(2), pk(3)],
      [
        [1, 5],
        [2, null],
        [3, -7],
      ],
    );
    const [chunk] = rows.chunkList;
    expect([...chunk!.numbers(1)]).toEqual([5, NaN, -7]);
    expect(chunk!.numbers(1)).toBe(chunk!.numbers(1));
  });
});
