import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
/** dist/bin/svcdb.js, from dist/bench/lib/. */
const SVCDB_BIN = path.join(here, '..', '..', 'bin', 'svcdb.js');
/** The node options svcdb serve is started with everywhere else. */
const SERVE_NODE_ARGS = ['--max-semi-space-size=16'];

/** A free TCP port on 127.0.0.1 (bound and released: a child process then listens on it). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface ChildServer {
  readonly url: string;
  stop(): Promise<void>;
}

async function waitForHttp(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${url}: the process exited with ${child.exitCode ?? child.signalCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch (error) {
      if (!(error instanceof TypeError)) throw error; // fetch failed: not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

/** Says on stderr when `child` exits without stop() having been called (e.g. killed from outside), so a failed request has its cause. */
function reportUnexpectedExit(child: ChildProcess, name: string): void {
  child.once('exit', (code, signal) => {
    if (!stopping.has(child)) process.stderr.write(`${name} (pid ${child.pid}) exited unexpectedly: ${signal ?? `code ${code}`}\n`);
  });
}
const stopping = new WeakSet<ChildProcess>();

/** The stop() of every child started and not yet stopped (stopAllProcesses). */
const live = new Set<() => Promise<void>>();
/** Children still running: SIGTERMed when this process exits, so none outlives it. */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGTERM');
});
/** Set by stopAllProcesses: no child may start after it. */
let closing = false;

function spawnChild(args: string[], env?: NodeJS.ProcessEnv): ChildProcess {
  if (closing) throw new Error('stopping every child process: no new one starts');
  // Its log (svcdb serve: warnings and errors only) goes to the bench's stderr, so a failure mid-run shows its cause.
  const child = spawn(process.execPath, args, { ...(env ? { env } : {}), stdio: ['ignore', process.stderr, 'inherit'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/**
 * stop(): one SIGTERM, then the cleanup; a second call waits for the first (a second SIGTERM would
 * make svcdb skip its graceful shutdown). Registered in `live` from the start.
 */
function stopper(child: ChildProcess, after: () => Promise<void> = async () => undefined): () => Promise<void> {
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      stopping.add(child);
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await after();
      live.delete(stop);
    })();
    return stopped;
  };
  live.add(stop);
  return stop;
}

/**
 * Registers the stop() of something this module did not start (e.g. PostgreSQL, which runs as
 * another user), so stopAllProcesses stops it too; the returned function unregisters it.
 */
export function trackStop(stop: () => Promise<void>): () => void {
  live.add(stop);
  return () => live.delete(stop);
}

/** Stops every child this process started and has not stopped yet, those still starting too (e.g. on SIGTERM). */
export async function stopAllProcesses(): Promise<void> {
  closing = true;
  await Promise.all([...live].map((stop) => stop().catch(() => undefined)));
}

export interface SvcdbProcessOptions {
  /** Serve this data dir (e.g. a previous run's, to restart on the same data); default: a fresh temp dir. */
  readonly dataDir?: string;
  /** Leave the data dir in place on stop (default: removed); a given dataDir is always kept. */
  readonly keepDataDir?: boolean;
  /** How long to wait for /api/v1/ready (default 60 s; a restart replaying a big log may need more). */
  readonly readyTimeoutMs?: number;
  /** node options before the script (e.g. `--cpu-prof`, which NODE_OPTIONS refuses). */
  readonly nodeArgs?: readonly string[];
}

export interface SvcdbProcess extends ChildServer {
  readonly dataDir: string;
  /** The server's process id (e.g. to read its CPU time from /proc). */
  readonly pid: number;
}

/** `svcdb serve` in its own process (its own core), over a fresh data dir (or `options.dataDir`), durable commits. */
export async function startSvcdbProcess(apiKey: string, env: Record<string, string> = {}, options: SvcdbProcessOptions = {}): Promise<SvcdbProcess> {
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'svcdb-bench-')));
  const keep = options.keepDataDir ?? options.dataDir !== undefined;
  const port = await freePort();
  // As `npm start`, the Docker image and the executable's own line start it (docs/configuration.md, Node options).
  const child = spawnChild([...SERVE_NODE_ARGS, ...(options.nodeArgs ?? []), SVCDB_BIN, 'serve'], {
    ...process.env,
    SVC_DATA_DIR: dataDir,
    SVC_HOST: '127.0.0.1',
    SVC_HTTP_PORT: String(port),
    SVC_OPS_PORT: '0',
    SVC_API_KEY: apiKey,
    SVC_LOG_LEVEL: 'warn',
    ...env,
  });
  reportUnexpectedExit(child, 'svcdb serve');
  const url = `http://127.0.0.1:${port}`;
  const stop = stopper(child, async () => {
    if (!keep) await rm(dataDir, { recursive: true, force: true });
  });
  try {
    await waitForHttp(`${url}/api/v1/ready`, child, options.readyTimeoutMs ?? 60_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, dataDir, pid: child.pid!, stop };
}

/** The baseline: fastify hello-world (GET /), a JSON POST (/echo) and an NDJSON stream, in its own process. */
export async function startFastifyBaseline(): Promise<ChildServer> {
  const port = await freePort();
  const child = spawnChild([path.join(here, 'fastify-baseline.js'), String(port)]);
  const url = `http://127.0.0.1:${port}`;
  const stop = stopper(child);
  try {
    await waitForHttp(url, child, 30_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, stop };
}

/** The fastify + pg baseline (pg-baseline.ts) in its own process, against a running PostgreSQL. */
export async function startPgBaseline(pgHost: string, pgPort: number, pgUser: string): Promise<ChildServer> {
  const port = await freePort();
  const child = spawnChild([path.join(here, 'pg-baseline.js'), String(port), pgHost, String(pgPort), pgUser]);
  reportUnexpectedExit(child, 'fastify + pg baseline');
  const url = `http://127.0.0.1:${port}`;
  const stop = stopper(child);
  try {
    await waitForHttp(url, child, 30_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, stop };
}

/**
 * Runs `script` (a file of dist/bench/lib/, e.g. a baseline client) in its own process until it
 * exits by itself; rejects when it exits with an error. Stopped by stopAllProcesses like the servers.
 */
export async function runBenchScript(script: string, args: readonly string[], env: Record<string, string> = {}): Promise<void> {
  const child = spawnChild([path.join(here, script), ...args], { ...process.env, ...env });
  const stop = stopper(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const { code, signal } = await exited;
  await stop();
  if (code !== 0) throw new Error(`${script} exited with ${code ?? signal}`);
}

/**
 * Forks `script` (a file of dist/bench/lib/, e.g. a receiver) in its own process with an IPC
 * channel, for a helper that runs until stopped and talks with the bench by messages. stop():
 * SIGTERM, as for the servers; stopAllProcesses stops it too.
 */
export function forkBenchChild(script: string, args: readonly string[] = []): { readonly child: ChildProcess; stop(): Promise<void> } {
  if (closing) throw new Error('stopping every child process: no new one starts');
  const child = fork(path.join(here, script), [...args], { stdio: ['ignore', process.stderr, 'inherit', 'ipc'], execArgv: [] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  reportUnexpectedExit(child, script);
  return { child, stop: stopper(child) };
}

/** Killed (SIGTERM, Ctrl-C): stop every child process this bench started, then exit as killed. */
export function stopChildrenOnSignals(log: (line: string) => void): void {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping the child processes`);
      void stopAllProcesses().finally(() => process.exit(signal === 'SIGTERM' ? 143 : 130));
    });
  }
}
