/**
 * Health and readiness as wired by the composition root, against the real engine: the log that
 * cannot write, the projection store that cannot write (a full disk, simulated by a file size
 * limit on the server process), and a stalled projection. The reports must follow each.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, serve, type Serving } from '../helpers/cli.js';
import { startTestServer, TEST_API_KEY, type TestServer } from '../helpers/sql-server.js';
import { tempDir } from '../helpers/stack.js';

const KEY = 'health-wiring-key';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Answer {
  readonly status: number;
  readonly body: Record<string, any>;
}

async function get(baseUrl: string, route: string): Promise<Answer> {
  const response = await fetch(`${baseUrl}/api/v1${route}`);
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

async function sql(baseUrl: string, key: string, text: string): Promise<Answer> {
  const response = await fetch(`${baseUrl}/api/v1/query`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ sql: text }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

/**
 * `svcdb serve` whose files may not grow past fileSizeKiB (RLIMIT_FSIZE; SIGXFSZ ignored, so a
 * write past it fails with EFBIG, as one on a full disk fails with ENOSPC).
 */
async function serveWithFileLimit(fileSizeKiB: number, env: Record<string, string>): Promise<Serving> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (\`npm test\` does)`);
  const dir = await tempDir('svcdb-health-');
  const dataDir = path.join(dir.dir, 'data');
  await mkdir(dataDir);
  const server = await serve(['--host', '127.0.0.1', '--port', '0', '--ops-port', '0', '--data', dataDir], {
    wrapper: ['bash', '-c', `trap '' XFSZ; ulimit -f ${fileSizeKiB}; exec "$@"`, 'svcdb'],
    env: { SVC_API_KEY: KEY, ...env },
  });
  cleanups.push(async () => {
    server.child.kill('SIGKILL');
    await server.exited;
    await dir.remove();
  });
  return server;
}

const pad = (n: number): string => 'x'.repeat(n);

describe('health and readiness of the real server', () => {
  it('report what is true when all is well: replication not configured, the cache healthy', async () => {
    const server: TestServer = await startTestServer();
    cleanups.push(() => server.close());
    expect(await get(server.baseUrl, '/health')).toMatchObject({
      status: 200,
      body: { status: 'healthy', components: { storage: 'healthy', query_engine: 'healthy', replication: 'not_configured', cache: 'healthy' } },
    });
    expect(await get(server.baseUrl, '/ready')).toEqual({
      status: 200,
      body: { ready: true, checks: { database: true, connections_available: true, replication_synced: true } },
    });
    expect((await sql(server.baseUrl, TEST_API_KEY, 'SELECT 1 AS one')).status).toBe(200);
  });

  it('follow the log when it cannot write: storage unhealthy (503), not ready, and the projections (the cache) stop with it', async () => {
    const server = await serveWithFileLimit(512, {});
    const url = server.listening.httpUrl;
    expect((await sql(url, KEY, 'CREATE TABLE t (id INT PRIMARY KEY, v TEXT)')).status).toBe(200);
    // ~300 KB of rows: both the log segment and LevelDB's write-ahead file stay under 512 KiB.
    for (let i = 0; i < 15; i++) {
      const rows = Array.from({ length: 10 }, (_, j) => `(${i * 10 + j}, '${pad(2000)}')`).join(', ');
      expect((await sql(url, KEY, `INSERT INTO t VALUES ${rows}`)).status).toBe(200);
    }
    // The DELETE's log record carries every before-image (~300 KB): the segment would pass the
    // limit. Its LevelDB batch (keys only) would not: the log fails, and the projections that
    // follow it stop (the store is intact, but nothing keeps it, or the caches over it, current).
    const refused = await sql(url, KEY, 'DELETE FROM t WHERE true');
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('STORAGE_UNAVAILABLE');
    expect(await get(url, '/health')).toMatchObject({
      status: 503,
      body: { status: 'unhealthy', components: { storage: 'unhealthy', query_engine: 'unhealthy', replication: 'not_configured', cache: 'unhealthy' } },
    });
    expect(await get(url, '/ready')).toMatchObject({ status: 503, body: { ready: false, checks: { database: false } } });
  });

  it('follow the projection store when it cannot write: storage and cache unhealthy, not ready', async () => {
    // Small log segments stay under the limit; LevelDB's write-ahead file grows past it.
    const server = await serveWithFileLimit(256, { SVC_LOG_SEGMENT_SIZE_BYTES_MAX: String(64 * 1024) });
    const url = server.listening.httpUrl;
    expect((await sql(url, KEY, 'CREATE TABLE t (id INT PRIMARY KEY, v TEXT)')).status).toBe(200);
    let refused: Answer | null = null;
    for (let i = 0; i < 400 && refused === null; i++) {
      const answer = await sql(url, KEY, `INSERT INTO t VALUES (${i}, '${pad(2000)}')`);
      if (answer.status !== 200) refused = answer;
    }
    expect(refused).toMatchObject({ status: 503, body: { error: { code: 'STORAGE_UNAVAILABLE' } } });
    expect(await get(url, '/health')).toMatchObject({
      status: 503,
      body: { status: 'unhealthy', components: { storage: 'unhealthy', query_engine: 'unhealthy', cache: 'unhealthy' } },
    });
    expect(await get(url, '/ready')).toMatchObject({ status: 503, body: { ready: false, checks: { database: false } } });
  });

  it('follow a stalled projection: not ready and query_engine unhealthy while it stands still, ready again once it moves', async () => {
    const server: TestServer = await startTestServer({ env: { SVC_PROJECTION_STALL_MS: '50' } });
    cleanups.push(() => server.close());
    const dims = 64;
    expect((await sql(server.baseUrl, TEST_API_KEY, `CREATE TABLE v (id INT PRIMARY KEY, e VECTOR(${dims}))`)).status).toBe(200);
    let seed = 7;
    const random = (): number => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
    for (let batch = 0; batch < 10; batch++) {
      const rows = Array.from(
        { length: 1000 },
        (_, j) =>
          `(${batch * 1000 + j}, '[${Array.from({ length: dims }, random)
            .map((x) => x.toFixed(4))
            .join(',')}]')`,
      ).join(', ');
      expect((await sql(server.baseUrl, TEST_API_KEY, `INSERT INTO v VALUES ${rows}`)).status).toBe(200);
    }
    // The vector projection builds the graph of 10,000 rows while applying this one record:
    // the projections stand still behind the log until it is done.
    let indexed = false;
    const building = sql(server.baseUrl, TEST_API_KEY, 'CREATE INDEX v_hnsw ON v USING hnsw (e vector_l2_ops)').then((answer) => {
      indexed = true;
      return answer;
    });
    let stalled: [Answer, Answer] | null = null;
    while (!indexed && stalled === null) {
      const [ready, health] = await Promise.all([get(server.baseUrl, '/ready'), get(server.baseUrl, '/health')]);
      if (!ready.body.ready) stalled = [ready, health];
    }
    expect((await building).status).toBe(200);
    expect(stalled, 'the stall was seen before the index was built').not.toBeNull();
    expect(stalled![0]).toMatchObject({ status: 503, body: { ready: false, checks: { database: false } } });
    expect(stalled![1]).toMatchObject({
      status: 200,
      body: { status: 'healthy', components: { storage: 'healthy', query_engine: 'unhealthy', cache: 'healthy' } },
    });
    expect(await get(server.baseUrl, '/ready')).toMatchObject({ status: 200, body: { ready: true } });
    expect((await get(server.baseUrl, '/health')).body.components.query_engine).toBe('healthy');
  });
});
