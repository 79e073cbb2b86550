import type { PGlite } from '@electric-sql/pglite';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys, RowVersionedStore, type KvOp, type RangeOptions, type StateStore, type StoreSnapshot } from '../../projections/index.js';
import { DEFAULT_SQL_LIMITS } from '../../query/index.js';
import { openSql, type SqlHarness } from './helpers.js';
import { normalizeRows, openPg } from './pg-oracle.js';

/**
 * The scan cache (query/exec/scan-cache.ts) serves whole-table and primary-key scans of unchanged
 * tables from memory. Whatever writes and DDL happen between scans, every result must be
 * PostgreSQL's: a stale cache entry is a wrong answer.
 */

type Op =
  | { kind: 'insert'; ids: number[]; v: number }
  | { kind: 'update'; mod: number; rem: number }
  | { kind: 'delete'; mod: number; rem: number }
  | { kind: 'add_column'; dflt: number }
  | { kind: 'truncate' }
  | { kind: 'index' }
  | { kind: 'read'; lo: number; hi: number; point: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('insert' as const),
      ids: fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 12 }),
      v: fc.integer({ min: -5, max: 5 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('update' as const), mod: fc.integer({ min: 1, max: 4 }), rem: fc.integer({ min: 0, max: 3 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), mod: fc.integer({ min: 2, max: 5 }), rem: fc.integer({ min: 0, max: 4 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('add_column' as const), dflt: fc.integer({ min: 0, max: 9 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'truncate' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'index' as const }) },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('read' as const),
      lo: fc.integer({ min: 0, max: 60 }),
      hi: fc.integer({ min: 0, max: 60 }),
      point: fc.integer({ min: 1, max: 60 }),
    }),
  },
);

describe('scan cache', () => {
  let sql: SqlHarness;
  let pg: PGlite;
  beforeAll(async () => {
    sql = await openSql();
    pg = await openPg();
  });
  afterAll(async () => {
    await sql.close();
    await pg.close();
  });

  it("every scan after any sequence of writes and DDL gives PostgreSQL's result", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 4, maxLength: 18 }), async (ops) => {
        const t = `c${run++}`;
        let extra = 0;
        const both = async (statement: string): Promise<void> => {
          await pg.query(statement);
          await sql.q(statement);
        };
        const compare = async (query: string): Promise<void> => {
          const expected = await pg.query<Record<string, unknown>>(query);
          const columns = expected.fields.map((f) => f.name);
          const want = normalizeRows(expected.rows, columns);
          // Twice: the first scan may fill the cache, the second may be served from it.
          for (let i = 0; i < 2; i++) expect(normalizeRows(await sql.rows(query), columns), `${query} (run ${i})`).toEqual(want);
        };
        await both(`CREATE TABLE ${t} (id INTEGER PRIMARY KEY, v INTEGER, note TEXT)`);
        for (const o of ops) {
          switch (o.kind) {
            case 'insert':
              await both(
                `INSERT INTO ${t} (id, v, note) VALUES ${[...new Set(o.ids)].map((id) => `(${id}, ${o.v}, 'n${id}')`).join(', ')} ON CONFLICT (id) DO UPDATE SET v = excluded.v + ${t}.v`,
              );
              break;
            case 'update':
              await both(`UPDATE ${t} SET v = v + 1, note = note || 'u' WHERE id % ${o.mod} = ${o.rem}`);
              break;
            case 'delete':
              await both(`DELETE FROM ${t} WHERE id % ${o.mod} = ${o.rem}`);
              break;
            case 'add_column':
              if (extra < 2) await both(`ALTER TABLE ${t} ADD COLUMN x${extra++} INTEGER DEFAULT ${o.dflt}`);
              break;
            case 'truncate':
              await both(`TRUNCATE ${t}`);
              break;
            case 'index':
              await both(`CREATE INDEX IF NOT EXISTS ${t}_v ON ${t} (v)`);
              break;
            case 'read':
              await compare(`SELECT * FROM ${t} ORDER BY id`);
              await compare(`SELECT id, v FROM ${t} WHERE id BETWEEN ${Math.min(o.lo, o.hi)} AND ${Math.max(o.lo, o.hi)} ORDER BY id DESC`);
              await compare(`SELECT * FROM ${t} WHERE id = ${o.point}`);
              await compare(`SELECT count(*) AS n, sum(v) AS s FROM ${t} WHERE id > ${o.lo}`);
              // Through the index on v once there is one: entries from the store, rows from the cache.
              await compare(`SELECT id, v, note FROM ${t} WHERE v BETWEEN ${(Math.min(o.lo, o.hi) % 7) - 3} AND ${Math.max(o.lo, o.hi) % 7} ORDER BY id`);
              break;
          }
        }
        await compare(`SELECT * FROM ${t} ORDER BY id`);
      }),
      { numRuns: 25 },
    );
    const stats = sql.engine.scanCacheStats();
    expect(stats.fills).toBeGreaterThan(0);
    expect(stats.hits).toBeGreaterThan(0);
  }, 120_000);

  it('lets go of a dropped table', async () => {
    const own = await openSql();
    try {
      await own.q('CREATE TABLE gone (id INTEGER PRIMARY KEY, v TEXT)');
      await own.q(`INSERT INTO gone VALUES ${Array.from({ length: 20 }, (_, i) => `(${i}, 'v${i}')`).join(', ')}`);
      await own.q('SELECT count(*) FROM gone');
      expect(own.engine.scanCacheStats()).toMatchObject({ fills: 1, tables: 1, rows: 20 });
      await own.q('DROP TABLE gone');
      expect(own.engine.scanCacheStats()).toMatchObject({ tables: 0, rows: 0 });
    } finally {
      await own.close();
    }
  });

  it('a table larger than the budget is never cached, and still read right', async () => {
    const small = await openSql({ limits: { ...DEFAULT_SQL_LIMITS, scanCacheRowsMax: 10 } });
    try {
      await small.q('CREATE TABLE big (id INTEGER PRIMARY KEY)');
      await small.q(`INSERT INTO big VALUES ${Array.from({ length: 50 }, (_, i) => `(${i})`).join(', ')}`);
      for (let i = 0; i < 3; i++) expect(await small.rows('SELECT count(*) AS n FROM big')).toEqual([{ n: 50 }]);
      expect(small.engine.scanCacheStats()).toMatchObject({ fills: 0, hits: 0, rows: 0 });
    } finally {
      await small.close();
    }
  });
});

/** A store whose writes wait until released, to look at versions while a write is in flight. */
class GatedStore implements StateStore {
  release: () => void = () => undefined;
  private gate: Promise<void> = Promise.resolve();
  constructor(private readonly inner: StateStore) {}
  hold(): void {
    this.gate = new Promise((resolve) => (this.release = resolve));
  }
  get(key: Uint8Array, snapshot?: StoreSnapshot) {
    return this.inner.get(key, snapshot);
  }
  getMany(k: readonly Uint8Array[], snapshot?: StoreSnapshot) {
    return this.inner.getMany(k, snapshot);
  }
  entries(range: RangeOptions) {
    return this.inner.entries(range);
  }
  async write(ops: readonly KvOp[]) {
    await this.gate;
    return this.inner.write(ops);
  }
  sync() {
    return this.inner.sync();
  }
  isOpen() {
    return this.inner.isOpen();
  }
  snapshot() {
    return this.inner.snapshot();
  }
  close() {
    return this.inner.close();
  }
}

describe('RowVersionedStore', () => {
  it("a table's version is odd while a write to its rows is in flight, and a snapshot then gets no version", async () => {
    const sql = await openSql();
    try {
      const gated = new GatedStore(sql.stack.store);
      const store = new RowVersionedStore(gated);
      const before = store.snapshot();
      expect(store.rowVersion(before, 7)).toBe(0);
      gated.hold();
      const writing = store.write([{ type: 'put', key: keys.rowKey(7, new Uint8Array([1])), value: new Uint8Array([0]) }]);
      const during = store.snapshot();
      expect(store.rowVersion(during, 7)).toBeNull();
      expect(store.rowVersion(during, 8)).toBe(0); // other tables are unaffected
      gated.release();
      await writing;
      const after = store.snapshot();
      expect(store.rowVersion(after, 7)).toBe(2);
      expect(store.rowVersion(before, 7)).toBe(0); // a snapshot keeps the versions of its moment
      // Writes that touch no rows (offsets, catalog) change no version.
      await store.write([{ type: 'put', key: keys.consumerOffsetKey('x'), value: new Uint8Array([1]) }]);
      expect(store.rowVersion(store.snapshot(), 7)).toBe(2);
      for (const s of [before, during, after]) await s.close();
    } finally {
      await sql.close();
    }
  });
});
