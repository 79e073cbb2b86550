import { pbkdf2 } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '../../projections/index.js';
import type { QueryResult } from '../../query/index.js';
import { seededRandom } from '../helpers/random.js';
import { openSql, type SqlHarness } from './helpers.js';

/**
 * The direct hnsw top-k (query/fast-vector.ts, engine.vectorSelect) against the general path
 * (engine.execute) on the same statements: the same QueryResult for random queries, with ties,
 * deleted and updated rows, NULL vectors, k past the table's size, filters, every metric, and the
 * SQL the REST /vectors/search and the vector protocol's /query send.
 */
const DIMS = 8;
const random = seededRandom(16);
const vector = (): number[] => Array.from({ length: DIMS }, () => Math.round((random() * 2 - 1) * 1000) / 1000);
const lit = (v: readonly number[]): string => `[${v.join(',')}]`;

describe('direct hnsw top-k (engine.vectorSelect)', () => {
  let h: SqlHarness;
  const options = (params: unknown[], efSearch?: number) => ({
    params,
    timeoutMs: 30_000,
    maxRows: 1000,
    tenant: 'default',
    ...(efSearch === undefined ? {} : { efSearch }),
  });
  /** The general path's answer, then the direct one's (it must take the statement: its plan is cached by the first). */
  const both = async (sql: string, params: unknown[], efSearch?: number): Promise<[QueryResult, QueryResult]> => {
    const general = await h.engine.execute(sql, options(params, efSearch));
    const direct = h.engine.vectorSelect(sql, options(params, efSearch));
    expect(direct, sql).toBeDefined();
    return [general, await direct!];
  };
  const same = async (sql: string, params: unknown[], efSearch?: number): Promise<QueryResult> => {
    const [general, direct] = await both(sql, params, efSearch);
    expect(direct, sql).toEqual(general);
    return direct;
  };

  beforeAll(async () => {
    h = await openSql();
    await h.q(`CREATE TABLE items (id TEXT PRIMARY KEY, embedding VECTOR(${DIMS}), metadata JSONB, n INT)`);
    await h.q('CREATE INDEX items_cos ON items USING hnsw (embedding vector_cosine_ops)');
    await h.q('CREATE INDEX items_l2 ON items USING hnsw (embedding vector_l2_ops)');
    await h.q('CREATE INDEX items_ip ON items USING hnsw (embedding vector_ip_ops)');
    const shared = vector();
    const values = Array.from({ length: 400 }, (_v, i) => {
      // Ties: every 20th row has the same vector; some rows have none; metadata as JSON, NULL and JSON null.
      const v = i % 20 === 0 ? shared : vector();
      const embedding = i % 37 === 5 ? 'NULL' : `'${lit(v)}'`;
      const metadata = i % 3 === 0 ? `'{"cat":${i % 7},"x":1.50}'` : i % 3 === 1 ? 'NULL' : `'null'`;
      return `('r${i}', ${embedding}, ${metadata}, ${i})`;
    });
    await h.q(`INSERT INTO items VALUES ${values.join(', ')}`);
    await h.q(`CREATE TABLE pc (namespace TEXT, id TEXT, "values" VECTOR(${DIMS}), sparse_values JSONB, metadata JSONB, PRIMARY KEY (namespace, id))`);
    await h.q('CREATE INDEX pc_hnsw ON pc USING hnsw ("values" vector_cosine_ops)');
    const pcValues = Array.from({ length: 1000 }, (_v, i) => `('${i % 100 === 0 ? 'other' : ''}', 'p${i}', '${lit(vector())}', NULL, '{"i":${i}}')`);
    await h.q(`INSERT INTO pc VALUES ${pcValues.join(', ')}`);
  });
  afterAll(async () => {
    await h.close();
  });

  it('answers as the general path for the REST search (every metric, ef, k, metadata and vectors asked or not)', async () => {
    const before = h.engine.vectorSelectStats();
    for (const [op, ops] of [
      ['<=>', 'cosine'],
      ['<->', 'l2'],
      ['<#>', 'ip'],
    ] as const) {
      const sql = `SELECT "id" AS "__id", "embedding" ${op} CAST($1 AS vector) AS "__distance", "embedding" AS "__vector", "metadata" AS "__metadata" FROM "items" WHERE "embedding" IS NOT NULL ORDER BY "embedding" ${op} CAST($1 AS vector) LIMIT $2`;
      const lean = `SELECT "id" AS "__id", "embedding" ${op} CAST($1 AS vector) AS "__distance" FROM "items" WHERE "embedding" IS NOT NULL ORDER BY "embedding" ${op} CAST($1 AS vector) LIMIT $2`;
      for (let i = 0; i < 30; i++) {
        const k = 1 + Math.floor(random() * 30);
        const ef = i % 3 === 0 ? undefined : 1 + Math.floor(random() * 100);
        const result = await same(i % 2 === 0 ? sql : lean, [vector(), k], ef);
        expect(result.rows.length, ops).toBe(k);
      }
    }
    const after = h.engine.vectorSelectStats();
    expect(after.direct - before.direct).toBeGreaterThan(60);
  });

  it('computes other expressions of the row per row: another metric than the ORDER BY, the distance plus a constant', async () => {
    const sql = `SELECT id, embedding <-> $1 AS l2, (embedding <=> $1) + 1 AS shifted, embedding <=> $1 AS d, n * 2 AS twice FROM items WHERE n % 2 = 0 ORDER BY embedding <=> $1 LIMIT $2`;
    for (let i = 0; i < 10; i++) {
      const result = await same(sql, [lit(vector()), 1 + (i % 5)]);
      for (const row of result.rows) expect(row['l2']).not.toBe(row['d']);
    }
  });

  it('evaluates expressions with and without parameters anew for each search (kept compiled or not)', async () => {
    const fixed = lit(vector());
    const sql = `SELECT id, n, n * 2 + 1 AS odd, embedding <-> '${fixed}' AS to_fixed, n > $3 AS above, embedding <=> $1 AS d FROM items WHERE n % 3 <> 1 AND n > $3 - 100 ORDER BY embedding <=> $1 LIMIT $2`;
    const before = h.engine.vectorSelectStats();
    for (let i = 0; i < 12; i++) {
      const floor = 100 + 20 * i;
      const result = await same(sql, [lit(vector()), 1 + (i % 4), floor]);
      for (const row of result.rows) {
        expect(row['odd']).toBe((row['n'] as number) * 2 + 1);
        expect(row['above']).toBe((row['n'] as number) > floor);
        expect((row['n'] as number) % 3).not.toBe(1);
      }
    }
    expect(h.engine.vectorSelectStats().direct).toBeGreaterThan(before.direct);
  });

  it('answers ties as the general path does (the same vector under many ids)', async () => {
    const [first] = await h.rows(`SELECT embedding FROM items WHERE id = 'r0'`);
    const tie = first!['embedding'] as number[];
    const sql = `SELECT "id" AS "__id", "embedding" <-> CAST($1 AS vector) AS "__distance" FROM "items" WHERE "embedding" IS NOT NULL ORDER BY "embedding" <-> CAST($1 AS vector) LIMIT $2`;
    const result = await same(sql, [tie, 20]);
    expect(result.rows.filter((r) => r['__distance'] === 0).length).toBeGreaterThanOrEqual(10);
  });

  it('hands k past the rows of the table, and a statement that is no plain top-k, to the general path', async () => {
    const sql = `SELECT "id" AS "__id", "embedding" <=> CAST($1 AS vector) AS "__distance" FROM "items" WHERE "embedding" IS NOT NULL ORDER BY "embedding" <=> CAST($1 AS vector) LIMIT $2`;
    const before = h.engine.vectorSelectStats();
    const result = await same(sql, [vector(), 1000]);
    expect(result.rows.length).toBe(400 - 11);
    expect(h.engine.vectorSelectStats().general).toBe(before.general + 1);
    // OFFSET, and a plan without the index (inner product of a cosine-only shape), are not taken.
    const offset = `SELECT id FROM items ORDER BY embedding <=> $1 LIMIT 3 OFFSET 2`;
    await h.engine.execute(offset, options([lit(vector())]));
    expect(h.engine.vectorSelect(offset, options([lit(vector())]))).toBeUndefined();
    const exact = `SELECT id FROM items ORDER BY (embedding <=> $1) + 0 LIMIT 3`;
    await h.engine.execute(exact, options([lit(vector())]));
    expect(h.engine.vectorSelect(exact, options([lit(vector())]))).toBeUndefined();
  });

  it('hands over to the general path within the same deadline (one timeout_ms, not one per path)', async () => {
    const sql = `SELECT "id" AS "__id", "embedding" <=> CAST($1 AS vector) AS "__distance" FROM "items" WHERE "embedding" IS NOT NULL ORDER BY "embedding" <=> CAST($1 AS vector) LIMIT $2`;
    await h.engine.execute(sql, options([vector(), 3]));
    const before = h.engine.vectorSelectStats();
    // k past the table: the direct round finds too few rows and hands over, after the deadline passed meanwhile.
    const searching = h.engine.vectorSelect(sql, { ...options([vector(), 1000]), timeoutMs: 300 })!.catch((e: unknown) => e);
    const until = Date.now() + 400;
    while (Date.now() < until); // the event loop held past the 300 ms deadline while the graph search is in flight
    const answer = await searching;
    expect(h.engine.vectorSelectStats().general).toBe(before.general + 1);
    expect((answer as { code?: string }).code).toBe('QUERY_TIMEOUT');
  });

  it('reads a row searched again as it is now: its metadata changed, its vector (and graph label) not', async () => {
    const sql = `SELECT "id" AS "__id", "embedding" <=> CAST($1 AS vector) AS "__distance", "metadata" AS "__metadata", "n" FROM "items" WHERE "embedding" IS NOT NULL ORDER BY "embedding" <=> CAST($1 AS vector) LIMIT $2`;
    const q = vector();
    await same(sql, [q, 4]);
    for (let round = 0; round < 4; round++) {
      // The same search twice: its candidates are read again (cached since the first time).
      const first = h.engine.vectorSelect(sql, options([q, 4]));
      expect(first).toBeDefined();
      const [nearest] = (await first!).rows;
      await h.q(`UPDATE items SET metadata = $1, n = n + 1 WHERE id = $2`, [{ round }, nearest!['__id']]);
      const again = await same(sql, [q, 4]);
      expect(again.rows[0]).toEqual({ ...nearest, __metadata: { round }, n: (nearest!['n'] as number) + 1 });
    }
  });

  it('reads its candidates by one getMany while a write to the table is in flight, with the same answer', async () => {
    const sql = `SELECT "id" AS "__id", "embedding" <=> CAST($1 AS vector) AS "__distance", "metadata" AS "__metadata" FROM "items" WHERE "embedding" IS NOT NULL ORDER BY "embedding" <=> CAST($1 AS vector) LIMIT $2`;
    const q = vector();
    const [general] = await both(sql, [q, 5]);
    const store = h.stack.projections.store;
    const tableId = h.stack.projections.catalog.tableByName('default', 'public', 'items')!.def.id;
    let row: [Uint8Array, Uint8Array] | undefined;
    for await (const batch of store.entries({ ...keys.idRange(keys.KeySpace.Row, tableId), limit: 1 })) row ??= batch[0];
    // The thread pool kept busy, so a write of a row (its own image again: nothing changes) stays in flight meanwhile.
    const busy = Array.from({ length: 8 }, () => new Promise((resolve) => pbkdf2('x', 'y', 200_000, 32, 'sha256', resolve)));
    const writing = store.write([{ type: 'put', key: row![0], value: row![1] }]);
    expect(store.rowWritesInFlight(tableId)).toBe(true);
    const direct = h.engine.vectorSelect(sql, options([q, 5]));
    expect(direct).toBeDefined();
    expect(await direct!).toEqual(general);
    await Promise.all([writing, ...busy]);
  });

  it('sees deleted rows, updated vectors and NULLed vectors as the general path does', async () => {
    const sql = `SELECT "id" AS "__id", "embedding" <=> CAST($1 AS vector) AS "__distance", "metadata" AS "__metadata" FROM "items" WHERE "embedding" IS NOT NULL ORDER BY "embedding" <=> CAST($1 AS vector) LIMIT $2`;
    for (let round = 0; round < 6; round++) {
      const q = vector();
      const [nearest] = (await same(sql, [q, 5])).rows;
      if (round % 3 === 0) await h.q('DELETE FROM items WHERE id = $1', [nearest!['__id']]);
      else if (round % 3 === 1) await h.q('UPDATE items SET embedding = $1 WHERE id = $2', [lit(vector()), nearest!['__id']]);
      else await h.q('UPDATE items SET embedding = NULL WHERE id = $1', [nearest!['__id']]);
      await h.q('UPDATE items SET embedding = $1 WHERE id = $2', [lit(q), `r${1 + round * 7}`]);
      const after = await same(sql, [q, 5]);
      expect(after.rows[0]!['__id']).toBe(`r${1 + round * 7}`);
      // A deleted row, or one whose vector became NULL, is gone from the answer (unless it is the row just given q).
      if (round % 3 !== 1 && nearest!['__id'] !== `r${1 + round * 7}`) expect(after.rows.map((r) => r['__id'])).not.toContain(nearest!['__id']);
    }
  });

  it('ranks cosine searches of full-precision 128-dim vectors by the same distances as the general path, rows found again included', async () => {
    await h.q('CREATE TABLE wide (id INT PRIMARY KEY, embedding VECTOR(128))');
    await h.q('CREATE INDEX wide_cos ON wide USING hnsw (embedding vector_cosine_ops)');
    const full = (): number[] => Array.from(Float32Array.from({ length: 128 }, () => (random() * 2 - 1) * 10 ** Math.floor(random() * 7 - 3)));
    const rows = Array.from({ length: 300 }, (_v, i) => `(${i}, '${lit(i % 50 === 0 ? new Array<number>(128).fill(0) : full())}')`);
    await h.q(`INSERT INTO wide VALUES ${rows.join(', ')}`);
    const sql = `SELECT "id" AS "__id", "embedding" <=> CAST($1 AS vector) AS "__distance" FROM "wide" WHERE "embedding" IS NOT NULL ORDER BY "embedding" <=> CAST($1 AS vector) LIMIT $2`;
    const queries = Array.from({ length: 10 }, full);
    // Each query twice: the second finds rows whose norms the first computed.
    for (const q of [...queries, ...queries]) expect((await same(sql, [q, 10])).rows).toHaveLength(10);
    // The same distance in another spelling (a constant query): ranked by the expression's own evaluator.
    const constant = `SELECT id, embedding <=> '${lit(queries[0]!)}' AS d FROM wide ORDER BY embedding <=> '${lit(queries[0]!)}' LIMIT 5`;
    await same(constant, []);
  });

  it("answers as the general path for the vector protocol's query (a namespace filter; a namespace the first round misses)", async () => {
    const sql = (columns: string) =>
      `SELECT id, "values" <=> CAST($1 AS vector) AS "__distance"${columns} FROM pc WHERE namespace = $2 AND "values" IS NOT NULL ORDER BY "values" <=> CAST($1 AS vector) LIMIT 10`;
    const before = h.engine.vectorSelectStats();
    for (let i = 0; i < 20; i++) {
      await same(sql(i % 2 === 0 ? '' : ', "values", sparse_values, metadata'), [vector(), i % 5 === 0 ? 'other' : '']);
    }
    const after = h.engine.vectorSelectStats();
    // The default namespace (99% of the rows) is mostly answered directly; 'other' (1%) needs more rounds: the general path.
    expect(after.direct - before.direct).toBeGreaterThanOrEqual(10);
    expect(after.general - before.general).toBeGreaterThanOrEqual(1);
  });

  it('sees every write acknowledged before it started, searches and writes in flight together', async () => {
    const sql = `SELECT "id" AS "__id", "embedding" <=> CAST($1 AS vector) AS "__distance" FROM "items" WHERE "embedding" IS NOT NULL ORDER BY "embedding" <=> CAST($1 AS vector) LIMIT $2`;
    await h.engine.execute(sql, options([vector(), 1]));
    const searches: Promise<unknown>[] = [];
    for (let i = 0; i < 30; i++) {
      const q = vector();
      await h.q('INSERT INTO items VALUES ($1, $2, NULL, 0)', [`w${i}`, lit(q)]);
      // Still in flight while the next rows are written: the row written before it started is its nearest.
      searches.push(h.engine.vectorSelect(sql, options([q, 1]))!.then((r) => expect(r.rows.map((row) => row['__id'])).toEqual([`w${i}`])));
    }
    await Promise.all(searches);
  });

  it('refuses what the general path refuses, with the same errors', async () => {
    const sql = `SELECT "id" AS "__id", "embedding" <=> CAST($1 AS vector) AS "__distance" FROM "items" WHERE "embedding" IS NOT NULL ORDER BY "embedding" <=> CAST($1 AS vector) LIMIT $2`;
    await h.engine.execute(sql, options([vector(), 3]));
    const general = await h.engine.execute(sql, options([[1, 2], 3])).catch((e: unknown) => e);
    const direct = await h.engine.vectorSelect(sql, options([[1, 2], 3]))!.catch((e: unknown) => e);
    expect(direct).toEqual(general);
    expect(direct).toBeInstanceOf(Error);
    const badEf = await h.engine.vectorSelect(sql, options([vector(), 3], 5000))!.catch((e: unknown) => e);
    expect(badEf).toEqual(await h.engine.execute(sql, options([vector(), 3], 5000)).catch((e: unknown) => e));
    expect((badEf as { code?: string }).code).toBe('INVALID_QUERY');
  });
});
