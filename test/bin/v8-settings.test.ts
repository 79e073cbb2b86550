/**
 * bin/v8-settings.ts: `svcdb serve` turns V8's allocation-site pretenuring off, however node was
 * started. Seen through V8's own trace: a preloaded probe (test/helpers/pretenure-probe-preload.ts)
 * makes the allocations that get a site pretenured, and `--trace-pretenuring-statistics` prints
 * "pretenuring:" lines only while pretenuring is on. The first test shows the probe does that in a
 * plain node process, so the second's silence is svcdb's setting.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLI, serve } from '../helpers/cli.js';

const PROBE = resolve('dist/test/helpers/pretenure-probe-preload.js');
const NODE_ARGS = ['--trace-pretenuring-statistics', `--import=${PROBE}`];
const READY = 'pretenure probe ready';
const DONE = 'pretenure probe done';

/** Resolves with everything on stdout once it includes `line`. */
function untilPrinted(child: ChildProcess, stdout: () => string, line: string): Promise<string> {
  return new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`the probe did not print "${line}"; stdout: ${stdout().slice(-2000)}`)), 20_000);
    const check = (): void => {
      if (!stdout().includes(line)) return;
      clearTimeout(timer);
      child.stdout?.off('data', check);
      done(stdout());
    };
    child.stdout?.on('data', check);
    check();
  });
}

/** Sends the probe its signal once its handler is in place; resolves with everything on stdout once it is done. */
async function probe(child: ChildProcess, stdout: () => string): Promise<string> {
  await untilPrinted(child, stdout, READY);
  child.kill('SIGUSR2');
  return untilPrinted(child, stdout, DONE);
}

describe('V8 settings of svcdb serve', () => {
  let dataDir = '';
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    for (const file of [CLI, PROBE]) if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` first (\`npm test\` does)`);
    dataDir = await mkdtemp(join(tmpdir(), 'svcdb-v8-settings-'));
  });
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('the probe gets a site pretenured in a plain node process (V8 traces it)', async () => {
    const child = spawn(process.execPath, [...NODE_ARGS, '-e', 'setTimeout(() => {}, 30000)'], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    const out = await probe(child, () => stdout);
    expect(out).toMatch(/pretenuring:/);
  });

  it('svcdb serve runs with allocation-site pretenuring off', async () => {
    const server = await serve(['--host', '127.0.0.1', '--port', '0', '--ops-port', '0', '--data', join(dataDir, 'serve')], { nodeArgs: NODE_ARGS });
    children.push(server.child);
    const out = await probe(server.child, server.stdout);
    expect(out.split('\n').filter((line) => line.includes('pretenuring:'))).toEqual([]);
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
  });
});
