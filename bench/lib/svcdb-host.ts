/**
 * The svcdb server of the hot-paths bench: one `svcdb serve` child over one data dir. In profile
 * mode each case gets a fresh process on the same data dir, started with --cpu-prof into its own
 * directory, so each case's profile holds that case's work (plus a restart: a few hundred ms).
 */
import { readFileSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sourceLocator, topSelfTime, type CpuProfile, type SelfTime } from './cpu-profile.js';
import { startSvcdbProcess, type SvcdbProcess } from './processes.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export interface SvcdbHost {
  /** The server, restarted (without profiling) when a case or stop() left it stopped. */
  running(): Promise<SvcdbProcess>;
  /** Runs `body` against the server; in profile mode returns the case's top self-time functions as well. */
  forCase<T>(name: string, body: (server: SvcdbProcess) => Promise<T>): Promise<{ value: T; profile: SelfTime[] | null }>;
  /** Stops the server (the data dir stays, e.g. for `svcdb replay`). */
  stop(): Promise<void>;
  readonly dataDir: string;
  /** Stops the server and removes its data dir. */
  close(): Promise<void>;
}

export interface SvcdbHostOptions {
  readonly apiKey: string;
  /** Profile each case into <profileDir>/<case>/ (node --cpu-prof); undefined: no profiles, one process for every case. */
  readonly profileDir: string | undefined;
  /** Functions listed per profile. */
  readonly top: number;
}

async function readProfile(dir: string, top: number): Promise<SelfTime[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile')).sort();
  const newest = files.at(-1);
  if (newest === undefined) throw new Error(`no .cpuprofile in ${dir}`);
  const profile = JSON.parse(readFileSync(path.join(dir, newest), 'utf8')) as CpuProfile;
  return topSelfTime(profile, top, sourceLocator(REPO_ROOT));
}

/** Starts svcdb over a fresh data dir (kept until close()). */
export async function startSvcdbHost(options: SvcdbHostOptions): Promise<SvcdbHost> {
  let server: SvcdbProcess | null = await startSvcdbProcess(options.apiKey, {}, { keepDataDir: true });
  const dataDir = server.dataDir;
  const stop = async (): Promise<void> => {
    await server?.stop();
    server = null;
  };
  const ensure = async (nodeArgs: readonly string[] = []): Promise<SvcdbProcess> => {
    server ??= await startSvcdbProcess(options.apiKey, {}, { dataDir, nodeArgs, readyTimeoutMs: 600_000 });
    return server;
  };
  return {
    dataDir,
    running: () => ensure(),
    async forCase(name, body) {
      if (options.profileDir === undefined) return { value: await body(await ensure()), profile: null };
      await stop();
      const dir = path.join(options.profileDir, name);
      const profiled = await ensure(['--cpu-prof', `--cpu-prof-dir=${dir}`]);
      let value;
      try {
        value = await body(profiled);
      } finally {
        await stop(); // the profile is written when the process exits
      }
      const profile = await readProfile(dir, options.top);
      return { value, profile };
    },
    stop,
    async close() {
      await stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
