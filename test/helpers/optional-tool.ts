/**
 * System tools a few tests need (.ci/run's DEBIAN_TOOLS installs each). A test that cannot run
 * without one skips with `[needs <command>]` in its title: the only skip .ci/run accepts, and only
 * when that command is missing after it tried to install it. Any other skip fails CI.
 */
import { spawnSync } from 'node:child_process';

/** True when `command args` runs and exits 0. */
export function hasTool(command: string, args: readonly string[] = ['--version']): boolean {
  return spawnSync(command, args, { stdio: 'ignore' }).status === 0;
}

/** The title tag of a test that skips without `command` (see .ci/run). */
export function needs(command: string): string {
  return `[needs ${command}]`;
}
