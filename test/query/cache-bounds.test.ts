import { describe, expect, it } from 'vitest';
import { DEFAULT_SQL_LIMITS } from '../../query/index.js';
import { ParseCache } from '../../query/parse-cache.js';
import { PlanCache, type PreparedQuery } from '../../query/prepare.js';
import type { CatalogState } from '../../projections/index.js';
import { openSql } from './helpers.js';

/**
 * The query layer's caches stay within their limits however long a load runs (ARCHITECTURE.md
 * invariant 6): each is filled past its limit here and its size checked.
 */

describe('cache bounds', () => {
  it('the parse cache holds at most its capacity of texts, the most recently used ones', () => {
    const cache = new ParseCache(8);
    for (let i = 0; i < 50; i++) cache.parse(`SELECT ${i}`);
    expect(cache.size).toBe(8);
    cache.parse('SELECT 42'); // held: used again, it moves to the end
    for (let i = 100; i < 107; i++) cache.parse(`SELECT ${i}`);
    expect(cache.size).toBe(8);
    const again = cache.parse('SELECT 42');
    expect(cache.parse('SELECT 42')).toBe(again);
  });

  it('the parse cache evicts by second chance: a text used since it was put survives one eviction, and the same statements come back', () => {
    const cache = new ParseCache(3);
    const a = cache.parse('SELECT 1');
    cache.parse('SELECT 2');
    cache.parse('SELECT 3');
    expect(cache.parse('SELECT 1')).toBe(a);
    cache.parse('SELECT 4');
    expect(['SELECT 1', 'SELECT 2', 'SELECT 3', 'SELECT 4'].filter((t) => cache.peek(t) !== undefined)).toEqual(['SELECT 1', 'SELECT 3', 'SELECT 4']);
    // peek does not count as a use: SELECT 3 goes next, the used SELECT 1 would have survived again.
    expect(cache.peek('SELECT 3')).toBeDefined();
    cache.parse('SELECT 5');
    expect(['SELECT 1', 'SELECT 3', 'SELECT 4', 'SELECT 5'].filter((t) => cache.peek(t) !== undefined)).toEqual(['SELECT 1', 'SELECT 4', 'SELECT 5']);
    // Every entry used on every round: eviction still ends, within the capacity, and a hot text keeps its statements.
    for (let i = 0; i < 1000; i++) {
      expect(cache.parse('SELECT 1')).toBe(a);
      cache.parse('SELECT 4');
      cache.parse(`SELECT ${100 + i}`);
      expect(cache.size).toBeLessThanOrEqual(3);
    }
    expect(cache.parse('SELECT 1')).toBe(a);
  });

  it('the plan cache holds at most its capacity, evicting by second chance: an entry used since it was put survives one eviction', () => {
    // Plans over no table: the catalog is never asked (a plain stand-in for the data the cache holds).
    const plan = (): PreparedQuery => ({ tablesUsed: new Map(), rowCounts: new Map() }) as unknown as PreparedQuery;
    const catalog = {} as CatalogState;
    const cache = new PlanCache(3);
    const a = plan();
    for (const [key, value] of [
      ['a', a],
      ['b', plan()],
      ['c', plan()],
    ] as const)
      cache.set(key, value);
    expect(cache.get('a', catalog)).toBe(a);
    cache.set('d', plan());
    expect(['a', 'b', 'c', 'd'].filter((k) => cache.has(k))).toEqual(['a', 'c', 'd']);
    expect(cache.get('c', catalog)).toBeDefined();
    cache.set('e', plan());
    expect(['a', 'c', 'd', 'e'].filter((k) => cache.has(k))).toEqual(['a', 'c', 'e']);
    // Every entry used: eviction still ends, and the cache stays within its capacity.
    for (let i = 0; i < 1000; i++) {
      for (const k of ['a', 'c', 'e']) cache.get(k, catalog);
      cache.set(`k${i}`, plan());
      expect(cache.size).toBeLessThanOrEqual(3);
    }
    expect(cache.get('missing', catalog)).toBeUndefined();
  });

  it('the scan cache keeps a growing table within its row budget, previous state included, and drops it past the budget', async () => {
    const rowsMax = 1000;
    const sql = await openSql({ limits: { ...DEFAULT_SQL_LIMITS, scanCacheRowsMax: rowsMax } });
    try {
      await sql.q('CREATE TABLE s (id BIGINT PRIMARY KEY, n INTEGER)');
      let rows = 0;
      for (let step = 0; step < 30; step++) {
        const add = step < 20 ? 20 : 40;
        await sql.q(`INSERT INTO s VALUES ${Array.from({ length: add }, (_, i) => `(${rows + i}, ${(rows + i) % 10})`).join(', ')}`);
        rows += add;
        expect(await sql.rows('SELECT count(*) AS c, max(n) AS m FROM s WHERE n > $1', [4])).toEqual([{ c: rows / 2, m: 9 }]);
        const size = sql.engine.scanCacheStats();
        expect(size.rows, `after ${rows} rows`).toBeLessThanOrEqual(rowsMax);
        if (rows > rowsMax) expect(size.tables).toBe(0);
      }
    } finally {
      await sql.close();
    }
  });

  it('writes kept for a cached table that nobody reads are bounded: past the budget the entry is dropped', async () => {
    const sql = await openSql();
    try {
      await sql.q('CREATE TABLE s (id BIGINT PRIMARY KEY, n INTEGER)');
      await sql.q('INSERT INTO s VALUES (0, 0)');
      expect(await sql.rows('SELECT count(*) AS c FROM s')).toEqual([{ c: 1 }]);
      expect(sql.engine.scanCacheStats().tables).toBe(1);
      // One write of more rows than the table holds and than PATCH_OPS_MIN (4096): cheaper to read again than to follow.
      await sql.q('INSERT INTO s SELECT g, g % 10 FROM generate_series(1, 5000) g');
      expect(sql.engine.scanCacheStats().tables).toBe(0);
      expect(await sql.rows('SELECT count(*) AS c, max(n) AS m FROM s WHERE n > $1', [8])).toEqual([{ c: 500, m: 9 }]);
      expect(sql.engine.scanCacheStats()).toMatchObject({ tables: 1, rows: 5001 });
    } finally {
      await sql.close();
    }
  });
});
