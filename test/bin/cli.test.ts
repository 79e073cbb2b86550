/**
 * End-to-end tests of the `svcdb` executable: the built dist/bin/svcdb.js (npm test builds it
 * first), run as a child process against a temporary data directory.
 * SVCDB_CLI may point at another build of the same file.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SETTINGS } from '../../core/settings.js';

import { CLI, freePort, lines, runCli, serve } from '../helpers/cli.js';

describe('svcdb CLI', () => {
  let dataDir = '';
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (\`npm test\` does)`);
    dataDir = await mkdtemp(join(tmpdir(), 'svcdb-cli-e2e-'));
  });
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('--help documents every command and every setting', async () => {
    const result = await runCli(['--help']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    for (const command of ['serve', 'replay', 'inspect', 'repair', 'help']) expect(result.stdout).toContain(`  ${command}`);
    for (const spec of SETTINGS) {
      expect(result.stdout).toContain(`--${spec.flag}`);
      expect(result.stdout).toContain(spec.env);
      expect(result.stdout).toContain(spec.doc);
    }
  });

  it('--version prints the version', async () => {
    const result = await runCli(['--version']);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe('7.0.0');
  });

  it('an unknown flag is one line on stderr and exit code 2', async () => {
    const result = await runCli(['--colour', 'blue']);
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toEqual(["svcdb: unknown option '--colour' (see svcdb --help)"]);
    expect(result.stdout).toBe('');
  });

  it('a bad config file is one line and exit code 1', async () => {
    const file = join(dataDir, 'bad.json');
    await writeFile(file, '{"httpPort": 80');
    const result = await runCli(['--config', file]);
    expect(result.code).toBe(1);
    expect(lines(result.stderr)).toHaveLength(1);
    expect(result.stderr).toMatch(/^svcdb: config file .*bad\.json is not valid JSON: /);

    const viaEnv = await runCli([], { SVC_CONFIG: join(dataDir, 'missing.json') });
    expect(viaEnv.code).toBe(1);
    expect(lines(viaEnv.stderr)).toEqual([`svcdb: config file ${join(dataDir, 'missing.json')} does not exist (--config / SVC_CONFIG)`]);
  });

  it('an invalid setting value is one line naming where it came from', async () => {
    const result = await runCli([], { SVC_HTTP_PORT: 'eighty' });
    expect(result.code).toBe(1);
    expect(lines(result.stderr)).toEqual(['svcdb: SVC_HTTP_PORT must be an integer, got "eighty"']);
  });

  it('serve on port 0 logs one URL line, answers /api/v1/live, and exits 0 on SIGTERM', async () => {
    const server = await serve(['--host', '127.0.0.1', '--port', '0', '--ops-port', '0', '--data', join(dataDir, 'serve')]);
    children.push(server.child);
    expect(server.listening.httpUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.listening.opsUrl).toBeNull();
    const urlLines = lines(server.stdout()).filter((l) => l.includes(server.listening.httpUrl));
    expect(urlLines).toHaveLength(1);

    const live = await fetch(`${server.listening.httpUrl}/api/v1/live`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ alive: true });

    server.child.kill('SIGTERM');
    const finished = await server.exited;
    expect(finished.code).toBe(0);
    expect(finished.stderr).not.toMatch(/\n\s+at /);
  });

  it('serve answers the ops port and stops on SIGINT', async () => {
    const opsPort = await freePort();
    const server = await serve(['--host', '127.0.0.1', '--port', '0', '--ops-port', String(opsPort), '--data', join(dataDir, 'serve')]);
    children.push(server.child);
    expect(server.listening.opsUrl).toBe(`http://127.0.0.1:${opsPort}`);
    const health = await fetch(`${server.listening.opsUrl}/health`);
    expect(health.status).toBe(200);
    server.child.kill('SIGINT');
    expect((await server.exited).code).toBe(0);
  });

  describe('with a taken port', () => {
    let blocker: Server;
    let port = 0;
    beforeAll(async () => {
      blocker = createServer();
      await new Promise<void>((done) => blocker.listen(0, '127.0.0.1', () => done()));
      port = (blocker.address() as { port: number }).port;
    });
    afterAll(async () => {
      await new Promise((done) => blocker.close(done));
    });

    it('serve exits non-zero with one line naming the port and the setting', async () => {
      const result = await runCli(['serve', '--host', '127.0.0.1', '--port', String(port), '--ops-port', '0', '--data', join(dataDir, 'taken')]);
      expect(result.code).toBe(1);
      const errorLines = lines(result.stderr).filter((l) => l.startsWith('svcdb: '));
      expect(errorLines).toEqual([`svcdb: port ${port} is already in use (SVC_HTTP_PORT / --port); choose another or stop the process using it`]);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    });
  });

  it('inspect of a data dir that does not exist is one line and exit code 1', async () => {
    const result = await runCli(['inspect', '--data', join(dataDir, 'nothing-here')]);
    expect(result.code).toBe(1);
    expect(lines(result.stderr)).toHaveLength(1);
    expect(result.stderr).toMatch(/^svcdb: /);
  });
});
