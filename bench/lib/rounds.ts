/**
 * Interleaved measurement for the hot-paths bench: the sides of one case (svcdb, fastify + pg, the
 * fastify hello world or JSON POST) take turns in rounds, so every ratio compares loads taken in the
 * same minutes. This 2-core VM's pace moves within minutes (hello world 43k–62k req/s back to back);
 * a ratio of two loads minutes apart measured the machine as much as the server.
 *
 * Per side: one warm-up, then `rounds` loads whose seconds add up to the side's total; which side
 * goes first rotates from round to round. A side's rate is its requests over its measured seconds
 * (all rounds); its p50 and p99 come from the latency histograms of all its rounds merged
 * (autocannon's own hdr histograms, as its workers are merged), never from averaged percentiles.
 */
import autocannon, { type Request } from 'autocannon';
import { load, ratioOf, type Load, type RequestShape } from './load.js';

/** One side of a case: a server and the request it is loaded with. */
export interface Side {
  readonly name: string;
  readonly url: string;
  readonly request: RequestShape;
}

/** What autocannon returns with `skipAggregateResult` (the fields used here). */
export interface RawRound {
  /** 2xx latencies in ms, an hdr histogram encoded as compressed base64. */
  readonly latencies: string;
  /** Answers received (any status: a non-2xx one voids the load anyway). */
  readonly totalCompletedRequests: number;
  /** Wall seconds from the start to the last sample (10 ms resolution). */
  readonly duration: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly non2xx: number;
  readonly statusCodeStats: Record<string, { count: number }>;
}

/** A side's figures over all its rounds: Load's meanings, plus each round's rate and p99. */
export interface SideFigures extends Load {
  readonly seconds: number;
  readonly roundRates: readonly number[];
  readonly roundP99Ms: readonly number[];
}

/**
 * The seconds of each round: `totalS` split into at most `wanted` whole seconds (autocannon stops a
 * load only at its one-second samples, so a fraction would run to the next whole second), the longer
 * rounds first. Every side gets the same seconds in the same round, so a round's ratio compares
 * loads of equal length. One side alone (BENCH_BASELINES=0) gets one load: nothing to interleave.
 */
export function roundSeconds(totalS: number, wanted: number, sides: number): number[] {
  if (!Number.isInteger(totalS) || totalS < 1) throw new Error(`BENCH_DURATION_S must be a whole number of seconds >= 1, not ${totalS}`);
  if (!Number.isInteger(wanted) || wanted < 1) throw new Error(`BENCH_ROUNDS must be a whole number >= 1, not ${wanted}`);
  const rounds = sides <= 1 ? 1 : Math.min(wanted, totalS);
  const base = Math.floor(totalS / rounds);
  return Array.from({ length: rounds }, (_, i) => base + (i < totalS % rounds ? 1 : 0));
}

/** The order of the sides in round `round`: rotated by `round + offset`, so each side goes first in turn. */
export function roundOrder<T>(sides: readonly T[], round: number, offset = 0): T[] {
  if (sides.length === 0) return [];
  const start = (((round + offset) % sides.length) + sides.length) % sides.length;
  return [...sides.slice(start), ...sides.slice(0, start)];
}

/** autocannon.aggregateResult, which @types/autocannon does not declare. */
const aggregateResult = (
  autocannon as unknown as {
    aggregateResult(results: object[], opts: { url: string }): { latency: { p50: number; p99: number; totalCount: number } };
  }
).aggregateResult;

/**
 * p50 and p99 (ms) of the rounds' latencies together. autocannon.aggregateResult decodes each round's
 * hdr histogram and adds them bucket by bucket: the percentiles of all the requests, as one long load
 * would give them. Only the latencies are handed over: it adds the other fields into the first
 * result's objects (statusCodeStats), and its requests-per-second figures need the live histogram.
 */
export function mergedPercentiles(raw: readonly Pick<RawRound, 'latencies'>[]): { p50: number; p99: number; count: number } {
  const merged = aggregateResult(
    raw.map((r) => ({ latencies: r.latencies, statusCodeStats: {} })),
    { url: 'http://merged' },
  );
  return { p50: merged.latency.p50, p99: merged.latency.p99, count: merged.latency.totalCount };
}

/** One side's rounds merged: requests / measured seconds, percentiles over every request. */
export function mergeRounds(raw: readonly RawRound[]): SideFigures {
  if (raw.length === 0) throw new Error('mergeRounds: no rounds');
  const requests = raw.reduce((sum, r) => sum + r.totalCompletedRequests, 0);
  const seconds = raw.reduce((sum, r) => sum + r.duration, 0);
  const { p50, p99 } = mergedPercentiles(raw);
  return {
    reqPerSec: seconds > 0 ? Math.round(requests / seconds) : 0,
    p50Ms: p50,
    p99Ms: p99,
    requests,
    timeouts: raw.reduce((sum, r) => sum + r.timeouts, 0),
    seconds: Math.round(seconds * 100) / 100,
    roundRates: raw.map((r) => (r.duration > 0 ? Math.round(r.totalCompletedRequests / r.duration) : 0)),
    roundP99Ms: raw.map((r) => mergedPercentiles([r]).p99),
  };
}

/** a / b round by round (2 decimals); null without b (a skipped side). */
export function ratiosPerRound(a: readonly number[], b: readonly number[] | undefined): (number | null)[] | null {
  if (b === undefined) return null;
  return a.map((value, i) => ratioOf(value, b[i]));
}

/** One measured load of a round: autocannon without its aggregation; any non-2xx, error or timeout voids it (throws). */
async function loadRound(name: string, side: Side, connections: number, seconds: number): Promise<RawRound> {
  const raw = (await autocannon({
    url: side.url,
    connections,
    duration: seconds,
    requests: [side.request as Request],
    skipAggregateResult: true,
  })) as unknown as RawRound;
  const failed = raw.non2xx + raw.errors + raw.timeouts;
  if (failed > 0) {
    const byStatus = Object.entries(raw.statusCodeStats)
      .map(([status, s]) => `${status}: ${s.count}`)
      .join(', ');
    throw new Error(
      `${name}: ${raw.non2xx} non-2xx answers, ${raw.errors} errors, ${raw.timeouts} timeouts of ${raw.totalCompletedRequests} (${byStatus}); the run is void`,
    );
  }
  return raw;
}

export interface RoundsOptions {
  readonly connections: number;
  /** Measured seconds per side, all rounds together. */
  readonly totalS: number;
  /** Rounds wanted (fewer when totalS has fewer whole seconds). */
  readonly rounds: number;
  /** Seconds of warm-up per side before the rounds (not measured). */
  readonly warmupS: number;
  /** Rotates the first round's order (the bench passes the case's index, so cases start with different sides). */
  readonly offset?: number;
  /** Told each round's order and rates (progress lines). */
  readonly onRound?: (round: number, order: readonly string[], rates: ReadonlyMap<string, number>) => void;
}

/**
 * Warms each side up once, then runs the rounds: in round r the sides go in roundOrder(sides, r,
 * offset), each for roundSeconds(...)[r] seconds. Answers each side's merged figures by name.
 */
export async function measureInRounds(caseName: string, sides: readonly Side[], options: RoundsOptions): Promise<Map<string, SideFigures>> {
  const seconds = roundSeconds(options.totalS, options.rounds, sides.length);
  const offset = options.offset ?? 0;
  for (const side of roundOrder(sides, 0, offset)) {
    if (options.warmupS > 0) await load(`${caseName} ${side.name} (warm-up)`, side.url, side.request, options.connections, options.warmupS);
  }
  const raw = new Map<string, RawRound[]>(sides.map((s) => [s.name, []]));
  for (const [round, roundS] of seconds.entries()) {
    const order = roundOrder(sides, round, offset);
    const rates = new Map<string, number>();
    for (const side of order) {
      const result = await loadRound(`${caseName} ${side.name} (round ${round + 1})`, side, options.connections, roundS);
      raw.get(side.name)!.push(result);
      rates.set(side.name, result.duration > 0 ? Math.round(result.totalCompletedRequests / result.duration) : 0);
    }
    options.onRound?.(
      round,
      order.map((s) => s.name),
      rates,
    );
  }
  return new Map([...raw].map(([name, rounds]) => [name, mergeRounds(rounds)]));
}
