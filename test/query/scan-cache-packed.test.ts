import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/logger.js';
import { DEFAULT_SQL_LIMITS, SqlEngine, typeSystem } from '../../query/index.js';
import { TableRows } from '../../query/exec/table-rows.js';
import type { QValue } from '../../query/types/contract.js';
import { openSql, type SqlHarness } from './helpers.js';

/**
 * The scan cache keeps rows packed (query/exec/chunk.ts): keys back to back, number and int8
 * columns as typed arrays with NULL flags, anything else as it is, rows made when read. Whatever
 * the values and writes, what it gives back must be exactly what it was given, and it must stay
 * within its byte bound (sqlScanCacheBytesMax), a table past it being read from LevelDB.
 */

const pkOf = (id: number): Uint8Array => Uint8Array.from([id >> 8, id & 0xff]);

/** Values of every kind a column can hold, so that chunks switch layouts (typed, then not) as rows come and go. */
const anyValue: fc.Arbitrary<QValue> = fc.oneof(
  fc.constant(null),
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -0, NaN, Infinity, -Infinity),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  fc.constantFrom(2n ** 63n, -(2n ** 63n) - 1n, 2n ** 80n), // beyond int64: not a BigInt64Array value
  fc.string({ maxLength: 12 }),
  fc.boolean(),
  fc.constant({ a: [1, 'x', null] } as unknown as QValue),
);

/** Rows of (int8 or NULL, number or NULL, text or NULL, anything). */
const rowOf = fc.tuple(
  fc.option(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), { nil: null }),
  fc.option(fc.oneof(fc.integer(), fc.double(), fc.constantFrom(-0, NaN)), { nil: null }),
  fc.option(fc.string({ maxLength: 20 }), { nil: null }),
  anyValue,
) as fc.Arbitrary<QValue[]>;

describe('packed chunks', () => {
  it('give back exactly the rows they were given, after any patches, and versions handed out never change', () => {
    const patch = fc.array(fc.record({ id: fc.integer({ min: 0, max: 2500 }), row: fc.option(rowOf, { nil: null }) }), { maxLength: 600 });
    fc.assert(
      fc.property(
        fc.array(rowOf, { maxLength: 1500 }),
        fc.array(patch, { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 0, max: 2500 }),
        (initial, patches, probe) => {
          let model = new Map(initial.map((row, i) => [i * 2, row] as [number, QValue[]]));
          let rows = TableRows.fromSorted(
            [...model.keys()].map(pkOf),
            [...model.values()].map((r) => [...r]),
          );
          const versions: [TableRows, Map<number, QValue[]>][] = [[rows, model]];
          for (const changes of patches) {
            const net = new Map(changes.map((c) => [c.id, c.row]));
            const sorted = [...net].sort((x, y) => x[0] - y[0]);
            rows = rows.patched(sorted.map(([id, row]) => ({ pk: pkOf(id), row: row === null ? null : [...row] })));
            model = new Map(model);
            for (const [id, row] of sorted) {
              if (row === null) model.delete(id);
              else model.set(id, row);
            }
            versions.push([rows, model]);
          }
          for (const [version, state] of versions) {
            const want = [...state].sort((x, y) => x[0] - y[0]).map(([, row]) => row);
            expect(version.count).toBe(want.length);
            expect([...version.batches({ reverse: false }, 97)].flat()).toEqual(want);
            expect([...version.batches({ reverse: true }, 1000)].flat()).toEqual([...want].reverse());
            expect(version.get(pkOf(probe))).toEqual(state.get(probe) ?? null);
            let bytes = 0;
            for (const chunk of version.chunkList) {
              bytes += chunk.bytes;
              // A number column as doubles, NaN for NULL (and for NaN), whatever its layout.
              const numbers = [...chunk.numbers(1)];
              const values = chunk.rows().map((r) => (r[1] === null ? NaN : r[1]));
              expect(numbers).toEqual(values);
            }
            expect(version.bytes).toBe(bytes);
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('copy the keys they are given: a key that is a view of a large buffer does not keep it alive', () => {
    const big = new Uint8Array(1 << 20);
    for (let i = 0; i < 1000; i++) big.set(pkOf(i), i * 2);
    const views = Array.from({ length: 1000 }, (_, i) => big.subarray(i * 2, i * 2 + 2));
    let rows = TableRows.fromSorted(
      views,
      views.map((_, i) => [BigInt(i), i]),
    );
    rows = rows.patched([{ pk: big.subarray(2 * 1000, 2 * 1000 + 2).fill(0xff), row: [1n, 1] }]);
    // 1,001 keys of 2 bytes and two 8-byte columns: ~18 KB, nothing near the 1 MiB buffer.
    expect(rows.bytes).toBeLessThan(30_000);
    for (const chunk of rows.chunkList) for (const pk of chunk.pks) expect(pk.buffer.byteLength).toBe(2);
    expect(rows.get(Uint8Array.from([0xff, 0xff]))).toEqual([1n, 1]);
  });
});

describe('packed chunks count their bytes', () => {
  it('after many writes, about what the same rows count built afresh (a write estimates the runs it copies)', () => {
    const text = (id: number): string => 'x'.repeat(id % 97) + String(id);
    let rows = TableRows.fromSorted(
      Array.from({ length: 3000 }, (_, i) => pkOf(i * 2)),
      Array.from({ length: 3000 }, (_, i) => [BigInt(i * 2), text(i * 2)]),
    );
    const model = new Map(Array.from({ length: 3000 }, (_, i) => [i * 2, text(i * 2)]));
    for (let w = 0; w < 2000; w++) {
      const id = (w * 7919) % 6000;
      const row = w % 5 === 0 ? null : [BigInt(id), text(id + w)];
      rows = rows.patched([{ pk: pkOf(id), row }]);
      if (row === null) model.delete(id);
      else model.set(id, row[1] as string);
    }
    const sorted = [...model].sort((a, b) => a[0] - b[0]);
    const fresh = TableRows.fromSorted(
      sorted.map(([id]) => pkOf(id)),
      sorted.map(([id, t]) => [BigInt(id), t]),
    );
    expect([...rows.batches({ reverse: false }, 1000)].flat()).toEqual([...fresh.batches({ reverse: false }, 1000)].flat());
    expect(rows.bytes / fresh.bytes).toBeGreaterThan(0.8);
    expect(rows.bytes / fresh.bytes).toBeLessThan(1.25);
  });
});

/** An engine over the same store that never caches: the reference read. */
function referenceEngine(sql: SqlHarness): SqlEngine {
  return new SqlEngine({ projections: sql.stack.projections, types: typeSystem, logger: silentLogger, limits: { ...DEFAULT_SQL_LIMITS, scanCacheRowsMax: 0 } });
}

const read = async (engine: SqlEngine, text: string, params: unknown[] = []): Promise<unknown[]> =>
  (await engine.execute(text, { params, timeoutMs: 30_000, maxRows: 10_000, tenant: 'default' })).rows;

type Write =
  | { kind: 'insert'; id: number; n: number | null; f: number | null; t: string | null }
  | { kind: 'update'; mod: number }
  | { kind: 'delete'; mod: number; rem: number };

const write: fc.Arbitrary<Write> = fc.oneof(
  fc.record({
    kind: fc.constant('insert' as const),
    id: fc.integer({ min: 0, max: 300 }),
    n: fc.option(fc.integer({ min: -5, max: 5 }), { nil: null }),
    f: fc.option(fc.double({ noNaN: true, noDefaultInfinity: true }), { nil: null }),
    t: fc.option(fc.string({ maxLength: 8 }), { nil: null }),
  }),
  fc.record({ kind: fc.constant('update' as const), mod: fc.integer({ min: 1, max: 7 }) }),
  fc.record({ kind: fc.constant('delete' as const), mod: fc.integer({ min: 2, max: 9 }), rem: fc.integer({ min: 0, max: 8 }) }),
);

describe('the scan cache over packed chunks', () => {
  it('answers every scan and aggregate as a read from LevelDB does, under random writes of every column type', async () => {
    const sql = await openSql();
    const reference = referenceEngine(sql);
    let run = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(write, { minLength: 5, maxLength: 30 }), async (writes) => {
          const t = `p${run++}`;
          await sql.q(`CREATE TABLE ${t} (id BIGINT PRIMARY KEY, n INTEGER, f FLOAT8, t TEXT, b BOOLEAN, j JSONB, d DATE)`);
          await sql.q(
            `INSERT INTO ${t} SELECT g, g % 5, g::float8 / 3, 'r' || g, g % 2 = 0, '{"k": 1}'::jsonb, DATE '2024-01-01' + g::int FROM generate_series(1, 600) g`,
          );
          const statements = [
            `SELECT * FROM ${t}`,
            `SELECT * FROM ${t} WHERE id >= 100 AND id < 400 ORDER BY id DESC`,
            `SELECT id, t FROM ${t} WHERE id = 250`,
            `SELECT count(*), max(n), min(d), count(n), sum(f) FROM ${t} WHERE n > $1`,
            `SELECT count(*), max(n) FROM ${t} WHERE n > $1`,
          ];
          for (const w of writes) {
            if (w.kind === 'insert')
              await sql.q(
                `INSERT INTO ${t} (id, n, f, t) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO UPDATE SET n = excluded.n, f = excluded.f, t = excluded.t`,
                [w.id, w.n, w.f, w.t],
              );
            else if (w.kind === 'update') await sql.q(`UPDATE ${t} SET n = n + 1, b = NOT b, j = NULL WHERE id % ${w.mod} = 0`);
            else await sql.q(`DELETE FROM ${t} WHERE id % ${w.mod} = ${w.rem}`);
            for (const text of statements) {
              const params = text.includes('$1') ? [1] : [];
              expect(await read(sql.engine, text, params), text).toEqual(await read(reference, text, params));
            }
          }
        }),
        { numRuns: 8 },
      );
      const stats = sql.engine.scanCacheStats();
      expect(stats.patches).toBeGreaterThan(0);
      expect(stats.aggregates).toBeGreaterThan(0);
      expect(stats.hits).toBeGreaterThan(stats.fills);
    } finally {
      await sql.close();
    }
  }, 120_000);
});

describe('the scan cache byte bound (sqlScanCacheBytesMax)', () => {
  it('keeps a growing table within its bytes, previous state included; past it the table is read from LevelDB, right', async () => {
    const bytesMax = 64 * 1024;
    const sql = await openSql({ limits: { ...DEFAULT_SQL_LIMITS, scanCacheBytesMax: bytesMax } });
    try {
      await sql.q('CREATE TABLE s (id BIGINT PRIMARY KEY, n INTEGER NOT NULL)');
      let rows = 0;
      let cachedAt = 0;
      for (let step = 0; step < 40; step++) {
        await sql.q(`INSERT INTO s SELECT g, g % 10 FROM generate_series(${rows}, ${rows + 99}) g`);
        rows += 100;
        expect(await sql.rows('SELECT count(*) AS c, max(n) AS m FROM s WHERE n > $1', [4])).toEqual([{ c: rows / 2, m: 9 }]);
        const size = sql.engine.scanCacheStats();
        expect(size.bytes, `after ${rows} rows`).toBeLessThanOrEqual(bytesMax);
        if (size.tables === 1) cachedAt = rows;
      }
      // Packed, a row of (BIGINT, INTEGER) costs ~26 bytes (two states counted): cached up to ~1,000 rows, not up to 4,000.
      expect(cachedAt).toBeGreaterThanOrEqual(500);
      expect(cachedAt).toBeLessThan(rows);
      expect(sql.engine.scanCacheStats()).toMatchObject({ tables: 0, rows: 0, bytes: 0 });
      // Back under the bound: cached again by the next full scan.
      await sql.q('DELETE FROM s WHERE id >= 300');
      expect(await sql.rows('SELECT count(*) AS c FROM s')).toEqual([{ c: 300 }]);
      expect(sql.engine.scanCacheStats().tables).toBe(1);
      expect(await sql.rows('SELECT count(*) AS c, max(n) AS m FROM s WHERE n > $1', [8])).toEqual([{ c: 30, m: 9 }]);
    } finally {
      await sql.close();
    }
  });

  it('a few wide rows past the bytes are not cached, however few rows they are', async () => {
    const sql = await openSql({ limits: { ...DEFAULT_SQL_LIMITS, scanCacheBytesMax: 64 * 1024 } });
    try {
      await sql.q('CREATE TABLE w (id INTEGER PRIMARY KEY, doc TEXT)');
      await sql.q(`INSERT INTO w SELECT g, repeat('x', 2000) || g FROM generate_series(1, 10) g`);
      expect(await sql.rows('SELECT count(*) AS c FROM w')).toEqual([{ c: 10 }]);
      expect(sql.engine.scanCacheStats().tables).toBe(1); // ~40 KB of text counted
      await sql.q(`INSERT INTO w SELECT g, repeat('y', 2000) || g FROM generate_series(11, 40) g`);
      const all = await sql.rows('SELECT id, length(doc) AS l FROM w ORDER BY id');
      expect(all).toEqual(Array.from({ length: 40 }, (_, i) => ({ id: i + 1, l: 2000 + String(i + 1).length })));
      expect(sql.engine.scanCacheStats()).toMatchObject({ tables: 0, bytes: 0 });
    } finally {
      await sql.close();
    }
  });
});
