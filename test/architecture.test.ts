import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cruise, type ICruiseOptions, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { afterAll, describe, expect, it } from 'vitest';

/** The source folders of svcdb, as ARCHITECTURE.md lays them out. */
const FOLDERS = ['core', 'log', 'projections', 'query', 'protocols', 'sinks', 'bin', 'bench'];

async function run(dirs: string[], options: ICruiseOptions, withTsConfig: boolean): Promise<ICruiseResult> {
  const transpile = withTsConfig ? { tsConfig: extractTSConfig('tsconfig.json') } : {};
  const reported = await cruise(dirs, options, {}, transpile);
  return reported.output as ICruiseResult;
}

const describeViolation = (v: ICruiseResult['summary']['violations'][number]): string =>
  `${v.rule.name}: ${v.from} → ${v.to}${v.cycle ? ` (cycle: ${v.cycle.map((c) => c.name).join(' → ')})` : ''}`;

describe('architecture (.dependency-cruiser.cjs)', () => {
  it('the sources follow core ← log ← projections ← query ← {protocols, sinks} ← bin, without cycles', async () => {
    const options = await extractDepcruiseOptions('./.dependency-cruiser.cjs');
    const result = await run(
      FOLDERS.filter((d) => existsSync(d)),
      options,
      true,
    );
    const errors = result.summary.violations.filter((v) => v.rule.severity === 'error').map(describeViolation);
    const warnings = result.summary.violations.filter((v) => v.rule.severity === 'warn').map(describeViolation);
    if (warnings.length > 0) console.warn(`architecture warnings:\n  ${warnings.join('\n  ')}`);
    expect(errors, `dependency rule violations:\n  ${errors.join('\n  ')}`).toEqual([]);
    expect(result.summary.totalCruised).toBeGreaterThan(10);
  });

  describe('the rules catch what they should', () => {
    let fixture = '';
    afterAll(async () => {
      if (fixture !== '') await rm(fixture, { recursive: true, force: true });
    });

    it('flags each kind of violation in a small fixture tree', async () => {
      fixture = await mkdtemp(join(tmpdir(), 'svcdb-arch-'));
      const files: Record<string, string> = {
        'core/a.ts': "import { p } from '../protocols/p.js';\nexport const a = p;\n",
        'log/l.ts': "import { q } from '../query/q.js';\nexport const l = q;\n",
        'query/q.ts': 'export const q = 1;\n',
        'protocols/p.ts': "import { s } from '../sinks/s.js';\nexport const p = s;\n",
        'protocols/index.ts': "export { p } from './p.js';\n",
        'sinks/s.ts': 'export const s = 1;\n',
        'sinks/t.ts': "import { p } from '../protocols/index.js';\nexport const t = p;\n",
        'projections/x.ts': "import { y } from './y.js';\nexport const x = 1;\nexport const xy = y;\n",
        'projections/y.ts': "import { x } from './x.js';\nexport const y = x;\n",
        'bin/b.ts': "import { q } from '../query/q.js';\nexport const b = q;\n",
      };
      for (const [path, text] of Object.entries(files)) {
        await mkdir(join(fixture, dirname(path)), { recursive: true });
        await writeFile(join(fixture, path), text);
      }
      const options = await extractDepcruiseOptions('./.dependency-cruiser.cjs');
      const { tsConfig: _ignored, ...rest } = options;
      const result = await run(['core', 'log', 'projections', 'query', 'protocols', 'sinks', 'bin'], { ...rest, baseDir: fixture }, false);
      const names = new Set(result.summary.violations.map((v) => v.rule.name));
      expect([...names].sort()).toEqual(
        ['core-imports-no-folder', 'log-not-to-right', 'no-circular', 'protocols-not-to-sinks', 'sinks-not-to-protocols', 'through-index'].sort(),
      );
      // bin → query/q.ts is allowed by layering but reaches past query's index.
      expect(result.summary.violations.some((v) => v.rule.name === 'through-index' && v.from === 'bin/b.ts')).toBe(true);
    });
  });
});
