/** Running the built `svcdb` executable (dist/bin/svcdb.js; npm test builds it first). */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';

export const CLI = resolve(process.env['SVCDB_CLI'] ?? 'dist/bin/svcdb.js');

/** The environment without any SVC_* variable of the machine running the tests. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('SVC_')) env[name] = value;
  return { ...env, ...extra };
}

export interface Finished {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function runCli(args: string[], env: Record<string, string> = {}, timeoutMs = 30_000): Promise<Finished> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`svcdb ${args.join(' ')} did not exit within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
  });
}

export interface Serving {
  readonly child: ChildProcess;
  readonly listening: { httpUrl: string; opsUrl: string | null; msg: string };
  readonly exited: Promise<Finished>;
  stdout(): string;
}

/**
 * Start `svcdb serve`; resolve once it logged its URL line. `wrapper` runs it under another
 * program (e.g. strace and its options); `nodeArgs` go to node before the script; `env` adds SVC_* settings.
 */
export function serve(
  args: string[],
  options: { wrapper?: readonly string[]; nodeArgs?: readonly string[]; env?: Record<string, string> } = {},
): Promise<Serving> {
  return new Promise((resolvePromise, reject) => {
    const command = [...(options.wrapper ?? []), process.execPath, ...(options.nodeArgs ?? []), CLI, 'serve', ...args];
    const child = spawn(command[0]!, command.slice(1), { env: cleanEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let settled = false;
    const exited = new Promise<Finished>((done) => {
      child.on('close', (code, signal) => done({ code, signal, stdout, stderr }));
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`svcdb serve did not log its URL line in time; stdout: ${stdout} stderr: ${stderr}`));
    }, 30_000);
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
      for (const line of stdout.split('\n')) {
        if (settled || !line.startsWith('{')) continue;
        const entry = JSON.parse(line) as { msg?: string; httpUrl?: string; opsUrl?: string | null };
        if (typeof entry.httpUrl === 'string') {
          settled = true;
          clearTimeout(timer);
          resolvePromise({ child, listening: entry as Serving['listening'], exited, stdout: () => stdout });
        }
      }
    });
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    void exited.then((f) => {
      if (!settled) {
        clearTimeout(timer);
        reject(new Error(`svcdb serve exited (${f.code}) before listening: ${f.stderr}`));
      }
    });
  });
}

/**
 * SIGTERM, then SIGKILL if the server has not exited after `graceMs`: a server stuck in a long
 * synchronous piece of work (a regex match) never gets to its SIGTERM handler.
 */
export async function stopEvenIfStuck(serving: Serving, graceMs = 5000): Promise<Finished> {
  serving.child.kill('SIGTERM');
  const stuck = setTimeout(() => serving.child.kill('SIGKILL'), graceMs);
  try {
    return await serving.exited;
  } finally {
    clearTimeout(stuck);
  }
}

/** A port that was free a moment ago (the ops port cannot be 0: 0 turns it off). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', () => done()));
  const { port } = probe.address() as { port: number };
  await new Promise((done) => probe.close(done));
  return port;
}

export const lines = (text: string): string[] => text.split('\n').filter((l) => l !== '');
