import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SETTINGS, type SettingSpec } from '../../core/settings.js';

/** Rows of the settings table in docs/configuration.md, keyed by the first cell (`key`). */
function documentedRows(): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of readFileSync('docs/configuration.md', 'utf8').split('\n')) {
    if (!line.startsWith('| `')) continue;
    const cells = line
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((c) => c.trim().replaceAll('`', ''));
    const key = cells[0];
    if (key !== undefined) rows.set(key, cells);
  }
  return rows;
}

describe('docs/configuration.md', () => {
  it('lists every setting of core/settings.ts with its flag, environment variable and default', () => {
    const rows = documentedRows();
    expect([...rows.keys()].sort()).toEqual(SETTINGS.map((s) => s.key).sort());
    for (const spec of SETTINGS as readonly SettingSpec[]) {
      const [, flag, env, defaultCell] = rows.get(spec.key) ?? [];
      expect(flag, spec.key).toContain(`--${spec.flag}`);
      expect(env, spec.key).toBe(spec.env);
      const expected = spec.defaultValue === undefined ? 'unset' : String(spec.defaultValue);
      expect(defaultCell?.split(' ')[0], spec.key).toBe(expected);
    }
  });
});
