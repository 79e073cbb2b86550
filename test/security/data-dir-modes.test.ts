/**
 * Threat: another local user reads (or writes) the database files. The data directory is 0700 and
 * every file in it 0600 after start, after a vector checkpoint and after `svcdb replay`, whatever
 * the umask of the shell that started svcdb; a directory or file open to group or others is
 * refused at start with the chmod that fixes it (PostgreSQL's rule); dataDirMode 0750 allows
 * group read; `svcdb inspect` reports the modes.
 */
import { chmod, mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lines, runCli, serve, type Serving } from '../helpers/cli.js';
import { tempDir } from '../helpers/stack.js';
import { modesUnder, wrongModes } from './helpers.js';

const ADMIN = 'modes-admin-key';
const serveArgs = (dir: string, extra: string[] = []): string[] => [
  '--data',
  dir,
  '--port',
  '0',
  '--ops-port',
  '0',
  '--host',
  '127.0.0.1',
  '--api-key',
  ADMIN,
  ...extra,
];

async function sql(running: Serving, text: string): Promise<void> {
  const response = await fetch(`${running.listening.httpUrl}/api/v1/query`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ sql: text }),
  });
  expect(response.status, await response.clone().text()).toBe(200);
}

async function stop(running: Serving): Promise<void> {
  running.child.kill('SIGTERM');
  expect((await running.exited).code).toBe(0);
}

function expectRefused(result: { code: number | null; stderr: string }, pattern: RegExp): void {
  expect(result.code).toBe(1);
  const errorLines = lines(result.stderr).filter((l) => !l.startsWith('{'));
  expect(errorLines, result.stderr).toHaveLength(1);
  expect(errorLines[0]).toMatch(pattern);
}

// Each test starts the CLI several times (up to seven): 5-8 s a start on a loaded 2-core machine,
// past vitest's 60 s default; the time limit is the machine's, not what the tests check.
const CLI_STARTS_TIMEOUT_MS = 180_000;

describe('a private data directory', { timeout: CLI_STARTS_TIMEOUT_MS }, () => {
  let root = '';
  let remove: () => Promise<void> = async () => {};
  let previousUmask = 0;
  beforeAll(async () => {
    ({ dir: root, remove } = await tempDir('svcdb-sec-modes-'));
    // The shell's usual umask: what svcdb creates must be private regardless.
    previousUmask = process.umask(0o022);
  });
  afterAll(async () => {
    process.umask(previousUmask);
    await remove();
  });

  it('is 0700 with 0600 files after start, after a vector checkpoint and after replay', async () => {
    const dir = path.join(root, 'data');
    const running = await serve(serveArgs(dir));
    await sql(running, 'CREATE TABLE docs (id INT PRIMARY KEY, body TEXT, embedding VECTOR(3))');
    await sql(running, 'CREATE INDEX docs_hnsw ON docs USING hnsw (embedding vector_l2_ops)');
    await sql(running, "INSERT INTO docs SELECT g, 'secret ' || g, ARRAY[g, g + 1, g + 2]::vector FROM generate_series(1, 200) g");
    const keys = await runCli(['keys', 'create', '--data', dir, '--role', 'read_only']);
    expect(keys.code, keys.stderr).toBe(0);
    expect(wrongModes(await modesUnder(dir)), 'after start').toEqual([]);

    await stop(running); // the shutdown writes the vector checkpoint
    expect((await readdir(path.join(dir, 'vectors'))).some((f) => f.endsWith('.hnsw'))).toBe(true);
    const afterCheckpoint = await modesUnder(dir);
    expect([...afterCheckpoint.keys()]).toEqual(expect.arrayContaining(['api-keys.json', 'vectors/manifest.json']));
    expect(wrongModes(afterCheckpoint), 'after the checkpoint').toEqual([]);

    const replayed = await runCli(['replay', '--data', dir]);
    expect(replayed.code, replayed.stderr).toBe(0);
    const afterReplay = await modesUnder(dir);
    expect([...afterReplay.keys()].some((f) => f.startsWith('vectors/') && f.endsWith('.hnsw'))).toBe(true);
    expect(wrongModes(afterReplay), 'after replay').toEqual([]);

    const inspected = await runCli(['inspect', '--data', dir, '--json']);
    const report = JSON.parse(inspected.stdout) as { modes: { dataDirMode: string; tooOpenCount: number; entries: number } };
    expect(report.modes).toMatchObject({ dataDirMode: '0700', tooOpenCount: 0 });
    expect(report.modes.entries).toBe(afterReplay.size);
  });

  it('an empty directory made beforehand becomes 0700 at the first start', async () => {
    const dir = path.join(root, 'premade');
    await mkdir(dir, { mode: 0o755 });
    const running = await serve(serveArgs(dir));
    await stop(running);
    expect(wrongModes(await modesUnder(dir))).toEqual([]);
  });

  it('refuses a directory or a file open to group or others, saying how to fix it; inspect reports it', async () => {
    const dir = path.join(root, 'opened');
    await stop(await serve(serveArgs(dir)));

    await chmod(dir, 0o755);
    expectRefused(await runCli(['serve', ...serveArgs(dir)]), new RegExp(`accessible by group or others \\(it has mode 0755\\).*chmod -R go-rwx ${dir}`));
    const segment = (await readdir(path.join(dir, 'log'))).find((f) => f.endsWith('.log'))!;
    await chmod(dir, 0o700);
    await chmod(path.join(dir, 'log', segment), 0o604);
    expectRefused(await runCli(['serve', ...serveArgs(dir)]), new RegExp(`log/${segment} has mode 0604`));
    expectRefused(await runCli(['replay', '--data', dir]), /chmod -R go-rwx/);
    expectRefused(await runCli(['repair', '--data', dir]), /chmod -R go-rwx/);

    const inspected = await runCli(['inspect', '--data', dir]);
    expect(inspected.code).toBe(0);
    expect(inspected.stdout).toContain('1 open beyond 0700');
    expect(inspected.stdout).toMatch(new RegExp(`log/${segment}\\s+0604`));

    await chmod(path.join(dir, 'log', segment), 0o640);
    expectRefused(await runCli(['serve', ...serveArgs(dir)]), /or allow group read with --data-dir-mode 0750/);
    // The operator's fix works.
    await chmod(path.join(dir, 'log', segment), 0o600);
    await stop(await serve(serveArgs(dir)));
  });

  it('dataDirMode 0750 allows group read, never group write or others', async () => {
    const dir = path.join(root, 'group');
    const running = await serve(serveArgs(dir, ['--data-dir-mode', '0750']));
    await sql(running, 'CREATE TABLE g (id INT PRIMARY KEY)');
    await stop(running);
    const modes = await modesUnder(dir);
    expect(wrongModes(modes, 0o750, 0o640)).toEqual([]);
    expect(modes.get('.')!.mode).toBe(0o750);

    await chmod(dir, 0o750);
    await chmod(path.join(dir, 'svcdb.json'), 0o640);
    await stop(await serve(serveArgs(dir, ['--data-dir-mode', '0750'])));
    expectRefused(await runCli(['serve', ...serveArgs(dir)]), /chmod -R go-rwx/);
    await chmod(path.join(dir, 'svcdb.json'), 0o660);
    expectRefused(await runCli(['serve', ...serveArgs(dir, ['--data-dir-mode', '0750'])]), /svcdb\.json has mode 0660.*chmod -R g-w,o-rwx/);
  });
});
