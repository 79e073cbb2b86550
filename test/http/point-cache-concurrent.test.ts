import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCall } from '../helpers/api-calls.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { tempDir } from '../helpers/stack.js';

// read-your-writes through the point-read cache while other clients write the
// same table (its writes in flight most of the time) and read each other's keys.
describe('point-read cache: concurrent writers, each reads its own writes', () => {
  let server: TestServer;
  let dataDir: { dir: string; remove: () => Promise<void> };
  beforeAll(async () => {
    dataDir = await tempDir('svcdb-point-cache-conc-');
    server = await startTestServer({ dataDir: dataDir.dir });
  });
  afterAll(async () => {
    await server?.close();
    await dataDir?.remove();
  });
  const call = (method: string, path: string, body?: unknown) => apiCall(server, method, path, body);
  const sql = async (text: string, params: unknown[] = []) => (await call('POST', '/query', { sql: text, params })).body.data as any[];

  it('never reads an older value after its own write was acknowledged', async () => {
    await sql('CREATE TABLE c (id BIGINT PRIMARY KEY, v BIGINT)');
    await sql('INSERT INTO c SELECT g, 0 FROM generate_series(0, 15) g');
    const client = async (me: number) => {
      for (let i = 1; i <= 60; i++) {
        const kind = i % 3;
        if (kind === 0) await sql('UPDATE c SET v = $2 WHERE id = $1', [me, i]);
        else if (kind === 1) expect((await call('PATCH', `/tables/c/rows/${me}`, { updates: { v: i } })).status).toBe(200);
        else {
          await sql('DELETE FROM c WHERE id = $1', [me]);
          await sql('INSERT INTO c VALUES ($1, $2)', [me, i]);
        }
        for (let twice = 0; twice < 2; twice++) {
          expect((await call('GET', `/tables/c/rows/${me}`)).body.data, `client ${me} write ${i}`).toEqual({ id: me, v: i });
          expect(await sql('SELECT * FROM c WHERE id = $1', [me]), `client ${me} write ${i}`).toEqual([{ id: me, v: i }]);
          // Someone else's key: warms the cache for it while its owner writes.
          await call('GET', `/tables/c/rows/${(me + 1) % 16}`);
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, (_, me) => client(me)));
  }, 300_000);
});
