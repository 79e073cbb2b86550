/**
 * A throwaway PostgreSQL 15 cluster for the baselines: initdb into a fresh temp dir, `postgres` on
 * a free port of 127.0.0.1 with fsync and synchronous_commit on (each commit waits for its WAL
 * flush, as svcdb's acknowledgement waits for fdatasync), removed on stop.
 *
 * initdb refuses to run as root: the bench then runs initdb and postgres with the uid/gid of the
 * `postgres` user (else `nobody`), as `runuser -u postgres` would, and owns the temp dir to it.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort, trackStop } from './processes.js';

const PG_BIN = process.env.BENCH_PG_BIN ?? '/usr/lib/postgresql/15/bin';

export interface PostgresCluster {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  /** How it runs, for the report (e.g. "as postgres (uid 101): the bench runs as root"). */
  readonly runAs: string;
  stop(): Promise<void>;
}

interface Identity {
  readonly uid: number;
  readonly gid: number;
  readonly name: string;
}

/** The unprivileged user to run PostgreSQL as when this process is root; undefined when it is not root. */
function unprivilegedIdentity(): Identity | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    try {
      const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
      return { uid, gid, name };
    } catch {
      // no such user: try the next one
    }
  }
  throw new Error('running as root and neither the postgres nor the nobody user exists: initdb would refuse');
}

/** Whether the PostgreSQL binaries are there (else the bench skips the baseline and says so). */
export function postgresAvailable(): boolean {
  return existsSync(path.join(PG_BIN, 'initdb')) && existsSync(path.join(PG_BIN, 'postgres'));
}

async function waitForPostgres(port: number, child: ChildProcess, identity: Identity | undefined, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`postgres exited with ${child.exitCode ?? child.signalCode}`);
    try {
      execFileSync(path.join(PG_BIN, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-q'], identity ? { uid: identity.uid, gid: identity.gid } : {});
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`postgres did not accept connections within ${timeoutMs} ms`);
}

/** initdb + postgres in a temp dir; stop() shuts it down (fast shutdown, SIGINT) and removes the dir. */
export async function startPostgres(log: (line: string) => void): Promise<PostgresCluster> {
  const identity = unprivilegedIdentity();
  const root = await mkdtemp(path.join(os.tmpdir(), 'svcdb-bench-pg-'));
  const dataDir = path.join(root, 'data');
  const ids = identity ? { uid: identity.uid, gid: identity.gid } : {};
  if (identity) chownSync(root, identity.uid, identity.gid);
  const user = identity?.name ?? os.userInfo().username;
  try {
    log(`initdb ${dataDir}${identity ? ` as ${identity.name}` : ''}`);
    execFileSync(path.join(PG_BIN, 'initdb'), ['-D', dataDir, '-A', 'trust', '-U', user, '-E', 'UTF8', '--no-sync'], {
      ...ids,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw error;
  }
  const port = await freePort();
  const args = ['-D', dataDir, '-p', String(port), '-k', root, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=on', '-c', 'synchronous_commit=on'];
  const child = spawn(path.join(PG_BIN, 'postgres'), args, { ...ids, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exitOnBenchExit = (): void => void child.kill('SIGINT');
  process.on('exit', exitOnBenchExit);
  let stopped: Promise<void> | undefined;
  let untrack = (): void => undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      untrack();
      process.off('exit', exitOnBenchExit);
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGINT'); // fast shutdown: the baseline's data is thrown away anyway
        await exited;
      }
      await rm(root, { recursive: true, force: true });
    })();
    return stopped;
  };
  // A SIGTERM of the bench (stopAllProcesses) shuts PostgreSQL down and removes its dir too.
  const untrackStop = trackStop(stop);
  untrack = (): void => void untrackStop();
  try {
    await waitForPostgres(port, child, identity, 30_000);
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n${stderr}`);
  }
  const version = (await readFile(path.join(dataDir, 'PG_VERSION'), 'utf8')).trim();
  const runAs = identity ? `PostgreSQL ${version} as ${identity.name} (uid ${identity.uid}): the bench runs as root` : `PostgreSQL ${version} as ${user}`;
  return { host: '127.0.0.1', port, user, runAs, stop };
}
