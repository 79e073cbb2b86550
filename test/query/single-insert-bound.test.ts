import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TENANT } from '../../core/catalog.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { tempDir } from '../helpers/stack.js';

// A single-row insert whose key sorts after the table's row-key bound skips its duplicate-key read
// (TableWriter.stored). Against a model: single-row inserts through SQL (prepared text, literals)
// and JSON rows, keys above, at and below the last one, after deletes, key updates, TRUNCATE,
// DROP + CREATE, restarts, in transactions and concurrently.
describe('single-row inserts and the row-key bound: random statements against a model', () => {
  let server: TestServer;
  let dataDir: { dir: string; remove: () => Promise<void> };
  const options = { tenant: DEFAULT_TENANT, timeoutMs: 60_000, maxRows: 100_000 };
  beforeAll(async () => {
    dataDir = await tempDir('svcdb-single-insert-bound-');
    server = await startTestServer({ dataDir: dataDir.dir });
  });
  afterAll(async () => {
    await server?.close();
    await dataDir?.remove();
  });
  const outcome = async (run: () => Promise<unknown>): Promise<{ ok: boolean; error?: string }> => {
    try {
      await run();
      return { ok: true };
    } catch (error) {
      return { ok: false, error: `${(error as { code?: string }).code}: ${(error as Error).message}` };
    }
  };
  const sql = (text: string, params: unknown[] = []) => outcome(() => server.sql.execute(text, { ...options, params }));
  const rows = async (text: string): Promise<Record<string, unknown>[]> => (await server.sql.execute(text, options)).rows as Record<string, unknown>[];

  it('finds every duplicate key and accepts every new one', async () => {
    let seed = 4242;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const model = new Map<number, number>();
    const top = (): number => Math.max(0, ...model.keys());
    await sql('CREATE TABLE m (id BIGINT PRIMARY KEY, v BIGINT)');
    /** One row by one of three paths; the outcome must be what the model says. */
    const insertOne = async (id: number, v: number, how: number): Promise<void> => {
      const r =
        how === 0
          ? await sql('INSERT INTO m (id, v) VALUES ($1, $2)', [id, v])
          : how === 1
            ? await sql(`INSERT INTO m VALUES (${id}, ${v})`)
            : await outcome(() => server.sql.insertJson({ schema: null, table: 'm', rows: [{ id, v }], returning: [], onConflict: null }, options));
      expect(r.ok, `insert ${id} by path ${how}: ${r.error}`).toBe(!model.has(id));
      if (!r.ok) expect(r.error).toMatch(/^CONSTRAINT_VIOLATION: duplicate key value violates unique constraint "m_pkey"/);
      else model.set(id, v);
    };
    for (let step = 0; step < 400; step++) {
      const op = rnd(100);
      const how = rnd(3);
      if (op < 30) await insertOne(top() + 1 + rnd(3), step, how);
      else if (op < 40)
        await insertOne(top(), step, how); // the last key itself: equal to the bound
      else if (op < 55)
        await insertOne(rnd(300), step, how); // below the bound, sometimes present
      else if (op < 62) {
        // The last rows deleted: the bound stays above them, a key between is new again.
        const from = Math.max(0, top() - rnd(4));
        await sql('DELETE FROM m WHERE id >= $1', [from]);
        for (const id of [...model.keys()]) if (id >= from) model.delete(id);
        await insertOne(from, step, how);
      } else if (op < 68) {
        const from = rnd(300);
        const to = top() + 5;
        const r = await sql('UPDATE m SET id = $2 WHERE id = $1', [from, to]);
        expect(r.ok).toBe(true);
        if (model.has(from)) {
          model.set(to, model.get(from)!);
          model.delete(from);
        }
        await insertOne(to, step, how);
      } else if (op < 71) {
        await sql('TRUNCATE m');
        model.clear();
        await insertOne(rnd(5), step, how);
      } else if (op < 74) {
        await sql('DROP TABLE m');
        await sql('CREATE TABLE m (id BIGINT PRIMARY KEY, v BIGINT)');
        model.clear();
      } else if (op < 82) {
        // Two statements of one request run as one transaction (no bound there): all or nothing.
        const a = top() + 1;
        const b = rnd(2) === 0 ? a : rnd(3) === 0 ? rnd(300) : a + 1;
        const r = await sql(`INSERT INTO m VALUES (${a}, ${step}); INSERT INTO m (id, v) VALUES (${b}, ${step})`);
        expect(r.ok, `transaction ${a}, ${b}: ${r.error}`).toBe(a !== b && !model.has(a) && !model.has(b));
        if (r.ok) {
          model.set(a, step);
          model.set(b, step);
        }
      } else if (op < 92) {
        // Concurrent inserts of the same new key: exactly one wins.
        const id = top() + 1 + rnd(2);
        const results = await Promise.all(
          [0, 1, 2].map((p) =>
            p === 2
              ? outcome(() => server.sql.insertJson({ schema: null, table: 'm', rows: [{ id, v: p }], returning: [], onConflict: null }, options))
              : sql('INSERT INTO m (id, v) VALUES ($1, $2)', [id, p]),
          ),
        );
        const won = results.map((r, p) => (r.ok ? p : -1)).filter((p) => p >= 0);
        expect(won.length, `concurrent inserts of ${id}`).toBe(model.has(id) ? 0 : 1);
        if (won.length === 1) model.set(id, won[0]!);
      } else if (op < 95) {
        await server.close();
        server = await startTestServer({ dataDir: dataDir.dir });
      } else await insertOne(top() + 1, step, how);
      const all = (await rows('SELECT id, v FROM m ORDER BY id')).map((r) => [Number(r.id), Number(r.v)]);
      expect(all, `step ${step}`).toEqual([...model.entries()].sort((x, y) => x[0] - y[0]));
    }
  }, 300_000);
});
