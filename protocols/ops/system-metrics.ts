import { statfs } from 'node:fs/promises';
import { availableParallelism, totalmem } from 'node:os';
import { dirname, resolve } from 'node:path';

/** Round to two decimals, the precision a percentage on a dashboard needs. */
const pct = (part: number, whole: number): number => (whole > 0 ? Math.round((part / whole) * 10_000) / 100 : 0);

/** Bytes this process may use: the cgroup limit when there is one, else the machine's memory. */
export function memoryLimitBytes(): number {
  const total = totalmem();
  const constrained = process.constrainedMemory();
  return constrained > 0 && constrained < total ? constrained : total;
}

/** Resident memory of this process as a share of memoryLimitBytes(). */
export function memoryUsagePercent(rssBytes: number = process.memoryUsage.rss(), limitBytes: number = memoryLimitBytes()): number {
  return pct(rssBytes, limitBytes);
}

/**
 * Used share of the file system holding `dir`, computed as df does: used / (used + available to
 * unprivileged users). A data dir not created yet is measured at its nearest existing parent.
 */
export async function diskUsagePercent(dir: string): Promise<number> {
  let path = resolve(dir);
  for (;;) {
    try {
      const fs = await statfs(path);
      const used = fs.blocks - fs.bfree;
      return pct(used, used + fs.bavail);
    } catch (error) {
      const parent = dirname(path);
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || parent === path) throw error;
      path = parent;
    }
  }
}

export interface CpuSample {
  readonly atMs: number;
  readonly usage: NodeJS.CpuUsage;
}

/** CPU time used between two samples as a share of all cores' wall time (0..100). */
export function cpuPercent(from: CpuSample, to: CpuSample, cpuCount: number): number {
  const elapsedMicros = (to.atMs - from.atMs) * 1000 * cpuCount;
  const usedMicros = to.usage.user - from.usage.user + (to.usage.system - from.usage.system);
  return Math.min(100, Math.max(0, pct(usedMicros, elapsedMicros)));
}

/**
 * Process CPU over a sliding window: each reading covers the time since the window start, and the
 * window moves on once it spans `windowMs`, so a reading is never over a uselessly short interval
 * except right after start.
 */
export class CpuMeter {
  private windowStart: CpuSample;
  private readonly cpuCount = availableParallelism();

  constructor(
    private readonly nowMs: () => number = Date.now,
    private readonly windowMs = 1000,
  ) {
    this.windowStart = { atMs: this.nowMs(), usage: process.cpuUsage() };
  }

  percent(): number {
    const now: CpuSample = { atMs: this.nowMs(), usage: process.cpuUsage() };
    if (now.atMs <= this.windowStart.atMs) return 0;
    const value = cpuPercent(this.windowStart, now, this.cpuCount);
    if (now.atMs - this.windowStart.atMs >= this.windowMs) this.windowStart = now;
    return value;
  }
}
