/**
 * A peer process a test starts (a Kafka broker, a kcat mock cluster) and must end itself: spawned
 * so that it dies with the test worker (`setpriv --pdeathsig SIGKILL` where util-linux has it, and
 * an exit hook), its output kept (bounded) for error messages, stopped by its own pid only.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';

const OUTPUT_CHARS_MAX = 64 * 1024;

export interface Exited {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface OwnedProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Resolves when the process has exited (never rejects). */
  readonly exited: Promise<Exited>;
  /** The last OUTPUT_CHARS_MAX characters of stdout and stderr, interleaved. */
  output(): string;
  /** Calls `listener` with each chunk of stdout and stderr as it comes. */
  onOutput(listener: (chunk: string) => void): void;
  isRunning(): boolean;
}

let setprivUsable: boolean | undefined;

function hasSetpriv(): boolean {
  if (setprivUsable === undefined) {
    const probe = spawnSync('setpriv', ['--pdeathsig', 'SIGKILL', '--', 'true'], { stdio: 'ignore' });
    setprivUsable = probe.status === 0;
  }
  return setprivUsable;
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A worker that exits without stopping its peers (a failed beforeAll) still takes them along.
  process.on('exit', () => {
    for (const child of running) if (child.pid !== undefined) killQuietly(child.pid, 'SIGKILL');
  });
}

function killQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** Spawns `command args` in `cwd`; throws when it cannot be started at all. */
export function spawnOwned(command: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): OwnedProcess {
  const [file, argv] = hasSetpriv() ? ['setpriv', ['--pdeathsig', 'SIGKILL', '--', command, ...args]] : [command, [...args]];
  const child = spawn(file, argv, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error(`could not start ${command}`);
  const pid = child.pid;
  installExitHook();
  running.add(child);
  let output = '';
  const listeners: Array<(chunk: string) => void> = [];
  const collect = (chunk: Buffer): void => {
    const text = chunk.toString('utf8');
    output = (output + text).slice(-OUTPUT_CHARS_MAX);
    for (const listener of listeners) listener(text);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  let alive = true;
  const exited = new Promise<Exited>((resolve) => {
    child.on('error', (error) => {
      output += `\n[spawn error] ${error.message}`;
      alive = false;
      running.delete(child);
      resolve({ code: null, signal: null });
    });
    child.on('exit', (code, signal) => {
      alive = false;
      running.delete(child);
      resolve({ code, signal });
    });
  });
  return {
    child,
    pid,
    exited,
    output: () => output,
    onOutput: (listener) => void listeners.push(listener),
    isRunning: () => alive,
  };
}

/** SIGTERM, then SIGKILL when it has not exited after `termTimeoutMs`; resolves once it exited. */
export async function stopOwned(owned: OwnedProcess, termTimeoutMs: number): Promise<Exited> {
  if (!owned.isRunning()) return owned.exited;
  killQuietly(owned.pid, 'SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), termTimeoutMs)));
  const first = await Promise.race([owned.exited, timedOut]);
  clearTimeout(timer);
  if (first === 'timeout') killQuietly(owned.pid, 'SIGKILL');
  return owned.exited;
}

/** SIGKILL at once (a crash); resolves once it exited. */
export async function killOwned(owned: OwnedProcess): Promise<Exited> {
  if (owned.isRunning()) killQuietly(owned.pid, 'SIGKILL');
  return owned.exited;
}

/** True when `command` runs (`command versionFlag` exits 0). */
export function commandRuns(command: string, versionFlag: string): boolean {
  const probe = spawnSync(command, [versionFlag], { stdio: 'ignore', timeout: 30_000 });
  return probe.error === undefined && probe.status === 0;
}
