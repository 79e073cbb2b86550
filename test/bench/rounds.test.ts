import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as hdr from 'hdr-histogram-js';
import { afterEach, describe, expect, it } from 'vitest';
import { measureInRounds, mergeRounds, mergedPercentiles, ratiosPerRound, roundOrder, roundSeconds, type RawRound } from '../../bench/lib/rounds.js';

/** An encoded latency histogram as autocannon makes one (its settings), holding `values` (ms). */
function encoded(values: readonly number[]): string {
  const histogram = hdr.build({
    bitBucketSize: 64,
    autoResize: true,
    lowestDiscernibleValue: 1,
    highestTrackableValue: 10_000,
    numberOfSignificantValueDigits: 5,
  });
  for (const value of values) histogram.recordValue(value);
  const text = hdr.encodeIntoCompressedBase64(histogram);
  histogram.destroy();
  return text;
}

function raw(values: readonly number[], requests: number, duration: number): RawRound {
  return { latencies: encoded(values), totalCompletedRequests: requests, duration, errors: 0, timeouts: 0, non2xx: 0, statusCodeStats: {} };
}

describe('rounds: seconds and order', () => {
  it('splits the measured seconds into whole-second rounds, longer first, one load for one side', () => {
    expect(roundSeconds(10, 5, 3)).toEqual([2, 2, 2, 2, 2]);
    expect(roundSeconds(5, 5, 2)).toEqual([1, 1, 1, 1, 1]);
    expect(roundSeconds(5, 3, 3)).toEqual([2, 2, 1]);
    // No round shorter than a second: fewer rounds than asked.
    expect(roundSeconds(3, 5, 2)).toEqual([1, 1, 1]);
    // svcdb alone (BENCH_BASELINES=0): one load of all the seconds.
    expect(roundSeconds(10, 5, 1)).toEqual([10]);
    expect(() => roundSeconds(2.5, 2, 2)).toThrow(/BENCH_DURATION_S/);
    expect(() => roundSeconds(5, 0, 2)).toThrow(/BENCH_ROUNDS/);
  });

  it('rotates which side goes first, so over as many rounds as sides each side holds each place once', () => {
    const sides = ['svcdb', 'pg', 'hello'];
    const orders = [0, 1, 2].map((round) => roundOrder(sides, round));
    expect(orders).toEqual([
      ['svcdb', 'pg', 'hello'],
      ['pg', 'hello', 'svcdb'],
      ['hello', 'svcdb', 'pg'],
    ]);
    for (const side of sides) expect(new Set(orders.map((order) => order.indexOf(side)))).toEqual(new Set([0, 1, 2]));
    // The offset (the case's place in the run) shifts the start: case 1 of two sides starts with pg.
    expect(roundOrder(['svcdb', 'pg'], 0, 1)).toEqual(['pg', 'svcdb']);
    expect(roundOrder(['svcdb', 'pg'], 1, 1)).toEqual(['svcdb', 'pg']);
    expect(roundOrder(['svcdb'], 3, 1)).toEqual(['svcdb']);
  });
});

describe('rounds: merging', () => {
  it('takes p50 and p99 over every request of every round, not an average of the rounds', () => {
    const fast = Array.from({ length: 990 }, () => 1);
    const slow = Array.from({ length: 20 }, () => 40);
    const rounds = [raw(fast, 990, 1), raw(slow, 20, 1)];
    // Ranks 991-1010 of 1010 are 40 ms: the 99th percentile (rank 1000) is one of them.
    expect(mergedPercentiles(rounds)).toEqual({ p50: 1, p99: 40, count: 1010 });
    // The same as one histogram that saw every request.
    expect(mergedPercentiles([raw([...fast, ...slow], 1010, 2)])).toEqual({ p50: 1, p99: 40, count: 1010 });
    const merged = mergeRounds(rounds);
    expect(merged.roundP99Ms).toEqual([1, 40]);
    expect(merged.p99Ms).toBe(40); // the rounds' mean p99 would say 20.5
    expect(merged.p50Ms).toBe(1);
  });

  it('a side rate is its requests over its measured seconds, each round its own rate', () => {
    const merged = mergeRounds([raw([1], 3000, 1), raw([1], 1000, 1), raw([1], 4000, 2)]);
    expect(merged.requests).toBe(8000);
    expect(merged.seconds).toBe(4);
    expect(merged.reqPerSec).toBe(2000); // not the mean of the rounds' rates (2333)
    expect(merged.roundRates).toEqual([3000, 1000, 2000]);
    expect(() => mergeRounds([])).toThrow();
  });

  it('gives each round its own ratio, null without the other side', () => {
    expect(ratiosPerRound([3000, 1000, 2000], [6000, 4000, 2000])).toEqual([0.5, 0.25, 1]);
    expect(ratiosPerRound([3000], undefined)).toBeNull();
    expect(ratiosPerRound([3000, 1000], [0, 3000])).toEqual([null, 0.33]);
  });
});

describe('rounds: against real servers', () => {
  const servers: http.Server[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
  });

  /** A server answering `status`; `log` gets its name each time requests move to it from another server. */
  async function server(name: string, log: string[], status = 200): Promise<string> {
    const s = http.createServer((req, res) => {
      if (log.at(-1) !== name) log.push(name);
      req.resume();
      req.on('end', () => res.writeHead(status, { 'content-type': 'application/json' }).end('{"ok":true}'));
    });
    servers.push(s);
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  }

  it('warms each side up once, then runs the sides in turn, rotated each round, and merges each side', async () => {
    const log: string[] = [];
    const sides = await Promise.all(
      ['a', 'b', 'c'].map(async (name) => ({ name, url: await server(name, log), request: { method: 'GET' as const, path: '/' } })),
    );
    const told: string[][] = [];
    const figures = await measureInRounds('test', sides, {
      connections: 2,
      totalS: 2,
      rounds: 2,
      warmupS: 1,
      onRound: (_round, order) => told.push([...order]),
    });
    // Warm-ups a b c, round 1 a b c, round 2 b c a: what the servers saw, in that order.
    expect(log).toEqual(['a', 'b', 'c', 'a', 'b', 'c', 'b', 'c', 'a']);
    expect(told).toEqual([
      ['a', 'b', 'c'],
      ['b', 'c', 'a'],
    ]);
    for (const name of ['a', 'b', 'c']) {
      const side = figures.get(name)!;
      expect(side.roundRates).toHaveLength(2);
      expect(side.seconds).toBeGreaterThanOrEqual(2);
      expect(side.seconds).toBeLessThan(3);
      expect(side.requests).toBeGreaterThan(0);
      expect(side.reqPerSec).toBe(Math.round(side.requests / side.seconds));
    }
  }, 30_000);

  it('one side alone (BENCH_BASELINES=0) gets one load of all the seconds', async () => {
    const log: string[] = [];
    const figures = await measureInRounds('test', [{ name: 'svcdb', url: await server('svcdb', log), request: { method: 'GET', path: '/' } }], {
      connections: 2,
      totalS: 2,
      rounds: 5,
      warmupS: 0,
    });
    const svcdb = figures.get('svcdb')!;
    expect(svcdb.roundRates).toHaveLength(1);
    expect(svcdb.seconds).toBeGreaterThanOrEqual(2);
    expect(svcdb.seconds).toBeLessThan(3);
  }, 30_000);

  it('a non-2xx answer in a round voids the case', async () => {
    const log: string[] = [];
    const sides = [
      { name: 'ok', url: await server('ok', log), request: { method: 'GET' as const, path: '/' } },
      { name: 'refusing', url: await server('refusing', log, 503), request: { method: 'GET' as const, path: '/' } },
    ];
    await expect(measureInRounds('test', sides, { connections: 1, totalS: 1, rounds: 1, warmupS: 0 })).rejects.toThrow(/refusing.*503.*void/);
  }, 30_000);
});
