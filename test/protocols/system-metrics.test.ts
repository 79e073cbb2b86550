import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CpuMeter, cpuPercent, diskUsagePercent, memoryLimitBytes, memoryUsagePercent } from '../../protocols/ops/system-metrics.js';

describe('system metrics', () => {
  it("cpuPercent is CPU time over all cores' wall time", () => {
    const from = { atMs: 0, usage: { user: 0, system: 0 } };
    const to = { atMs: 1000, usage: { user: 1_500_000, system: 500_000 } };
    expect(cpuPercent(from, to, 4)).toBe(50);
    expect(cpuPercent(from, to, 1)).toBe(100);
  });

  it('CpuMeter reads a busy loop as more than zero', () => {
    let now = 0;
    const meter = new CpuMeter(() => now, 1000);
    const until = Date.now() + 50;
    while (Date.now() < until) {
      // burn CPU
    }
    now = 50;
    expect(meter.percent()).toBeGreaterThan(0);
  });

  it('memory is the resident share of the limit', () => {
    expect(memoryUsagePercent(512, 1024)).toBe(50);
    expect(memoryLimitBytes()).toBeGreaterThan(0);
    const real = memoryUsagePercent();
    expect(real).toBeGreaterThan(0);
    expect(real).toBeLessThanOrEqual(100);
  });

  it('disk usage falls back to the nearest existing parent of a data dir not created yet', async () => {
    const existing = await diskUsagePercent(tmpdir());
    const missing = await diskUsagePercent(join(tmpdir(), 'svcdb-not-there', 'deeper'));
    expect(existing).toBeGreaterThan(0);
    expect(missing).toBeCloseTo(existing, 0);
  });
});
