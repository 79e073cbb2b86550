/**
 * The svcdb server of the hot-paths bench: one `svcdb serve` child over one data dir. In profile
 * mode each case gets a fresh process on the same data dir, started with --cpu-prof into its own
 * directory; only the samples taken while the case ran are ranked (not the restart).
 */
import { readFileSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sourceLocator, topSelfTime, topTotalTime, type CpuProfile, type SelfTime } from './cpu-profile.js';
import { startSvcdbProcess, trackStop, type SvcdbProcess } from './processes.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export interface SvcdbHost {
  /** The server, restarted (without profiling) when a case or stop() left it stopped. */
  running(): Promise<SvcdbProcess>;
  /** Runs `body` against the server; in profile mode returns the case's top self-time functions as well. */
  forCase<T>(name: string, body: (server: SvcdbProcess) => Promise<T>): Promise<{ value: T; profile: CaseProfile | null }>;
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

/** The monotonic clock in microseconds: the clock of a .cpuprofile's timestamps. */
const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);

/** A case's profile: functions by self time, and svcdb's own functions by total time (self + callees). */
export interface CaseProfile {
  readonly self: SelfTime[];
  readonly total: SelfTime[];
}

/** svcdb's own code (not node_modules, not node internals), as the locator names it. */
const OWN_CODE = /^(core|log|projections|query|protocols|sinks|bin)\//;

async function readProfile(dir: string, top: number, window: { fromUs: number; toUs: number }): Promise<CaseProfile> {
  // One file per thread (the main thread, the HNSW worker): ranked together.
  const files = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile'));
  if (files.length === 0) throw new Error(`no .cpuprofile in ${dir}`);
  const profiles = files.map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as CpuProfile);
  const locate = sourceLocator(REPO_ROOT);
  // No sample inside the window would mean the clocks differ on this platform: rank the whole run then (start-up included).
  const within = topSelfTime(profiles, top, locate, window).length > 0 ? window : undefined;
  return {
    self: topSelfTime(profiles, top, locate, within),
    total: topTotalTime(profiles, top, locate, (where) => OWN_CODE.test(where), within),
  };
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
  const close = async (): Promise<void> => {
    untrack();
    await stop();
    await rm(dataDir, { recursive: true, force: true });
  };
  // A SIGTERM of the bench (stopAllProcesses) removes the kept data dir too.
  const untrack = trackStop(close);
  return {
    dataDir,
    running: () => ensure(),
    async forCase(name, body) {
      if (options.profileDir === undefined) return { value: await body(await ensure()), profile: null };
      await stop();
      const dir = path.join(options.profileDir, name);
      const profiled = await ensure(['--cpu-prof', `--cpu-prof-dir=${dir}`]);
      let value;
      // Only the samples taken while the case ran: not the start-up (module loading) nor the shutdown.
      const fromUs = monotonicUs();
      let toUs = fromUs;
      try {
        value = await body(profiled);
        toUs = monotonicUs();
      } finally {
        await stop(); // the profile is written when the process exits
      }
      const profile = await readProfile(dir, options.top, { fromUs, toUs });
      return { value, profile };
    },
    stop,
    close,
  };
}
