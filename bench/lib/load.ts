/**
 * The hot-paths bench's load generator (autocannon, in the bench process) and its small pure
 * helpers: ratios, the slope of an RSS curve, a process's RSS from /proc.
 */
import { readFileSync } from 'node:fs';
import autocannon, { type Request } from 'autocannon';

export interface Load {
  readonly reqPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly requests: number;
  /** Requests that got no answer within autocannon's 10 s (only when tolerated; else the run is void). */
  readonly timeouts: number;
}

/** What a request looks like before setupRequest fills it in (path and body may come from it). */
export type RequestShape = Omit<Request, 'path'> & { path?: string };

/**
 * autocannon with `connections` for `durationS` seconds, after `warmupS` seconds not measured. Any non-2xx answer, error or timeout
 * voids the run (throws): requests/s of refusals measure nothing.
 */
export async function load(
  name: string,
  url: string,
  request: RequestShape,
  connections: number,
  durationS: number,
  warmupS = 0,
  tolerateTimeouts = false,
): Promise<Load> {
  // The warm-up (JIT, caches, connection pools) is not measured, but a failure in it voids the run too.
  if (warmupS > 0) await load(`${name} (warm-up)`, url, request, connections, warmupS);
  const result = await autocannon({ url, connections, duration: durationS, requests: [request as Request] });
  const failed = result.non2xx + (tolerateTimeouts ? 0 : result.errors + result.timeouts);
  if (failed > 0) {
    const byStatus = Object.entries(result.statusCodeStats ?? {})
      .map(([status, s]) => `${status}: ${(s as { count: number }).count}`)
      .join(', ');
    throw new Error(
      `${name}: ${result.non2xx} non-2xx answers, ${result.errors} errors, ${result.timeouts} timeouts of ${result.requests.total} (${byStatus}); the run is void`,
    );
  }
  return {
    reqPerSec: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
    timeouts: result.timeouts,
  };
}

/** a / b with 2 decimals, null when there is no b (a skipped baseline). */
export function ratioOf(a: number, b: number | null | undefined): number | null {
  if (b === null || b === undefined || b === 0) return null;
  return Math.round((a / b) * 100) / 100;
}

/** Least-squares slope of y over x (MiB per minute when x is minutes); 0 with fewer than 2 points. */
export function slope(points: readonly (readonly [number, number])[]): number {
  if (points.length < 2) return 0;
  const n = points.length;
  const meanX = points.reduce((s, [x]) => s + x, 0) / n;
  const meanY = points.reduce((s, [, y]) => s + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - meanX) * (y - meanY);
    den += (x - meanX) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** Resident set size of `pid` in MiB (VmRSS of /proc/pid/status). */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
  if (!match) throw new Error(`no VmRSS for pid ${pid}`);
  return Math.round((Number(match[1]) / 1024) * 10) / 10;
}
