import vm from 'node:vm';
import v8 from 'node:v8';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TENANT } from '../../core/catalog.js';
import { PROJECTION_LIMITS } from '../../projections/limits.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { tempDir } from '../helpers/stack.js';

// The point-read cache keeps with each row what its readers made of it (the frozen row and its JSON
// text): that must count against pointCacheBytesMax. A row whose image is small and whose JSON is
// large (a wide table, long column names, columns added later by ALTER TABLE, which its stored image
// does not hold) kept 159 MB here for ~2 MB counted before it did (found by the sixth session's review).
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

describe('point-read cache memory', () => {
  let server: TestServer;
  let dataDir: { dir: string; remove: () => Promise<void> };
  const ROWS = 3000;
  const COLUMNS = 400;
  beforeAll(async () => {
    dataDir = await tempDir('svcdb-review2-mem-');
    server = await startTestServer({ dataDir: dataDir.dir });
  });
  afterAll(async () => {
    await server?.close();
    await dataDir?.remove();
  });

  it('holds no more than pointCacheBytesMax through what readers keep with rows', async () => {
    const run = (sql: string, params: unknown[] = []) => server.sql.execute(sql, { tenant: DEFAULT_TENANT, params, timeoutMs: 60_000, maxRows: 10 });
    await run('CREATE TABLE w (id BIGINT PRIMARY KEY)');
    await run(`INSERT INTO w SELECT g FROM generate_series(1, ${ROWS}) g`);
    const name = (i: number) => `c${String(i).padStart(3, '0')}_${'x'.repeat(55)}`;
    // Columns added after the rows: nothing of them is in the stored images (missingValue).
    for (let i = 0; i < COLUMNS; i += 50) {
      const adds = Array.from({ length: 50 }, (_, j) => `ADD COLUMN ${name(i + j)} BOOLEAN`).join(', ');
      await run(`ALTER TABLE w ${adds}`);
    }
    const sql = 'SELECT * FROM w WHERE id = $1';
    await run(sql, [1]); // cached plan: the point path answers from now on
    const options = { tenant: DEFAULT_TENANT, params: [1], timeoutMs: 10_000, maxRows: 10 };
    let textBytes = 0;
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let id = 1; id <= ROWS; id++) {
      const result = server.sql.pointSelect(sql, { ...options, params: [id] }, (row) => JSON.stringify(row));
      expect(result?.rows.length).toBe(1);
      textBytes += result!.rowsText!.length;
    }
    gc();
    const grownBytes = process.memoryUsage().heapUsed - before;
    // The texts alone are more than the bound: the cache must have started over rather than keep them all.
    expect(textBytes).toBeGreaterThan(PROJECTION_LIMITS.pointCacheBytesMax);
    expect(grownBytes).toBeLessThan(PROJECTION_LIMITS.pointCacheBytesMax);
  });
});
