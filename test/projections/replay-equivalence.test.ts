/**
 * `svcdb replay` rebuilds exactly what live apply built: every LevelDB key and value (rows, index
 * entries, statistics, catalog, sequences, offsets) and the same vector search answers, over a
 * log with DDL in the middle, drops, truncates, rolled-back and multi-table transactions; with
 * replay worker threads, on the main thread alone, and through the CLI. A replay killed with
 * SIGKILL leaves the projections as they were, and the next replay gives the same result.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeLogRecord, type RowChange } from '../../core/log-records.js';
import { silentLogger } from '../../core/logger.js';
import { openStateStore, prepareDataDir, rebuildProjections } from '../../projections/index.js';
import { CLI, cleanEnv, runCli } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { dumpStore, itemImage, itemKey, itemsTable, openLogAt, txn } from '../helpers/stack.js';

const dirs: string[] = [];
let server: TestServer | null = null;

afterAll(async () => {
  await server?.close();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function newDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

async function call(method: string, route: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server!.baseUrl}/api/v1${route}`, {
    method,
    headers: { authorization: `Bearer ${server!.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

async function sql(text: string, transactionId?: string): Promise<any> {
  const reply = await call('POST', transactionId === undefined ? '/query' : `/transactions/${transactionId}/query`, { sql: text });
  expect(reply.status, `${text}: ${JSON.stringify(reply.body)}`).toBe(200);
  return reply.body;
}

async function inTransaction(statements: readonly string[], end: 'commit' | 'rollback'): Promise<void> {
  const opened = await call('POST', '/transactions', {});
  expect(opened.status).toBe(201);
  for (const statement of statements) await sql(statement, opened.body.transaction_id);
  expect((await call('POST', `/transactions/${opened.body.transaction_id}/${end}`)).status).toBe(200);
}

const vectorLiteral = (i: number): string => `'[${[i % 7, (i * 3) % 11, (i * 5) % 13, i % 17].map((x) => x / 10).join(',')}]'`;
const values = (from: number, count: number, row: (i: number) => string): string => Array.from({ length: count }, (_, k) => row(from + k)).join(', ');

/** A log with every kind of record replay must get right, written through the server. */
async function writeWorkload(): Promise<void> {
  await sql('CREATE TABLE a (id INT PRIMARY KEY, name TEXT, n INT)');
  for (let i = 0; i < 300; i++) await sql(`INSERT INTO a VALUES (${i}, 'a-${i}', ${i % 10})`);
  await sql(`INSERT INTO a VALUES ${values(300, 400, (i) => `(${i}, 'bulk-${i}', ${i % 13})`)}`);
  await sql('CREATE INDEX a_n ON a (n)');
  await sql('UPDATE a SET n = n + 100 WHERE id < 50');
  await sql('DELETE FROM a WHERE id >= 600 AND id < 650');
  await sql('CREATE TABLE b (id INT PRIMARY KEY, a_id INT, note TEXT)');
  await sql('CREATE INDEX b_note ON b (note)');
  for (let i = 0; i < 100; i++)
    await inTransaction([`INSERT INTO a VALUES (${1000 + i}, 'txn', 7)`, `INSERT INTO b VALUES (${i}, ${1000 + i}, 'n${i % 5}')`], 'commit');
  await inTransaction(["INSERT INTO a VALUES (5000, 'rolled back', 1)", "INSERT INTO b VALUES (5000, 5000, 'gone')"], 'rollback');
  await sql('ALTER TABLE a ADD COLUMN extra TEXT');
  for (let i = 0; i < 100; i++) await sql(`UPDATE a SET extra = 'x${i}', n = ${i} WHERE id = ${i}`);
  await sql('CREATE TABLE c (id INT PRIMARY KEY, v TEXT)');
  await sql(`INSERT INTO c VALUES ${values(0, 50, (i) => `(${i}, 'c${i}')`)}`);
  await sql('DROP TABLE c');
  await sql('TRUNCATE b');
  await sql(`INSERT INTO b VALUES ${values(0, 30, (i) => `(${i}, ${i}, 'again${i % 3}')`)}`);
  await sql('CREATE TABLE v (id INT PRIMARY KEY, e VECTOR(4))');
  await sql(`INSERT INTO v VALUES ${values(0, 200, (i) => `(${i}, ${vectorLiteral(i)})`)}`);
  await sql('CREATE INDEX v_hnsw ON v USING hnsw (e vector_l2_ops)');
  for (let i = 200; i < 300; i++) await sql(`INSERT INTO v VALUES (${i}, ${vectorLiteral(i)})`);
  await sql(`UPDATE v SET e = ${vectorLiteral(999)} WHERE id < 20`);
  await sql('DELETE FROM v WHERE id >= 280');
  await sql('CREATE TABLE a2 (id INT PRIMARY KEY, n INT)');
  await inTransaction(['INSERT INTO a2 VALUES (1, 1)', 'UPDATE a SET n = 0 WHERE id = 1', 'DELETE FROM b WHERE id = 1'], 'commit');
}

/** What a reader sees: rows of every table and vector search answers. */
async function answers(): Promise<unknown> {
  const out: Record<string, unknown> = {};
  for (const table of ['a', 'b', 'v', 'a2']) out[table] = (await sql(`SELECT * FROM ${table} ORDER BY id`)).data;
  out.byIndex = (await sql('SELECT id FROM a WHERE n = 7 ORDER BY id')).data;
  for (const q of [1, 50, 123]) out[`knn${q}`] = (await sql(`SELECT id FROM v ORDER BY e <-> ${vectorLiteral(q)} LIMIT 5`)).data;
  return out;
}

async function dumpState(dataDir: string): Promise<Map<string, string>> {
  const layout = await prepareDataDir(dataDir, { create: false });
  const store = await openStateStore(layout.stateDir);
  try {
    return await dumpStore(store);
  } finally {
    await store.close();
  }
}

/**
 * rebuildProjections in this process, as `svcdb replay` runs it, with small batches (many chunks);
 * bulkChunkBytesMin 0 bulk-loads every chunk (replay-bulk.ts), which only large ones are by default;
 * bulkIngestBytesMin 0 starts a background ingest behind every one (chunk summaries wait for it).
 */
async function replayInProcess(
  dataDir: string,
  workerThreads: number,
  bulkChunkBytesMin?: number,
  bulkIngestBytesMin?: number,
  mainThreadShare?: boolean,
): Promise<void> {
  const layout = await prepareDataDir(dataDir, { create: false });
  const liveStore = await openStateStore(layout.stateDir);
  const log = await openLogAt(layout.logDir);
  try {
    await rebuildProjections({
      log,
      layout,
      liveStore,
      batchBytesMax: 4096,
      logger: silentLogger,
      onProgress: () => {},
      workerThreads,
      ...(bulkChunkBytesMin === undefined ? {} : { bulkChunkBytesMin }),
      ...(bulkIngestBytesMin === undefined ? {} : { bulkIngestBytesMin }),
      ...(mainThreadShare === undefined ? {} : { mainThreadShare }),
    });
  } finally {
    await log.close();
  }
}

describe('replay equals live apply', () => {
  it('key for key and answer for answer, with workers, on the main thread and through the CLI', async () => {
    const dataDir = await newDir('svcdb-replay-eq-');
    server = await startTestServer({ dataDir });
    await writeWorkload();
    const live = await answers();
    await server.close();
    server = null;
    const liveState = await dumpState(dataDir);
    expect(liveState.size).toBeGreaterThan(1000);

    for (const workerThreads of [1, 2, 0]) {
      await replayInProcess(dataDir, workerThreads);
      expect(await dumpState(dataDir), `${workerThreads} worker threads`).toEqual(liveState);
    }
    // The main thread preparing chunks beside one worker (replay-pool.ts SharedPreparer, the default on two cores).
    await replayInProcess(dataDir, 1, undefined, undefined, true);
    expect(await dumpState(dataDir), 'one worker and the main thread').toEqual(liveState);
    // Every chunk bulk-loaded: barriers (DDL, drops, backfills) and vector chunks between them.
    for (const workerThreads of [1, 0]) {
      await replayInProcess(dataDir, workerThreads, 0);
      expect(await dumpState(dataDir), `${workerThreads} worker threads, every chunk bulk-loaded`).toEqual(liveState);
    }
    await replayInProcess(dataDir, 1, 0, 0);
    expect(await dumpState(dataDir), 'every chunk bulk-loaded and ingested in the background').toEqual(liveState);
    const replayed = await runCli(['replay', '--data', dataDir]);
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(await dumpState(dataDir)).toEqual(liveState);

    server = await startTestServer({ dataDir });
    expect(await answers()).toEqual(live);
  });
});

describe('replay killed with SIGKILL', () => {
  it('leaves the projections as they were; the next replay gives the same result', async () => {
    const dataDir = await newDir('svcdb-replay-kill-');
    const layout = await prepareDataDir(dataDir, { create: true });
    const log = await openLogAt(layout.logDir, { segmentSizeBytesMax: 8 * 1024 * 1024 });
    const table = itemsTable(1, { scoreIndexId: 2 });
    await log.append(encodeLogRecord(txn([{ kind: 'put_table', table }]))).durable;
    // Enough records for replay worker threads and a few seconds of work to interrupt.
    const appends: Promise<void>[] = [];
    for (let r = 0; r < 60_000; r++) {
      const changes: RowChange[] = [0, 1].map((i) => {
        const id = BigInt(r * 2 + i);
        return {
          kind: 'row',
          tableId: 1,
          op: 'insert',
          key: itemKey(id),
          before: null,
          after: itemImage(table, { id, name: `n${id}`, score: Number(id % 97n) }),
        };
      });
      appends.push(log.append(encodeLogRecord(txn(changes))).durable);
      if (appends.length >= 256) await Promise.all(appends.splice(0));
    }
    await Promise.all(appends);
    await log.close();

    const first = await runCli(['replay', '--data', dataDir], {}, 120_000);
    expect(first.code, first.stderr).toBe(0);
    const reference = await dumpState(dataDir);

    // Kill the next replay while it writes its scratch store.
    const child = spawn(process.execPath, [CLI, 'replay', '--data', dataDir], { env: cleanEnv(), stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    while (!existsSync(layout.rebuildDir) && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 300));
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    expect(await dumpState(dataDir)).toEqual(reference);

    const again = await runCli(['replay', '--data', dataDir], {}, 120_000);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('replayed 60001 records');
    expect(await dumpState(dataDir)).toEqual(reference);
  }, 180_000);
});
