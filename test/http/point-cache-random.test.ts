import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCall } from '../helpers/api-calls.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { tempDir } from '../helpers/stack.js';

// random writes of every kind, then GET by key and the point SELECT (each twice:
// the second read is the cached one) against a SELECT the point paths never answer.
describe('point-read cache: random writes against a reference read', () => {
  let server: TestServer;
  let dataDir: { dir: string; remove: () => Promise<void> };
  beforeAll(async () => {
    dataDir = await tempDir('svcdb-point-cache-rand-');
    server = await startTestServer({ dataDir: dataDir.dir });
  });
  afterAll(async () => {
    await server?.close();
    await dataDir?.remove();
  });

  const call = (method: string, path: string, body?: unknown) => apiCall(server, method, path, body);
  const sql = async (text: string, params: unknown[] = []): Promise<{ status: number; data: any[] }> => {
    const r = await call('POST', '/query', { sql: text, params });
    return { status: r.status, data: r.body.data };
  };

  it('never differs', async () => {
    let seed = 12345;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    await sql('CREATE TABLE p (id BIGINT PRIMARY KEY, v TEXT, n INTEGER)');
    let extra = 0;
    const log: string[] = [];
    for (let step = 0; step < 500; step++) {
      const id = rnd(12);
      const op = rnd(100);
      let text: string;
      if (op < 25) text = `INSERT INTO p (id, v, n) VALUES (${id}, 'i${step}', ${step}) ON CONFLICT (id) DO NOTHING`;
      else if (op < 40) text = `UPDATE p SET v = 'u${step}', n = n + 1 WHERE id = ${id}`;
      else if (op < 50) text = `UPDATE p SET id = ${(id + 5) % 12} WHERE id = ${id}`;
      else if (op < 60) text = `DELETE FROM p WHERE id = ${id}`;
      else if (op < 70) text = `INSERT INTO p (id, v, n) VALUES (${id}, 'x${step}', 0) ON CONFLICT (id) DO UPDATE SET v = 'c${step}'`;
      else if (op < 73) text = 'TRUNCATE p';
      else if (op < 76) text = `ALTER TABLE p ADD COLUMN e${++extra} TEXT DEFAULT 'd${step}'`;
      else if (op < 79 && extra > 0) text = `ALTER TABLE p DROP COLUMN e${extra--}`;
      else if (op < 81) {
        await sql('DROP TABLE p');
        extra = 0;
        text = 'CREATE TABLE p (id BIGINT PRIMARY KEY, v TEXT, n INTEGER)';
      } else if (op < 85) {
        const txn = (await call('POST', '/transactions', {})).body.transaction_id as string;
        await call('POST', `/transactions/${txn}/query`, { sql: `UPDATE p SET v = 't${step}' WHERE id = ${id}` });
        await call('POST', `/transactions/${txn}/query`, {
          sql: `INSERT INTO p (id, v, n) VALUES (${(id + 3) % 12}, 'T${step}', 1) ON CONFLICT (id) DO NOTHING`,
        });
        await call('POST', `/transactions/${txn}/${rnd(2) === 0 ? 'commit' : 'rollback'}`, {});
        text = 'SELECT 1';
      } else if (op < 93) text = `INSERT INTO p (id, v, n) VALUES (${id}, 'm${step}', 1), (${id + 1}, 'm${step}', 2), (${id + 2}, 'm${step}', 3)`;
      else text = `INSERT INTO p (id, v, n) SELECT g, 'g${step}', g FROM generate_series(${id}, ${id + 3}) g ON CONFLICT (id) DO UPDATE SET n = p.n + 100`;
      const done = await sql(text);
      log.push(`${text} -> ${done.status}`);
      for (let r = 0; r < 4; r++) {
        const k = rnd(12);
        const ref = (await sql('SELECT * FROM p WHERE id + 0 = $1', [k])).data[0] ?? null;
        for (let twice = 0; twice < 2; twice++) {
          const got = await call('GET', `/tables/p/rows/${k}`);
          const viaGet = got.status === 404 ? null : got.body.data;
          const viaSelect = (await sql('SELECT * FROM p WHERE id = $1', [k])).data[0] ?? null;
          const sub = (await sql('SELECT v, id FROM p WHERE id = $1', [k])).data[0] ?? null;
          const ctx = `step ${step} key ${k}\n${log.slice(-6).join('\n')}`;
          expect(viaGet, ctx).toEqual(ref);
          expect(viaSelect, ctx).toEqual(ref);
          expect(sub, ctx).toEqual(ref === null ? null : { v: ref.v, id: ref.id });
        }
      }
    }
  }, 300_000);
});
