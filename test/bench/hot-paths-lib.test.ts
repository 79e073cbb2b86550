import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeVlq, lineMap, sourceLocator, topSelfTime, topTotalTime, type CpuProfile } from '../../bench/lib/cpu-profile.js';
import { MIXED_AGGREGATE, loadStatements, pgTarget, svcdbTarget, type MixedPick } from '../../bench/lib/hot-targets.js';
import { ratioOf, slope } from '../../bench/lib/load.js';

const frame = (functionName: string, url = 'file:///x.js', lineNumber = 0): CpuProfile['nodes'][number]['callFrame'] => ({ functionName, url, lineNumber });

/** root (1) -> idle (2), a (3) -> b (4); samples every 1000 us from startTime 10,000. */
const PROFILE: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)', '') },
    { id: 2, callFrame: frame('(idle)', '') },
    { id: 3, callFrame: frame('a', 'file:///x.js', 9) },
    { id: 4, callFrame: frame('b', 'file:///y.js', 0) },
  ],
  startTime: 10_000,
  samples: [2, 3, 3, 4, 3, 2],
  timeDeltas: [1000, 1000, 1000, 1000, 1000, 1000],
};

describe('cpu profile ranking', () => {
  it('sums self time per function, leaves idle out and gives shares of the busy time', () => {
    expect(topSelfTime([PROFILE], 10)).toEqual([
      { where: 'a (file:///x.js:10)', selfMs: 3, percent: 75 },
      { where: 'b (file:///y.js:1)', selfMs: 1, percent: 25 },
    ]);
  });

  it('adds the profiles of several threads and keeps only `top` functions', () => {
    expect(topSelfTime([PROFILE, PROFILE], 1)).toEqual([{ where: 'a (file:///x.js:10)', selfMs: 6, percent: 75 }]);
  });

  it('counts only the samples inside the window', () => {
    // Sample i is at 10,000 + 1000 * (i + 1): the window [13,500, 15,500] holds samples 3 (b) and 4 (a).
    expect(topSelfTime([PROFILE], 10, undefined, { fromUs: 13_500, toUs: 15_500 })).toEqual([
      { where: 'a (file:///x.js:10)', selfMs: 1, percent: 50 },
      { where: 'b (file:///y.js:1)', selfMs: 1, percent: 50 },
    ]);
  });
});

describe('cpu profile total time', () => {
  // root (1) -> idle (2); root -> f (3) -> g (4) -> f (5, recursion) -> lib (6)
  const tree: CpuProfile = {
    nodes: [
      { id: 1, callFrame: frame('(root)', ''), children: [2, 3] },
      { id: 2, callFrame: frame('(idle)', '') },
      { id: 3, callFrame: frame('f', 'file:///own.js', 0), children: [4] },
      { id: 4, callFrame: frame('g', 'file:///own.js', 5), children: [5] },
      { id: 5, callFrame: frame('f', 'file:///own.js', 0), children: [6] },
      { id: 6, callFrame: frame('lib', 'file:///lib.js', 0) },
    ],
    startTime: 0,
    samples: [2, 3, 4, 6, 6],
    timeDeltas: [1000, 1000, 1000, 1000, 1000],
  };
  const locate = (f: { url: string; lineNumber: number }): string => `${f.url.slice('file:///'.length)}:${f.lineNumber + 1}`;

  it('counts a function once per sample however often it recurs, callees included, over the kept frames', () => {
    expect(topTotalTime([tree], 10, locate, (where) => where.startsWith('own.js'))).toEqual([
      { where: 'f (own.js:1)', selfMs: 4, percent: 100 },
      { where: 'g (own.js:6)', selfMs: 3, percent: 75 },
    ]);
  });

  it('keeps to the window', () => {
    expect(topTotalTime([tree], 1, locate, (where) => where.startsWith('own.js'), { fromUs: 3500, toUs: 5000 })).toEqual([
      { where: 'f (own.js:1)', selfMs: 2, percent: 100 },
    ]);
  });
});

describe('source maps', () => {
  let dir = '';
  afterEach(async () => {
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  it('decodes base64 VLQ segments', () => {
    expect(decodeVlq('AAAA')).toEqual([0, 0, 0, 0]);
    expect(decodeVlq('AACA')).toEqual([0, 0, 1, 0]);
    expect(decodeVlq('D')).toEqual([-1]);
    expect(decodeVlq('gB')).toEqual([16]);
    expect(() => decodeVlq('!')).toThrow();
  });

  it('maps each generated line to its first segment, source lines relative from line to line', () => {
    // line 0 -> source 0 line 0; line 1 unmapped; line 2 -> source 0 line 3; line 3 -> source 1 line 2
    expect(lineMap('AAAA;;AAGA;ACDA')).toEqual([{ source: 0, line: 0 }, undefined, { source: 0, line: 3 }, { source: 1, line: 2 }]);
  });

  it('names a dist file by its .ts source and line, relative to the repository', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'svcdb-cpu-profile-'));
    const js = path.join(dir, 'dist', 'core', 'x.js');
    await mkdir(path.dirname(js), { recursive: true });
    await writeFile(js, 'a\nb\nc\n');
    await writeFile(`${js}.map`, JSON.stringify({ version: 3, sources: ['../../core/x.ts'], mappings: 'AAAA;AAEA;AAEA' }));
    const locate = sourceLocator(dir);
    expect(locate(frame('f', pathToFileURL(js).href, 1))).toBe(path.join('core', 'x.ts') + ':3');
    expect(locate(frame('f', 'node:internal/x', 4))).toBe('node:internal/x:5');
  });
});

describe('load helpers', () => {
  it('ratioOf rounds to 2 decimals and gives null without a baseline', () => {
    expect(ratioOf(1, 3)).toBe(0.33);
    expect(ratioOf(5, null)).toBeNull();
    expect(ratioOf(5, 0)).toBeNull();
  });

  it('slope is the least-squares slope', () => {
    expect(slope([])).toBe(0);
    expect(slope([[0, 5]])).toBe(0);
    expect(
      slope([
        [0, 1],
        [1, 3],
        [2, 5],
      ]),
    ).toBeCloseTo(2);
    expect(
      slope([
        [0, 100],
        [1, 101],
        [2, 99],
        [3, 100],
      ]),
    ).toBeCloseTo(-0.2);
  });
});

describe('hot-paths requests', () => {
  it('load statements cover every row once, in statements of at most 10,000 rows', () => {
    const statements = loadStatements(25_000, 7);
    expect(statements).toEqual([
      "INSERT INTO t SELECT g, 'name-' || g, g * 1.5 FROM generate_series(1, 10000) g",
      "INSERT INTO t SELECT g, 'name-' || g, g * 1.5 FROM generate_series(10001, 20000) g",
      "INSERT INTO t SELECT g, 'name-' || g, g * 1.5 FROM generate_series(20001, 25000) g",
      'INSERT INTO s SELECT g, g % 1000 FROM generate_series(1, 7) g',
    ]);
  });

  it('the mixed load sends each kind to the same operation on both servers', () => {
    let kind: 0 | 1 | 2 = 0;
    const pick: MixedPick = { kind: () => kind, newId: () => 11, existingId: () => 3, n: () => 500 };
    const setup = (shape: ReturnType<ReturnType<typeof svcdbTarget>['mixed']>): Record<string, unknown> =>
      (shape.setupRequest as (req: object) => Record<string, unknown>)({ headers: {} });
    for (const [target, rows, query] of [
      [svcdbTarget('http://x'), '/api/v1/tables/s/rows', '/api/v1/query'],
      [pgTarget('http://y'), '/tables/s/rows', '/query'],
    ] as const) {
      kind = 0;
      expect(setup(target.mixed(pick))).toMatchObject({ method: 'POST', path: rows, body: JSON.stringify({ row: { id: 11, n: 500 } }) });
      kind = 1;
      expect(setup(target.mixed(pick))).toMatchObject({ method: 'GET', path: `${rows}/3` });
      kind = 2;
      expect(setup(target.mixed(pick))).toMatchObject({ method: 'POST', path: query, body: JSON.stringify({ sql: MIXED_AGGREGATE, params: [500] }) });
    }
  });
});
