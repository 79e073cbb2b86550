/**
 * The data directory through the real CLI: foreign, corrupt and locked directories give one clear
 * line (never a stack trace), and replay, inspect and repair work on real data.
 */
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lines, runCli, serve } from '../helpers/cli.js';
import { dumpStore, itemsTable, openStack, rowChange, tempDir, txn } from '../helpers/stack.js';
import { openStateStore } from '../../projections/index.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function dataDir(): Promise<string> {
  const { dir, remove } = await tempDir('svcdb-cli-data-');
  cleanups.push(remove);
  return path.join(dir, 'data');
}

/** Writes a table and `count` rows through the real sequencer, then closes. */
async function writeRows(dir: string, count: number): Promise<void> {
  const stack = await openStack(dir, { segmentSizeBytesMax: 64 * 1024 });
  const table = itemsTable(1, { scoreIndexId: 2 });
  await stack.projections.sequencer.submit(async () => ({ record: txn([{ kind: 'put_table', table }]), result: null }));
  for (let i = 0; i < count; i += 10) {
    const changes = Array.from({ length: 10 }, (_, j) => rowChange(table, 'insert', null, { id: BigInt(i + j), name: 'x'.repeat(100), score: j }));
    await stack.projections.sequencer.submit(async () => ({ record: txn(changes), result: null }));
  }
  await stack.close();
}

const serveArgs = (dir: string): string[] => ['serve', '--data', dir, '--port', '0', '--ops-port', '0', '--host', '127.0.0.1'];

/** One line on stderr, exit 1, no stack trace. */
function expectOneLineError(result: { code: number | null; stderr: string }, pattern: RegExp): void {
  expect(result.code).toBe(1);
  const errorLines = lines(result.stderr).filter((l) => !l.startsWith('{'));
  expect(errorLines, result.stderr).toHaveLength(1);
  expect(errorLines[0]).toMatch(/^svcdb: /);
  expect(errorLines[0]).toMatch(pattern);
  expect(result.stderr).not.toMatch(/\n\s+at /);
}

describe('data directory', () => {
  it('refuses a foreign directory', async () => {
    const dir = await dataDir();
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'thesis.tex'), 'not a database');
    expectOneLineError(await runCli(serveArgs(dir)), /is not an svcdb data directory/);
    expect(await readdir(dir)).toEqual(['thesis.tex']);
  });

  it('refuses a file given as the directory, and a corrupt marker', async () => {
    const dir = await dataDir();
    await mkdir(path.dirname(dir), { recursive: true });
    await writeFile(dir, 'a file');
    expectOneLineError(await runCli(serveArgs(dir)), /is a file, not a directory/);

    const other = await dataDir();
    await writeRows(other, 10);
    await writeFile(path.join(other, 'svcdb.json'), '{"format": ');
    expectOneLineError(await runCli(serveArgs(other)), /svcdb\.json is unreadable or corrupt/);
  });

  it('refuses a directory a running server holds, and inspect still lists the log', async () => {
    const dir = await dataDir();
    await writeRows(dir, 20);
    const running = await serve(serveArgs(dir).slice(1));
    cleanups.push(async () => {
      running.child.kill('SIGTERM');
      await running.exited;
    });
    expectOneLineError(await runCli(serveArgs(dir)), /in use by another svcdb process/);
    expectOneLineError(await runCli(['replay', '--data', dir]), /in use by another svcdb process/);
    const inspected = await runCli(['inspect', '--data', dir]);
    expect(inspected.code).toBe(0);
    expect(inspected.stdout).toContain('LSN 1..3');
    expect(inspected.stdout).toContain('unknown (a running server holds the projection store');
  });

  it('names the segment and offset of a corrupt record, and repair makes it usable again', async () => {
    const dir = await dataDir();
    await writeRows(dir, 200);
    const logDir = path.join(dir, 'log');
    const first = (await readdir(logDir)).filter((f) => f.endsWith('.log')).sort()[0]!;
    const file = path.join(logDir, first);
    const bytes = await readFile(file);
    const offset = Math.floor(bytes.length / 2);
    bytes[offset] = bytes[offset]! ^ 0xff;
    await writeFile(file, bytes);
    await import('node:fs/promises').then((fs) => fs.rm(path.join(dir, 'state'), { recursive: true }));

    const failed = await runCli(serveArgs(dir));
    expectOneLineError(failed, new RegExp(`${first}.*offset|offset.*${first}`));
    expect(failed.stderr).toContain('svcdb repair');

    const repaired = await runCli(['repair', '--data', dir]);
    expect(repaired.code, repaired.stderr).toBe(0);
    expect(repaired.stdout).toMatch(/truncated \d+ bytes/);
    const running = await serve(serveArgs(dir).slice(1));
    const health = await fetch(`${running.listening.httpUrl}/api/v1/ready`);
    expect(health.status).toBe(200);
    running.child.kill('SIGTERM');
    expect((await running.exited).code).toBe(0);
  });

  it('replay rebuilds the projections from the log, identical key for key', async () => {
    const dir = await dataDir();
    await writeRows(dir, 500);
    const storeDir = path.join(dir, 'state');
    const before = await dumpAt(storeDir);

    const replayed = await runCli(['replay', '--data', dir]);
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(replayed.stdout).toMatch(/^replayed 51 records in [\d.]+ s \(\d+ records\/s\)\n$/);
    expect(await dumpAt(storeDir)).toEqual(before);
    expect(await stat(path.join(dir, 'state.rebuild')).catch(() => null)).toBeNull();

    const inspected = await runCli(['inspect', '--data', dir, '--json']);
    const report = JSON.parse(inspected.stdout) as { consumers: { name: string; offsetLsn: number }[]; tables: number; lastLsn: number };
    // replay writes the vector checkpoint too (no vector index: a manifest alone), at the same LSN.
    expect(report.consumers).toEqual([
      { name: 'tables', offsetLsn: 51 },
      { name: 'vectors', offsetLsn: 51 },
    ]);
    expect(report.lastLsn).toBe(51);
    expect(report.tables).toBe(1);
  });
});

async function dumpAt(storeDir: string): Promise<Map<string, string>> {
  const store = await openStateStore(storeDir);
  try {
    return await dumpStore(store);
  } finally {
    await store.close();
  }
}
