import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TENANT } from '../../core/catalog.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { tempDir } from '../helpers/stack.js';

// the row-key bound (skip the duplicate-key read when every key sorts after
// it) against a model, under random bulk inserts, deletes, key updates, TRUNCATE, DROP + CREATE,
// transactions, restarts and concurrent statements.
describe('row-key bound: random statements against a model', () => {
  let server: TestServer;
  let dataDir: { dir: string; remove: () => Promise<void> };
  beforeAll(async () => {
    dataDir = await tempDir('svcdb-row-key-bound-');
    server = await startTestServer({ dataDir: dataDir.dir });
  });
  afterAll(async () => {
    await server?.close();
    await dataDir?.remove();
  });
  const run = async (sql: string, params: unknown[] = []): Promise<{ ok: boolean; rows: any[]; error?: string }> => {
    try {
      const r = await server.sql.execute(sql, { tenant: DEFAULT_TENANT, params, timeoutMs: 60_000, maxRows: 100_000 });
      return { ok: true, rows: r.rows };
    } catch (error) {
      return { ok: false, rows: [], error: String((error as Error).message) };
    }
  };

  it('agrees with the model after every step', async () => {
    let seed = 777;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const model = new Map<number, number>();
    await run('CREATE TABLE m (id BIGINT PRIMARY KEY, v BIGINT)');
    const bulk = async (ids: number[], v: number): Promise<boolean> => {
      const values = ids.map((id) => `(${id}, ${v})`).join(', ');
      const r = await run(`INSERT INTO m VALUES ${values}`);
      const dup = ids.some((id) => model.has(id)) || new Set(ids).size !== ids.length;
      expect(r.ok, `insert ${ids.join(',')}: ${r.error} (model dup ${dup})`).toBe(!dup);
      if (r.ok) for (const id of ids) model.set(id, v);
      return r.ok;
    };
    for (let step = 0; step < 250; step++) {
      const op = rnd(100);
      const base = rnd(200);
      if (op < 35) {
        const len = 2 + rnd(8);
        await bulk(
          Array.from({ length: len }, (_, i) => base + i),
          step,
        );
      } else if (op < 45) {
        // descending / mixed keys
        await bulk([base + 5, base, base + 3], step);
      } else if (op < 55) {
        await run('DELETE FROM m WHERE id >= $1 AND id < $2', [base, base + 20]);
        for (const id of [...model.keys()]) if (id >= base && id < base + 20) model.delete(id);
      } else if (op < 65) {
        const target = base + 300;
        const r = await run('UPDATE m SET id = $2 WHERE id = $1', [base, target]);
        const expectOk = !model.has(target) || !model.has(base);
        expect(r.ok, `update ${base} -> ${target}: ${r.error}`).toBe(expectOk);
        if (r.ok && model.has(base)) {
          model.set(target, model.get(base)!);
          model.delete(base);
        }
      } else if (op < 68) {
        await run('TRUNCATE m');
        model.clear();
      } else if (op < 71) {
        await run('DROP TABLE m');
        await run('CREATE TABLE m (id BIGINT PRIMARY KEY, v BIGINT)');
        model.clear();
      } else if (op < 78) {
        // Two statements at once, overlapping keys: exactly what the model allows.
        const a = Array.from({ length: 4 }, (_, i) => base + 500 + i);
        const b = Array.from({ length: 4 }, (_, i) => base + 502 + i);
        const [ra, rb] = await Promise.all([
          run(`INSERT INTO m VALUES ${a.map((id) => `(${id}, 1)`).join(', ')}`),
          run(`INSERT INTO m VALUES ${b.map((id) => `(${id}, 2)`).join(', ')}`),
        ]);
        const aOk = ra.ok && !a.some((id) => model.has(id));
        if (ra.ok) for (const id of a) model.set(id, 1);
        const bOk = rb.ok;
        expect(!(ra.ok && rb.ok), `both overlapping inserts succeeded at ${base}`).toBe(true);
        if (rb.ok) for (const id of b) model.set(id, 2);
        void aOk;
        void bOk;
      } else if (op < 85) {
        const rows = (await run('SELECT max(id) AS m FROM m')).rows;
        const top = Number(rows[0]?.m ?? 0);
        await bulk([top + 1, top + 2, top + 3], step);
      } else if (op < 90) {
        // ON CONFLICT above the bound
        const ids = [base + 1000, base + 1001];
        const r = await run(`INSERT INTO m VALUES (${ids[0]}, 9), (${ids[1]}, 9) ON CONFLICT (id) DO NOTHING`);
        expect(r.ok).toBe(true);
        for (const id of ids) if (!model.has(id)) model.set(id, 9);
      } else if (op < 95) {
        await server.close();
        server = await startTestServer({ dataDir: dataDir.dir });
      } else {
        // keys equal to the current maximum
        const rows = (await run('SELECT max(id) AS m FROM m')).rows;
        if (rows[0]?.m !== null && rows[0]?.m !== undefined) await bulk([Number(rows[0].m), Number(rows[0].m) + 1], step);
      }
      const all = (await run('SELECT id, v FROM m ORDER BY id')).rows.map((r) => [Number(r.id), Number(r.v)]);
      expect(all, `step ${step}`).toEqual([...model.entries()].sort((x, y) => x[0] - y[0]));
    }
  }, 300_000);
});
