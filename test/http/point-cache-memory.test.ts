import vm from 'node:vm';
import v8 from 'node:v8';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TENANT } from '../../core/catalog.js';
import { PROJECTION_LIMITS } from '../../projections/limits.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { openStack, tempDir, type Stack } from '../helpers/stack.js';
import { silentLogger } from '../../core/logger.js';
import { SqlEngine, typeSystem } from '../../query/index.js';

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

/** What one remembered key name holds (key-names.ts: measured 86 bytes for a 6-digit int8 id). */
const KEY_NAME_BYTES = 86;

describe('point-read cache memory: small rows', () => {
  let dir: { dir: string; remove: () => Promise<void> };
  let stack: Stack;
  let engine: SqlEngine;
  beforeAll(async () => {
    dir = await tempDir('svcdb-point-cache-small-');
    stack = await openStack(dir.dir);
    engine = new SqlEngine({ projections: stack.projections, types: typeSystem, logger: silentLogger });
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
    await dir?.remove();
  });

  it('counts at least what small rows with a point SELECT answer each hold (the image kept as text)', async () => {
    // The bench's rows: (bigint, text, double), a 46-byte image, a 77-character answer: counted ~480
    // bytes a row, ~400-450 of heap measured besides the remembered key name. An image kept as the Buffer LevelDB hands out held ~135
    // bytes more of heap a row, and its native backing store besides, over what is counted: the
    // bound would no longer be the memory.
    const ROWS = 20_000;
    const options = { tenant: DEFAULT_TENANT, timeoutMs: 60_000, maxRows: 10 };
    await engine.execute('CREATE TABLE small (id BIGINT PRIMARY KEY, name TEXT NOT NULL, amount DOUBLE PRECISION NOT NULL)', options);
    await engine.execute(`INSERT INTO small SELECT g, 'name-' || g, g * 1.5 FROM generate_series(1, ${ROWS}) g`, options);
    const sql = 'SELECT * FROM small WHERE id = $1';
    await engine.execute(sql, { ...options, params: [1] }); // cached plan: the point path answers from now on
    const cache = (stack.projections as unknown as { store: { rowCacheSize(): { bytes: number } } }).store;
    const frame = Object.freeze({ before: '{"success":true,"data":', after: '}' });
    gc();
    gc();
    const before = process.memoryUsage();
    const countedBefore = cache.rowCacheSize().bytes;
    for (let id = 1; id <= ROWS; id++) {
      const result = engine.pointSelect(sql, { ...options, params: [id] }, (row) => JSON.stringify(row), frame);
      expect(result?.rowsText?.length).toBeGreaterThan(60);
    }
    gc();
    gc();
    const after = process.memoryUsage();
    const grown = after.heapUsed - before.heapUsed + (after.external - before.external);
    const counted = cache.rowCacheSize().bytes - countedBefore;
    expect(counted).toBeGreaterThan(ROWS * 400);
    // The plan also remembers each parameter's key name (key-names.ts: its own bound, ~86 bytes an entry).
    expect(grown).toBeLessThan((counted + ROWS * KEY_NAME_BYTES) * 1.1);
  });
});
